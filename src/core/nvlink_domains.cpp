#include "core/nvlink_domains.hpp"

#include <mpi.h>
#include <unistd.h>

#include <map>
#include <string>

#include "common/log.hpp"
#include "gpu/nvlink_domain.hpp"

namespace weft::core {

void assign_nvlink_domains(const Config& cfg, const net::Topology& topo,
                           std::vector<sched::RankInfo>& ranks) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  gpu::NvlinkDomain mine = gpu::resolve_nvlink_domain(cfg, host, topo.node);
  if (topo.local_index == 0)
    WEFT_LOG(Debug) << "node " << topo.node << " is in NVLink domain '" << mine.name << "' ("
                    << mine.source << (mine.note.empty() ? "" : "; " + mine.note) << ")";
  int len = static_cast<int>(mine.name.size());
  std::vector<int> lens(topo.size), offs(topo.size);
  MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int i = 0; i < topo.size; ++i) {
    offs[i] = total;
    total += lens[i];
  }
  std::string all(total, '\0');
  MPI_Allgatherv(mine.name.data(), len, MPI_CHAR, all.data(), lens.data(), offs.data(), MPI_CHAR,
                 MPI_COMM_WORLD);
  std::map<std::string, int> ids;
  for (int i = 0; i < topo.size && i < static_cast<int>(ranks.size()); ++i) {
    std::string name = all.substr(offs[i], lens[i]);
    auto [it, fresh] = ids.emplace(name, static_cast<int>(ids.size()));
    ranks[i].nvlink_domain = it->second;
  }
}

}  // namespace weft::core
