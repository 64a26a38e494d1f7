#include "core/gpu_resources.hpp"

#include <unistd.h>

#include <climits>

#include "common/log.hpp"
#include "gpu/gpu_discovery.hpp"
#include "net/allgather.hpp"
#include "sched/resource_spec.hpp"

namespace weft::core {
namespace {

// WEFT_RESOURCES naming GPU for this rank (GPU=0 included) replaces what discovery found.
bool gpu_overridden(const Config& cfg, int rank) {
  return sched::resource_spec_sets(cfg.get("resources", ""), rank, "GPU");
}

}  // namespace

gpu::RankGpus plan_local_gpus(const Config& cfg, const net::Topology& topo) {
  gpu::GpuInventory inv = gpu::discover_gpus();
  gpu::RankGpuView mine;
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof host - 1) == 0) mine.host = host;
  for (const auto& d : inv.devices)
    mine.uuids.push_back(d.uuid.empty() ? d.pci_bus_id + "#" + std::to_string(d.index) : d.uuid);
  std::vector<std::string> all = net::allgather_bytes(MPI_COMM_WORLD, mine.to_bytes());
  std::vector<gpu::RankGpuView> views;
  views.reserve(all.size());
  for (const auto& b : all) views.push_back(gpu::RankGpuView::from_bytes(b));
  gpu::RankGpus out = gpu::plan_host_gpus(views, topo.rank, gpu::gpus_per_rank_from(cfg));
  if (inv.devices.empty())
    WEFT_LOG(Debug) << "no GPU: " << (inv.note.empty() ? out.how : inv.note);
  else
    WEFT_LOG(Info) << "GPUs: " << out.how << " (CUDA_VISIBLE_DEVICES="
                   << (inv.cuda_visible_devices.empty() ? "unset" : inv.cuda_visible_devices)
                   << ")";
  return out;
}

void add_local_gpus(const Config& cfg, int rank, const gpu::RankGpus& gpus, sched::ResourceSet& r) {
  if (gpus.gpus > 0 && !gpu_overridden(cfg, rank)) r.set("GPU", gpus.gpus);
}

void set_local_gpu_ids(const Config& cfg, int rank, const gpu::RankGpus& gpus,
                       std::vector<sched::RankInfo>& ranks) {
  if (gpus.gpus > 0 && !gpu_overridden(cfg, rank)) ranks[rank].gpu_ids = gpus.devices;
}

}  // namespace weft::core
