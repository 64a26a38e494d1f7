// weft::nccl_gang (include/weft/nccl_gang.hpp): an NCCL communicator over a placement group's
// members, bootstrapped through Weft itself. Member 0 makes the unique id (gpu::NcclGang) and
// publishes it in a small named actor, "weft.nccl.<group>.<name>"; the other members look the
// name up until it appears and fetch the id; then every member joins on its GPU. One deadline
// covers both steps, so a missing member 0 is a timeout naming what was awaited, not a hang.
// When member 0 cannot make an id (no GPU there), it publishes the reason instead, and the other
// members fail at once with it.
#include <algorithm>
#include <cstring>
#include <optional>
#include <thread>

#include "common/log.hpp"
#include "core/exec_context.hpp"
#include "gpu/gpu_discovery.hpp"
#include "gpu/nccl_gang.hpp"
#include "weft/actor.hpp"
#include "weft/nccl_gang.hpp"
#include "weft/object_ref.hpp"
#include "weft/remote.hpp"
#include "weft/runtime.hpp"

namespace weft::core {

// The published id: 'I' + the id's bytes, or 'E' + why member 0 could not make one.
class GangRendezvous {
 public:
  explicit GangRendezvous(std::vector<char> published) : published_(std::move(published)) {}
  std::vector<char> published() const { return published_; }

 private:
  std::vector<char> published_;
};

}  // namespace weft::core

WEFT_ACTOR(weft::core::GangRendezvous, std::vector<char>);
WEFT_REMOTE(&weft::core::GangRendezvous::published);

namespace weft {
namespace {

using Clock = std::chrono::steady_clock;
using core::GangRendezvous;
using std::chrono::milliseconds;

struct GangCtx {
  uint64_t group;
  int member, size, device = -1;
  std::string key;
  Clock::time_point t0, deadline;

