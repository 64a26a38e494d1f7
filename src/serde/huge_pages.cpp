// Transparent huge pages for large decode targets (weft/detail/serde_codec.hpp). A vector of
// tens of MiB decoded from the store is a fresh mapping from malloc; faulting it in 4 KiB pages
// costs several times the copy itself (64 MiB: ~36 ms of faults and zeroing beside a ~6.5 ms
// memcpy on the project's machines), and 2 MiB pages cut the faults 512-fold (~8.7 ms in all).
// With THP set to "madvise" (the common distribution default) only an madvise asks for them.
#include <sys/mman.h>

#include <cstdint>

#include "weft/detail/serde_codec.hpp"

namespace weft::serde::detail {

void prefer_huge_pages(void* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end <= begin) return;
  // Advice only: where THP is off or the range is not anonymous memory, the pages stay small.
  (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace weft::serde::detail
