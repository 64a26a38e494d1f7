#include "ft/build_id.hpp"

#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>

namespace weft::ft {
namespace {

// The NT_GNU_BUILD_ID note of the first object dl_iterate_phdr reports: the main program.
int find_build_id(dl_phdr_info* info, size_t, void* data) {
  auto* out = static_cast<std::string*>(data);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) nh;
      std::memcpy(&nh, p, sizeof nh);
      const char* name = p + sizeof nh;
      const char* desc = name + ((nh.n_namesz + 3) & ~3u);
      if (desc + nh.n_descsz > end) break;
      if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        for (ElfW(Word) k = 0; k < nh.n_descsz; ++k) {
          char hex[3];
          std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(desc[k]));
          *out += hex;
        }
        return 1;
      }
      p = desc + ((nh.n_descsz + 3) & ~3u);
    }
  }
  return 1;  // only the main program counts
}

std::string compute() {
  std::string id;
  dl_iterate_phdr(find_build_id, &id);
  if (!id.empty()) return id;
  struct stat st {};
  if (::stat("/proc/self/exe", &st) == 0) {
    return "exe-" + std::to_string(st.st_size) + "-" +
           std::to_string(static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL +
                          st.st_mtim.tv_nsec);
  }
  return "unknown";
}

}  // namespace

const std::string& current_build_id() {
  static const std::string id = compute();
  return id;
}

}  // namespace weft::ft
