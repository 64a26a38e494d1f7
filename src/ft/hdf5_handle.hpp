// Small RAII types over HDF5's C API for the checkpoint file: one owner per identifier, and a
// guard that keeps HDF5 from printing its error stack while checkpoint code runs and hands the
// stack's innermost message to our own error instead.
#pragma once

#include <hdf5.h>

#include <string>

namespace weft::ft {

// Owns one HDF5 identifier and closes it with the matching H5?close.
class H5Handle {
 public:
  H5Handle() = default;
  H5Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~H5Handle() { close(); }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  H5Handle(H5Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = H5I_INVALID_HID; }
  H5Handle& operator=(H5Handle&& o) noexcept {
    if (this != &o) {
      close();
      id_ = o.id_;
      close_ = o.close_;
      o.id_ = H5I_INVALID_HID;
    }
    return *this;
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  // Closes now; false if the close failed (closing a file flushes it, so that failure counts).
  bool close() {
    bool ok = true;
    if (id_ >= 0) ok = close_(id_) >= 0;
    id_ = H5I_INVALID_HID;
    return ok;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

// While alive, HDF5 prints nothing on this thread (its automatic error printing is per thread in
// thread-safe builds); the previous handler comes back on destruction, so code elsewhere in the
// process (the store's spill thread, a user's own HDF5 calls) keeps whatever it had set.
class QuietHdf5 {
 public:
  QuietHdf5();
  ~QuietHdf5();
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

  // The innermost entry of this thread's HDF5 error stack ("file write failed: ... errno = 28,
  // error message = 'No space left on device'"), or "" when the stack is empty; clears the stack.
  static std::string take_error();

 private:
  H5E_auto2_t old_func_ = nullptr;
  void* old_data_ = nullptr;
};

}  // namespace weft::ft
