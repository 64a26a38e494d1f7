#include "core/nvlink_domains.hpp"

#include <mpi.h>
#include <unistd.h>

#include <map>
#include <string>

#include "common/log.hpp"
#include "gpu/nvlink_domain.hpp"
#include "net/allgather.hpp"

namespace weft::core {

void assign_nvlink_domains(const Config& cfg, const net::Topology& topo,
                           std::vector<sched::RankInfo>& ranks) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  gpu::NvlinkDomain mine = gpu::resolve_nvlink_domain(cfg, host, topo.node);
  if (topo.local_index == 0)
    WEFT_LOG(Debug) << "node " << topo.node << " is in NVLink domain '" << mine.name << "' ("
                    << mine.source << (mine.note.empty() ? "" : "; " + mine.note) << ")";
  std::vector<std::string> all = net::allgather_bytes(MPI_COMM_WORLD, mine.name);
  std::map<std::string, int> ids;
  for (int i = 0; i < topo.size && i < static_cast<int>(ranks.size()); ++i) {
    auto [it, fresh] = ids.emplace(all[i], static_cast<int>(ids.size()));
    ranks[i].nvlink_domain = it->second;
  }
}

}  // namespace weft::core
