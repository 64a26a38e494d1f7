// The rank's handle on its node's object store (DESIGN §4): who creates and who attaches the
// shared-memory segment, its registration for RMA, the inline/store threshold, and the payload
// type that stands for a value held in the store. Values above `inline_threshold` live here
// instead of travelling inside messages; the producing node holds the primary copy, other nodes
// pull secondaries (object_transfer.cpp).
#pragma once

#include <mpi.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/config.hpp"
#include "net/topology.hpp"
#include "net/transport.hpp"
#include "store/node_store.hpp"
#include "weft/detail/object_state.hpp"

namespace weft::core {

// A value held in the node store of this rank's node. `holder` is the rank whose node has the
// primary copy (remote readers pull from it). Two modes:
//  * unpinned (a primary on this node): data() is not meant to be read directly; open_payload()
//    pins the object only while it is read, so an object nobody reads can be spilled;
//  * pinned (a secondary pulled to this node, or a read lease): the view keeps the bytes in place.
// An owner record frees the primary (and this node's secondary) when the owner's state dies.
class StorePayload final : public detail::Payload {
 public:
  StorePayload(ObjectId id, int holder, size_t size, bool owner_record,
               std::optional<store::ObjectView> view);
  ~StorePayload() override;
  const char* data() const override;  // pins lazily if unpinned (fallback for generic readers)
  size_t size() const override { return size_; }

  const ObjectId& id() const { return id_; }
  int holder() const { return holder_; }
  bool pinned() const { return view_.has_value(); }
  // Owner record, loop thread: `rank` (on another node) was told where the value is and may
  // pull a secondary copy; the owner frees that copy too when the value dies.
  void note_reader(int rank) const;

 private:
  ObjectId id_;
  int holder_;
  size_t size_;
  bool owner_record_;
  mutable std::vector<int32_t> readers_;  // one rank per node that may hold a secondary
  mutable std::once_flag pin_once_;
  mutable std::optional<store::ObjectView> view_;
};

class ObjectStoreClient {
 public:
  // Collective over `world`: the first rank of each node creates the store, everyone else
  // attaches after a barrier, then every rank registers its mapping with the transport.
  // Config: object_store_memory (30 % of physical memory / nodes on this host),
  // object_store_spill_threshold (0.8), spill_limit (0: the disk), inline_threshold (100K),
  // object_store_alloc_timeout_ms (2000), object_store_max_objects (65536).
  // Node folders (spill files) go in `session_dir`, the job's folder on this host (session.hpp).
  static std::unique_ptr<ObjectStoreClient> start(MPI_Comm world, const net::Topology& topo,
                                                  const Config& cfg, net::Transport& transport,
                                                  const std::string& session_dir);
  // Collective: attached ranks detach first, the creator unlinks the segment and the job's spill
  // directory last. With `failed` ranks (they will never reach a barrier) nobody waits: each
  // rank detaches at once, each live creator removes its node's folder, and rank 0 also removes
  // the folders of nodes whose creator failed.
  void close(MPI_Comm world, const std::vector<int>& failed = {});
  ~ObjectStoreClient();

  store::NodeStore& store() { return *store_; }
  // The job's session directory on this host (spill folders, default actor checkpoints).
  const std::string& job_dir() const { return job_dir_; }
  int region() const { return region_; }
  size_t inline_threshold() const { return inline_threshold_; }
  const net::Topology& topology() const { return topo_; }

  // Puts `size` bytes written by `fill` as a primary owned by this rank. Pool or user threads
  // may wait for room (alloc_timeout); the event loop, whose turns carry the heartbeats, must
  // not (`may_wait` false: the room there is now, else a fallback file at once).
  // Throws ObjectStoreFullError / SpillError from the store.
  std::shared_ptr<const detail::Payload> put_primary(const ObjectId& id, size_t size,
                                                     void (*fill)(char*, const void*),
                                                     const void* ctx, bool may_wait = true);

 private:
  ObjectStoreClient(const net::Topology& topo) : topo_(topo) {}
  net::Topology topo_;
  std::unique_ptr<store::NodeStore> store_;
  std::string job_dir_, node_dir_;
  bool default_checkpoints_ = false;  // actor_checkpoint_dir unset: $TMPDIR/weft-<job>/checkpoints
  int region_ = -1;
  size_t inline_threshold_ = 100 * 1024;
};

// The client of the running runtime (null when none).
ObjectStoreClient* store_client();
void set_store_client(ObjectStoreClient* c);

// The bytes of a ready object, readable while the returned pointer lives: inline payloads and
// pinned store payloads are returned as they are; an unpinned store payload is pinned for the
// read (restored from its spill file if needed). Throws ObjectLostError if the node lost it.
std::shared_ptr<const detail::Payload> open_payload(
    const std::shared_ptr<const detail::Payload>& p);

}  // namespace weft::core
