#include "sched/pg_ledger.hpp"

#include "common/check.hpp"

namespace weft::sched {

PgLedger::PgLedger(int rank, ResourceSet total, std::vector<int> gpu_ids)
    : rank_(rank), total_(std::move(total)), avail_(total_), gpus_(gpu_ids) {
  WEFT_CHECK(total_.units("GPU") <= static_cast<int64_t>(gpu_ids.size()) * ResourceSet::kUnit)
      << "rank " << rank << " declares " << total_.str() << " but has " << gpu_ids.size()
      << " GPU device id(s)";
}

std::string PgLedger::describe_missing(const ResourceSet& need) const {
  for (const auto& [name, u] : need) {
    if (u > avail_.units(name)) {
      return "rank " + std::to_string(rank_) + " has " + name.str() + ": " +
             ResourceSet::format_units(avail_.units(name)) + " free, " +
             ResourceSet::format_units(u) + " needed";
    }
  }
  return "rank " + std::to_string(rank_) + ": " + gpus_.why_not();
}

PgLedger::Prepared PgLedger::prepare(uint64_t pg, int bundle, const ResourceSet& need) {
  if (auto it = bundles_.find({pg, bundle}); it != bundles_.end()) {
    return Prepared{true, "", it->second.grant.device_ids()};
  }
  if (!need.fits_in(avail_)) return Prepared{false, describe_missing(need), {}};
  std::optional<GpuGrant> g = gpus_.allocate(need.units(ResourceName::gpu()));
  if (!g) return Prepared{false, describe_missing(need), {}};
  avail_ -= need;
  Bundle b{need, {}, *g, GpuAllocator(*g), false};
  auto ids = g->device_ids();
  bundles_.emplace(std::make_pair(pg, bundle), std::move(b));
  return Prepared{true, "", std::move(ids)};
}

bool PgLedger::commit(uint64_t pg) {
  bool any = false;
  for (auto it = bundles_.lower_bound({pg, INT32_MIN});
       it != bundles_.end() && it->first.first == pg; ++it) {
    it->second.committed = true;
    any = true;
  }
  return any;
}

int PgLedger::rollback(uint64_t pg) {
  int n = 0;
  for (auto it = bundles_.lower_bound({pg, INT32_MIN});
       it != bundles_.end() && it->first.first == pg;) {
    if (it->second.committed) {
      ++it;
      continue;
    }
    avail_ += it->second.reserved;
    gpus_.release(it->second.grant);
    it = bundles_.erase(it);
    ++n;
  }
  return n;
}

int PgLedger::remove(uint64_t pg) {
  int n = 0;
  for (auto it = bundles_.lower_bound({pg, INT32_MIN});
       it != bundles_.end() && it->first.first == pg;) {
    // Tasks still running inside the bundle lose their reservation with it (the runtime kills
    // them, as Ray does); their share returns with the bundle's.
    avail_ += it->second.reserved;
    gpus_.release(it->second.grant);
    it = bundles_.erase(it);
    ++n;
  }
  return n;
}

std::optional<GpuGrant> PgLedger::acquire(const ResourceSet& need) {
  if (!need.fits_in(avail_)) return std::nullopt;
  std::optional<GpuGrant> g = gpus_.allocate(need.units(ResourceName::gpu()));
  if (g) avail_ -= need;
  return g;
}

void PgLedger::release(const ResourceSet& need, const GpuGrant& gpus) {
  gpus_.release(gpus);
  avail_ += need;
  WEFT_CHECK(avail_.fits_in(total_))
      << "rank " << rank_ << " released more than it holds: " << avail_.str() << " free of "
      << total_.str();
}

std::optional<GpuGrant> PgLedger::acquire_in_bundle(uint64_t pg, int bundle,
                                                    const ResourceSet& need) {
  auto it = bundles_.find({pg, bundle});
  if (it == bundles_.end() || !it->second.committed) return std::nullopt;
  Bundle& b = it->second;
  if (!(need + b.used).fits_in(b.reserved)) return std::nullopt;
  std::optional<GpuGrant> g = b.inner.allocate(need.units(ResourceName::gpu()));
  if (g) b.used += need;
  return g;
}

void PgLedger::release_in_bundle(uint64_t pg, int bundle, const ResourceSet& need,
                                 const GpuGrant& gpus) {
  auto it = bundles_.find({pg, bundle});
  if (it == bundles_.end()) return;  // the group was removed meanwhile: nothing to give back
  it->second.inner.release(gpus);
  it->second.used -= need;
}

bool PgLedger::is_committed(uint64_t pg, int bundle) const {
  auto it = bundles_.find({pg, bundle});
  return it != bundles_.end() && it->second.committed;
}

}  // namespace weft::sched
