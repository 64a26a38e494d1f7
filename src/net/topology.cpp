#include "net/topology.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>

#include "common/log.hpp"
#include "net/allgather.hpp"
#include "weft/errors.hpp"

namespace weft::net {
namespace {

std::string make_job_id() {
  std::random_device rd;
  const uint64_t t = std::chrono::steady_clock::now().time_since_epoch().count();
  const uint64_t r = (uint64_t(rd()) << 32) ^ rd();
  const uint64_t mix = r ^ (t * 0x9E3779B97F4A7C15ull) ^ (uint64_t(::getpid()) << 40);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(mix));
  return buf;
}

}  // namespace

std::vector<int> split_nodes(const std::vector<int>& physical_of_rank, int virtual_nodes) {
  // Ranks of each physical node, ascending; physical nodes ordered by their lowest rank.
  std::map<int, std::vector<int>> members;  // key: label
  for (size_t r = 0; r < physical_of_rank.size(); ++r)
    members[physical_of_rank[r]].push_back(static_cast<int>(r));
  std::vector<std::vector<int>> groups;
  for (auto& [label, ranks] : members) groups.push_back(ranks);
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.front() < b.front(); });

  std::vector<int> node_of_rank(physical_of_rank.size());
  int next = 0;
  for (const auto& g : groups) {
    const int n = static_cast<int>(g.size());
    const int blocks = std::min(virtual_nodes, n);
    // Block b gets ranks [b*n/blocks, (b+1)*n/blocks): contiguous and as even as possible.
    for (int b = 0; b < blocks; ++b) {
      for (int i = b * n / blocks; i < (b + 1) * n / blocks; ++i) node_of_rank[g[i]] = next + b;
    }
    next += blocks;
  }
  return node_of_rank;
}

std::string Topology::describe(int r) const {
  std::string s = "rank " + std::to_string(r);
  if (r >= 0 && static_cast<size_t>(r) < host_names.size() && !host_names[r].empty())
    s += " on host " + host_names[r];
  return s;
}

Topology discover_topology(MPI_Comm world, const Config& cfg) {
  const int64_t vn = cfg.get_int("virtual_nodes", 1);
  if (vn < 1 || vn > (1 << 20)) {
    throw ConfigError("virtual_nodes (WEFT_VIRTUAL_NODES) must be a positive integer, got " +
                      std::to_string(vn));
  }
  Topology t;
  MPI_Comm_rank(world, &t.rank);
  MPI_Comm_size(world, &t.size);

  // The physical node's label: the lowest world rank sharing memory with us.
  MPI_Comm shared;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, t.rank, MPI_INFO_NULL, &shared);
  int label = t.rank;
  MPI_Allreduce(&t.rank, &label, 1, MPI_INT, MPI_MIN, shared);
  MPI_Comm_free(&shared);
  std::vector<int> physical(t.size);
  MPI_Allgather(&label, 1, MPI_INT, physical.data(), 1, MPI_INT, world);

  t.node_of_rank = split_nodes(physical, static_cast<int>(vn));
  t.host_of_rank = std::move(physical);
  t.node = t.node_of_rank[t.rank];
  t.num_nodes = *std::max_element(t.node_of_rank.begin(), t.node_of_rank.end()) + 1;
  for (int r = 0; r < t.size; ++r) {
    if (t.node_of_rank[r] == t.node) {
      if (r == t.rank) t.local_index = static_cast<int>(t.local_ranks.size());
      t.local_ranks.push_back(r);
    }
  }

  char id[17] = {0};
  if (t.rank == 0) {
    const std::string s = make_job_id();
    std::copy(s.begin(), s.end(), id);
  }
  MPI_Bcast(id, 16, MPI_CHAR, 0, world);
  t.job_id = id;
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = 0;
  t.host_names = allgather_bytes(world, host);
  WEFT_LOG(Debug) << "net: rank " << t.rank << " on node " << t.node << "/" << t.num_nodes
                  << " local " << t.local_index << "/" << t.local_ranks.size() << " job "
                  << t.job_id;
  return t;
}

}  // namespace weft::net
