// Which build of the program is running, for checkpoint headers: a checkpoint holds an actor's
// serialized state, and only the build that wrote it is known to read that state the same way.
#pragma once

#include <string>

namespace weft::ft {

// The GNU build id of the main executable (the linker's hash of its contents, hex; GCC and Clang
// on Debian emit it by default), read once from the loaded program's ELF notes. Without one, the
// executable's size and modification time ("exe-<size>-<mtime ns>"), which still changes with
// every relink. Every rank of an SPMD job runs the same executable and so gets the same id.
const std::string& current_build_id();

}  // namespace weft::ft
