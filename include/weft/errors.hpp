// Typed errors raised by Weft. Every user-facing failure derives from weft::Error and says what
// happened, where (rank, task or actor) and, where it can, what to do about it.
#pragma once

#include <stdexcept>
#include <string>

namespace weft {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A remote task or actor method threw. Carries the original exception's type and message, the
// function's name and the rank it ran on.
class TaskError : public Error {
 public:
  TaskError(std::string type_name, std::string message, std::string function, int rank)
      : Error(function + " raised " + type_name + " on rank " + std::to_string(rank) + ": " +
              message),
        type_name_(std::move(type_name)),
        message_(std::move(message)),
        function_(std::move(function)),
        rank_(rank) {}
  const std::string& type_name() const { return type_name_; }
  const std::string& message() const { return message_; }
  const std::string& function() const { return function_; }
  int rank() const { return rank_; }

 private:
  std::string type_name_, message_, function_;
  int rank_;
};

class ActorDiedError : public Error {
 public:
  using Error::Error;
};
class ObjectLostError : public Error {
 public:
  using Error::Error;
};
class OwnerDiedError : public Error {
 public:
  using Error::Error;
};
class GetTimeoutError : public Error {
 public:
  using Error::Error;
};
// A request that no rank of the job can ever satisfy (a batch allocation has no autoscaler).
class InfeasibleError : public Error {
 public:
  using Error::Error;
};
// A value could not be encoded or decoded (a message from a different build, a corrupt buffer,
// a type mismatch between caller and callee).
class SerializationError : public Error {
 public:
  using Error::Error;
};
// The node's object store could not hold an object: store, spill space and fallback are all
// exhausted, or the disk is full. The message names the path and the sizes involved.
class ObjectStoreFullError : public Error {
 public:
  using Error::Error;
};
// Spilling or restoring an object failed (I/O error, corrupted or missing spill file).
class SpillError : public Error {
 public:
  using Error::Error;
};
// An actor checkpoint file could not be written (I/O error, full disk: the previous checkpoint is
// then unchanged) or read back (missing, not HDF5, truncated, corrupted, missing attributes, or
// written for another actor class or another build). The message names the file, the reason and
// what to do; kind() lets a restart path tell "no checkpoint yet" from a damaged one.
class CheckpointError : public Error {
 public:
  enum class Kind {
    kWriteFailed,       // I/O error while writing (the previous checkpoint is intact)
    kDiskFull,          // no space or quota while writing (the previous checkpoint is intact)
    kMissing,           // no file at that path
    kNotHdf5,           // the file does not start with HDF5's signature
    kTruncated,         // HDF5 finds the file shorter than it was written
    kDamaged,           // HDF5 cannot open it or its objects (metadata damaged)
    kMissingAttribute,  // a required attribute or the state dataset is absent or malformed
    kCorrupted,         // the state bytes do not match their checksum, or sizes disagree
    kWrongClass,        // written for another actor class
    kWrongBuild,        // written by another build of the program
  };
  CheckpointError(Kind kind, const std::string& file, const std::string& reason,
                  const std::string& advice)
      : Error("checkpoint file " + file + ": " + reason + (advice.empty() ? "" : ". " + advice)),
        kind_(kind),
        file_(file),
        reason_(reason) {}
  Kind kind() const { return kind_; }
  const std::string& file() const { return file_; }
  const std::string& reason() const { return reason_; }

 private:
  Kind kind_;
  std::string file_, reason_;
};
// The job was asked to stop (setting stop_signal) and its job checkpoint is written: thrown by
// weft::checkpoint_point() on the driver. weft::run ends the job with the exit code
// requeue_exit_code on every rank, also when the driver catches this.
class JobStopped : public Error {
 public:
  using Error::Error;
};
// The job's session directory (its control socket, token and spill folders; docs/operations.md)
// could not be made: the message names the folder, the cause and the setting to change.
class SessionDirError : public Error {
 public:
  using Error::Error;
};
// Bad configuration: an unknown or malformed --weft-* flag or WEFT_* variable.
class ConfigError : public Error {
 public:
  using Error::Error;
};

}  // namespace weft
