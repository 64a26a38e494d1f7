// Placement groups: bundles of resources reserved together, atomically, under a strategy; tasks
// and actors then run inside them.
//   auto pg = weft::placement_group({{{"CPU", 1}, {"GPU", 1}}, {{"CPU", 1}, {"GPU", 1}}},
//                                   weft::Strategy::StrictPack);
//   if (!pg.wait(std::chrono::seconds(10))) std::cerr << pg.state().reason;
//   weft::task(f).options({.placement_group = pg, .bundle_index = 0}).remote();
//   weft::remove_placement_group(pg);
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace weft {

// PACK: bundles together where they fit (consecutive bundles on one node), else spill over.
// SPREAD: a different node per bundle where possible. STRICT_PACK: all on one node.
// STRICT_SPREAD: every bundle on its own node. NVLINK_DOMAIN: all inside one NVLink domain, on
// as few nodes as possible.
enum class Strategy { Pack, Spread, StrictPack, StrictSpread, NvlinkDomain };

enum class PlacementGroupState { Pending, Created, Infeasible, Removed };
const char* to_string(PlacementGroupState s);  // "PENDING", "CREATED", ...

struct PlacementGroupOptions {
  std::string name;  // shown in messages and `weft list placement-groups`
};

struct PlacementGroupStatus {
  PlacementGroupState state = PlacementGroupState::Pending;
  std::string reason;  // why PENDING or INFEASIBLE, as a sentence
};

// Where one bundle lives.
struct BundleInfo {
  int bundle = -1;
  int rank = -1;
  int node = -1;
  std::vector<int> gpu_ids;  // device ids reserved for the bundle on its rank
  int nvlink_domain = -1;
};

// A handle to a group; copies refer to the same group. The default handle refers to none.
class PlacementGroup {
 public:
  PlacementGroup() = default;
  explicit PlacementGroup(uint64_t id) : id_(id) {}

  // Waits until the group is CREATED (true) or `timeout` passes; false also when the group is
  // INFEASIBLE or REMOVED. Never throws for the group's state: state() says why.
  template <class Rep, class Period>
  bool wait(std::chrono::duration<Rep, Period> timeout) const {
    return wait_for(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout));
  }
  PlacementGroupStatus state() const;
  // Bundle → rank → node → GPU ids → NVLink domain. Empty unless CREATED.
  std::vector<BundleInfo> bundles() const;
  // Same as weft::remove_placement_group(*this).
  void remove() const;

  uint64_t id() const { return id_; }
  bool valid() const { return id_ != 0; }
  friend bool operator==(const PlacementGroup&, const PlacementGroup&) = default;

  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& id_;
  }

 private:
  bool wait_for(std::chrono::nanoseconds timeout) const;
  uint64_t id_ = 0;
};

// Asks the head to reserve `bundles` (resource name → amount each) under `strategy`. Returns at
// once; the group is PENDING until every bundle is reserved. A group that this job can never
// host is INFEASIBLE at once, with the reason (wait() returns false, state() says why).
PlacementGroup placement_group(std::vector<std::map<std::string, double>> bundles,
                               Strategy strategy, PlacementGroupOptions options = {});

// Releases the group's bundles. Tasks and actors running in it finish; later submissions to it
// fail with InfeasibleError. Removing twice is harmless.
void remove_placement_group(const PlacementGroup& pg);

// Inside a task or actor: the GPU device ids it was given (its bundle's devices, or the rank's
// devices it was granted). Empty outside tasks and for work that asked for no GPU.
std::vector<int> assigned_gpus();

}  // namespace weft
