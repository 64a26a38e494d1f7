#include "ft/hdf5_handle.hpp"

namespace weft::ft {

QuietHdf5::QuietHdf5() {
  H5Eget_auto2(H5E_DEFAULT, &old_func_, &old_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  H5Eclear2(H5E_DEFAULT);  // take_error() must see only what checkpoint calls pushed
}

QuietHdf5::~QuietHdf5() {
  H5Eclear2(H5E_DEFAULT);
  H5Eset_auto2(H5E_DEFAULT, old_func_, old_data_);
}

std::string QuietHdf5::take_error() {
  std::string out;
  // Walking upward starts at the innermost call: the one that knows what really failed (the
  // system call and its errno, the checksum that did not match, the truncated end of file).
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* data) -> herr_t {
        if (n == 0 && e->desc != nullptr) *static_cast<std::string*>(data) = e->desc;
        return 0;
      },
      &out);
  H5Eclear2(H5E_DEFAULT);
  return out;
}

}  // namespace weft::ft
