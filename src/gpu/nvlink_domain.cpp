#include "gpu/nvlink_domain.hpp"

#include "common/log.hpp"
#include "gpu/topology_file.hpp"
#include "weft/errors.hpp"

namespace weft::gpu {

std::string default_domain_name(int node_index) { return "node-" + std::to_string(node_index); }

NvlinkDomain resolve_nvlink_domain(const Config& config, std::string_view hostname, int node_index,
                                   const FabricProbe& probe) {
  NvlinkDomain d;
  if (config.has("nvlink_domain")) {
    d.name = config.get("nvlink_domain", "");
    if (d.name.empty() || d.name.find_first_of(" \t\n") != std::string::npos) {
      throw ConfigError("nvlink_domain='" + d.name +
                        "' must be a non-empty name without spaces (WEFT_NVLINK_DOMAIN)");
    }
    d.source = "config";
    return d;
  }
  std::string path = config.get("topology_file", "");
  if (!path.empty()) {
    TopologyMap map = TopologyMap::load(path);
    if (auto name = map.domain_of(hostname, node_index)) {
      d.name = *name;
      d.source = "topology_file";
      return d;
    }
    d.note = "no rule of topology file " + path + " matches host '" + std::string(hostname) +
             "' or node:" + std::to_string(node_index) + "; ";
  }
  if (probe) {
    std::string probe_note, fabric_note;
    std::vector<FabricRecord> records = probe(&probe_note);
    if (auto name = domain_from_fabric(records, &fabric_note)) {
      d.name = *name;
      d.source = "nvml";
      d.note += fabric_note;
      return d;
    }
    d.note += probe_note + (fabric_note.empty() ? "" : "; " + fabric_note);
  }
  d.name = default_domain_name(node_index);
  d.source = "default";
  WEFT_LOG(Debug) << "nvlink domain of node " << node_index << ": " << d.name << " (" << d.note
                  << ")";
  return d;
}

}  // namespace weft::gpu
