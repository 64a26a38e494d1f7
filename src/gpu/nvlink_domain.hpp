// The NVLink domain of this node: the set of nodes joined by NVLink (one GB200/GB300 NVL72 rack).
// Placement groups with the NVLINK_DOMAIN strategy keep all bundles inside one domain.
//
// Sources, first that answers wins:
//   1. config `nvlink_domain` (WEFT_NVLINK_DOMAIN / --weft-nvlink-domain): this node's domain,
//      any integer or string. An explicit setting beats detection, so that a user can correct a
//      wrong fabric and tests can simulate racks with virtual nodes.
//   2. config `topology_file`: the rule for this node's hostname or node index (topology_file.hpp).
//   3. NVML fabric info (cluster UUID + clique id), when the driver reports a completed fabric.
//   4. default: the node is its own domain, "node-<index>".
#pragma once

#include <string>
#include <string_view>

#include "common/config.hpp"
#include "gpu/nvml_fabric.hpp"

namespace weft::gpu {

struct NvlinkDomain {
  std::string name;    // equal names = same domain, across all nodes of the job
  std::string source;  // "config", "topology_file", "nvml" or "default"
  std::string note;    // why the earlier sources did not answer (for logs and `weft status`)
};

// `hostname` and `node_index` identify this node (virtual nodes share a hostname but not an
// index). `probe` is the NVML reader; tests pass a fake one to drive the decision.
// Throws ConfigError for an empty `nvlink_domain` or a bad/unreadable topology file.
NvlinkDomain resolve_nvlink_domain(const Config& config, std::string_view hostname, int node_index,
                                   const FabricProbe& probe = probe_nvml_fabric);

// The default name of a node's own domain.
std::string default_domain_name(int node_index);

}  // namespace weft::gpu