  std::string who() const {
    return "NCCL gang '" + key + "' of placement group " + std::to_string(group) + ": member " +
           std::to_string(member) + " of " + std::to_string(size) +
           (device >= 0 ? " (device " + std::to_string(device) + ", rank " +
                              std::to_string(weft::rank()) + ")"
                        : " (rank " + std::to_string(weft::rank()) + ")");
  }
  long elapsed_ms() const {
    return static_cast<long>(std::chrono::duration_cast<milliseconds>(Clock::now() - t0).count());
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw NcclGangError(who() + ": " + why, group, member, size);
  }
  milliseconds left() const {
    return std::max(milliseconds(1),
                    std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
  }
};

// Member 0: publish the id (or why there is none). The actor is small and CPU-free.
ActorHandle<GangRendezvous> publish(const GangCtx& c, const std::vector<char>& published) {
  try {
    return weft::actor<GangRendezvous>(published).options({.name = c.key}).remote();
  } catch (const Error& e) {
    c.fail(std::string("could not publish the NCCL unique id (is another gang with this name "
                       "still forming? give NcclGangOptions::name): ") +
           e.what());
  }
}

// Other members: the published bytes, once member 0 has published them.
std::vector<char> fetch(const GangCtx& c) {
  auto nap = milliseconds(2);
  for (;;) {
    if (auto h = weft::get_actor<GangRendezvous>(c.key)) {
      try {
        return h->task(&GangRendezvous::published).remote().get(c.left());
      } catch (const GetTimeoutError&) {
        break;
      } catch (const Error& e) {
        // Member 0 removed it after the gang formed without us, or it died: say so.
        c.fail(std::string("could not read the NCCL unique id from member 0: ") + e.what());
      }
    }
    if (Clock::now() >= c.deadline) break;
    std::this_thread::sleep_for(std::min(nap, c.left()));
    nap = std::min(nap * 2, milliseconds(50));
  }
  c.fail("timed out after " + std::to_string(c.elapsed_ms()) +
         " ms waiting for member 0 to publish the NCCL unique id (is member 0 running, and "
         "does it call weft::nccl_gang with the same group and name?)");
}

}  // namespace

struct NcclGang::Impl {
  gpu::NcclGang gang;
  uint64_t group = 0;
};

NcclGang::NcclGang() = default;
NcclGang::~NcclGang() = default;
NcclGang::NcclGang(NcclGang&&) noexcept = default;
NcclGang& NcclGang::operator=(NcclGang&&) noexcept = default;
int NcclGang::member() const { return impl_ ? impl_->gang.member() : -1; }
int NcclGang::size() const { return impl_ ? impl_->gang.size() : 0; }
int NcclGang::device() const { return impl_ ? impl_->gang.device() : -1; }
NcclGang::operator bool() const { return impl_ && static_cast<bool>(impl_->gang); }
void* NcclGang::native_handle() const { return impl_ ? impl_->gang.comm() : nullptr; }

void NcclGang::check(int nccl_result, std::string_view what, milliseconds timeout) const {
  if (!impl_) throw Error("NcclGang::check on an empty gang");
  try {
    impl_->gang.check(nccl_result, what, timeout);
  } catch (const gpu::GangError& e) {
    throw NcclGangError(
        std::string("placement group ") + std::to_string(impl_->group) + ": " + e.what(),
        impl_->group, e.member(), e.gang_size());
  }
}

void NcclGang::abort() {
  if (impl_) impl_->gang.abort();
}

bool nccl_available() { return gpu::built_with_cuda(); }

NcclGang nccl_gang(const PlacementGroup& pg, NcclGangOptions o) {
  if (!pg.valid()) throw Error("weft::nccl_gang: the placement group handle refers to no group");
  if (!nccl_available())
    throw Error(
        "weft::nccl_gang: this Weft was built without NCCL (configure with "
        "-DWEFT_WITH_CUDA=ON where the CUDA toolkit and NCCL are installed)");
  if (o.timeout <= milliseconds(0))
    throw Error("weft::nccl_gang: timeout must be > 0 (got " + std::to_string(o.timeout.count()) +
                " ms)");
  const core::ExecContext* ctx = core::current_exec();
  if (o.member < 0) {
    if (!ctx || !ctx->placement || ctx->placement->pg != pg.id() || ctx->placement->bundle < 0)
      throw Error(
          "weft::nccl_gang: no member given, and this code does not run in a bundle of "
          "placement group " +
          std::to_string(pg.id()) +
          " (run it in an actor or task of the group, or set NcclGangOptions::member)");
    o.member = ctx->placement->bundle;
  }
  if (o.size <= 0) {
    if (pg.state().state != PlacementGroupState::Created)
      throw Error("weft::nccl_gang: placement group " + std::to_string(pg.id()) + " is " +
                  to_string(pg.state().state) + ", so its bundles cannot size the gang");
    o.size = static_cast<int>(pg.bundles().size());
  }
  if (o.member >= o.size)
    throw Error("weft::nccl_gang: member " + std::to_string(o.member) +
                " is out of range for a "
                "gang of " +
                std::to_string(o.size) + " (members are 0.." + std::to_string(o.size - 1) + ")");

  GangCtx c{pg.id(), o.member, o.size};
  c.key = "weft.nccl." + std::to_string(pg.id()) + (o.name.empty() ? "" : "." + o.name);
  c.t0 = Clock::now();
  c.deadline = c.t0 + o.timeout;
  c.device = o.device;
  std::string no_device;  // member 0 publishes it, so the others fail at once too
  if (c.device < 0) {
    std::vector<int> mine = assigned_gpus();
    if (mine.empty())
      no_device =
          "no GPU is assigned to this member (create its actor or task with num_gpus >= 1 "
          "in a bundle with GPUs, or set NcclGangOptions::device)";
    else
      c.device = mine[0];
  }
  if (!no_device.empty() && c.member != 0) c.fail(no_device);

  gpu::NcclGang::UniqueId id;
  std::optional<ActorHandle<GangRendezvous>> rendezvous;
  if (c.member == 0) {
    std::string why = no_device;
    if (why.empty()) {
      try {
        id = gpu::NcclGang::make_unique_id();
      } catch (const Error& e) {
        why = e.what();
      }
    }
    std::vector<char> published(1 + (why.empty() ? id.size() : why.size()));
    published[0] = why.empty() ? 'I' : 'E';
    if (why.empty())
      std::memcpy(published.data() + 1, id.data(), id.size());
    else
      std::memcpy(published.data() + 1, why.data(), why.size());
    // Published even when it failed, so the others fail at once with the reason.
    rendezvous = publish(c, published);
    if (!no_device.empty()) c.fail(no_device);
    if (!why.empty()) c.fail("could not create the NCCL unique id: " + why);
  } else {
    std::vector<char> published = fetch(c);
    if (published.empty() || published[0] != 'I')
      c.fail("member 0 could not create the NCCL unique id: " +
             (published.empty() ? std::string("(nothing published)")
                                : std::string(published.begin() + 1, published.end())));
    id.resize(published.size() - 1);
    std::memcpy(id.data(), published.data() + 1, id.size());
  }

  NcclGang out;
  out.impl_ = std::make_unique<NcclGang::Impl>();
  out.impl_->group = pg.id();
  try {
    out.impl_->gang = gpu::NcclGang::join(id, c.member, c.size, c.device, c.left());
  } catch (const Error& e) {
    if (rendezvous) weft::kill(*rendezvous);
    c.fail(std::string("joining failed after ") + std::to_string(c.elapsed_ms()) +
           " ms: " + e.what());
  }
  // Every member has joined, so nobody needs the published id any more.
  if (rendezvous) weft::kill(*rendezvous);
  WEFT_LOG(Info) << c.who() << ": joined in " << c.elapsed_ms() << " ms";
  return out;
}

}  // namespace weft
