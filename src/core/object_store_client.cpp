#include "core/object_store_client.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "common/log.hpp"
#include "core/event_loop.hpp"
#include "core/inline_budget.hpp"
#include "weft/errors.hpp"

namespace weft::core {
namespace {

std::atomic<ObjectStoreClient*> g_client{nullptr};

size_t physical_memory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? size_t(pages) * size_t(page) : size_t(4) << 30;
}

// Virtual nodes split one host's memory: each node's store gets its share.
int nodes_on_this_host(MPI_Comm world, const net::Topology& topo) {
  MPI_Comm host;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, topo.rank, MPI_INFO_NULL, &host);
  int n = 0;
  MPI_Comm_size(host, &n);
  std::vector<int> nodes(n);
  MPI_Allgather(&topo.node, 1, MPI_INT, nodes.data(), 1, MPI_INT, host);
  MPI_Comm_free(&host);
  return static_cast<int>(std::set<int>(nodes.begin(), nodes.end()).size());
}

}  // namespace

ObjectStoreClient* store_client() { return g_client.load(std::memory_order_acquire); }
void set_store_client(ObjectStoreClient* c) { g_client.store(c, std::memory_order_release); }

StorePayload::StorePayload(ObjectId id, int holder, size_t size, bool owner_record,
                           std::optional<store::ObjectView> view)
    : id_(id), holder_(holder), size_(size), owner_record_(owner_record), view_(std::move(view)) {}

StorePayload::~StorePayload() {
  view_.reset();  // a view must close before the object it pins can go
  ObjectStoreClient* c = store_client();
  if (!owner_record_ || !c) return;  // borrowers never free; after shutdown the creator cleans up
  // Only the owner's record frees, and it dies only once no ref on the owner is left and no
  // borrower holds a credit (the borrow table pins the state until then: refcount.cpp), so no
  // one can ask for the bytes again.
  c->store().remove(id_);
  if (!c->topology().same_node(holder_)) readers_.push_back(holder_);
  if (readers_.empty()) return;
  if (EventLoop* l = current_loop()) {  // the primary, and the secondaries borrowers pulled
    l->post([readers = std::move(readers_), id = id_](EventLoop& loop) {
      for (int r : readers) loop.free_stored(r, id);
    });
  }
}

void StorePayload::note_reader(int rank) const {
  ObjectStoreClient* c = store_client();
  if (!owner_record_ || !c) return;
  const net::Topology& t = c->topology();
  const int node = t.node_of_rank[rank];
  if (t.same_node(rank) || node == t.node_of_rank[holder_]) return;
  for (int r : readers_)
    if (t.node_of_rank[r] == node) return;
  readers_.push_back(rank);
}

const char* StorePayload::data() const {
  std::call_once(pin_once_, [this] {
    if (view_) return;
    ObjectStoreClient* c = store_client();
    if (c) view_ = c->store().get(id_);
    if (!view_) throw ObjectLostError(id_.str() + " is no longer in this node's object store");
  });
  return reinterpret_cast<const char*>(view_->data());
}

std::shared_ptr<const detail::Payload> open_payload(
    const std::shared_ptr<const detail::Payload>& p) {
  auto* sp = dynamic_cast<const StorePayload*>(p.get());
  if (!sp || sp->pinned()) return p;
  ObjectStoreClient* c = store_client();
  std::optional<store::ObjectView> v;
  if (c) v = c->store().get(sp->id());
  if (!v) {
    throw ObjectLostError(sp->id().str() + " is missing from the object store of node " +
                          std::to_string(c ? c->topology().node : -1) +
                          " (freed by its owner, or the store was reset)");
  }
  return std::make_shared<StorePayload>(sp->id(), sp->holder(), sp->size(), false, std::move(v));
}

std::unique_ptr<ObjectStoreClient> ObjectStoreClient::start(MPI_Comm world,
                                                            const net::Topology& topo,
                                                            const Config& cfg,
                                                            net::Transport& transport,
                                                            const std::string& session_dir) {
  std::unique_ptr<ObjectStoreClient> c(new ObjectStoreClient(topo));
  c->inline_threshold_ = static_cast<size_t>(cfg.get_bytes("inline_threshold", 100 * 1024));
  inline_budget().set_limit(inline_owner_limit(cfg));
  store::StoreOptions o;
  o.name = "weft-" + topo.job_id + "-n" + std::to_string(topo.node);
  const int host_nodes = nodes_on_this_host(world, topo);
  const auto def_cap = static_cast<int64_t>(physical_memory() * 0.3 / std::max(1, host_nodes));
  o.capacity = static_cast<size_t>(cfg.get_bytes("object_store_memory", def_cap));
  o.spill_threshold = cfg.get_double("object_store_spill_threshold", 0.8);
  o.spill_limit = static_cast<size_t>(cfg.get_bytes("spill_limit", 0));
  o.alloc_timeout = std::chrono::milliseconds(cfg.get_int("object_store_alloc_timeout_ms", 2000));
  o.max_objects = static_cast<uint32_t>(cfg.get_int("object_store_max_objects", 65536));
  c->job_dir_ = session_dir;
  c->node_dir_ = c->job_dir_ + "/node" + std::to_string(topo.node);
  c->default_checkpoints_ = cfg.get("actor_checkpoint_dir", "").empty();
  o.spill_dir = c->node_dir_ + "/spill";

  // Create, barrier, attach: attach() refuses a segment that is not initialised yet. A failed
  // create must still reach the barrier, or the other ranks would hang in it.
  std::string error;
  if (topo.local_index == 0) {
    try {
      c->store_ = store::NodeStore::create(o);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  MPI_Barrier(world);
  if (topo.local_index != 0) {
    try {
      c->store_ = store::NodeStore::attach(o);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  int bad = error.empty() ? 0 : 1, any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, world);
  if (any_bad) {
    c->store_.reset();
    if (topo.local_index == 0) std::filesystem::remove_all(c->node_dir_);
    throw Error("rank " + std::to_string(topo.rank) + ": the node object store could not start" +
                (error.empty() ? std::string(" (another rank failed)") : ": " + error));
  }
  // Everyone has mapped it: drop the name now, so a job that dies without shutting down leaves
  // no segment behind in /dev/shm (the memory goes with the last process).
  if (topo.local_index == 0) store::shm_remove(o.name);
  c->region_ = transport.register_region(c->store_->base(), c->store_->segment_size());
  WEFT_LOG(Debug) << "object store " << o.name << ": " << o.capacity << " bytes, inline up to "
                  << c->inline_threshold_ << " bytes";
  return c;
}

void ObjectStoreClient::close(MPI_Comm world, const std::vector<int>& failed) {
  if (topo_.local_index != 0) store_.reset();
  if (failed.empty()) MPI_Barrier(world);
  std::error_code ec;
  if (topo_.rank == 0) {
    // A node's creator is its lowest rank; a failed one leaves its spill folder to rank 0.
    for (int f : failed) {
      if (f <= 0 || f >= topo_.size) continue;
      const int node = topo_.node_of_rank[f];
      bool creator = true;
      for (int r = 0; r < f && creator; ++r) creator = topo_.node_of_rank[r] != node;
      if (creator) std::filesystem::remove_all(job_dir_ + "/node" + std::to_string(node), ec);
    }
  }
  if (topo_.local_index == 0 && store_) {
    store_.reset();
    std::filesystem::remove_all(node_dir_, ec);
    // Actor checkpoints in the default folder serve restarts within this job only.
    if (default_checkpoints_) std::filesystem::remove_all(job_dir_ + "/checkpoints", ec);
    // Every rank removed its log file before the barrier above, unless the session is kept.
    std::filesystem::remove(job_dir_ + "/logs", ec);
    std::filesystem::remove(job_dir_, ec);  // the last node's creator removes the job folder
  }
}

ObjectStoreClient::~ObjectStoreClient() = default;

std::shared_ptr<const detail::Payload> ObjectStoreClient::put_primary(
    const ObjectId& id, size_t size, void (*fill)(char*, const void*), const void* ctx,
    bool may_wait) {
  store::WritableObject w =
      (may_wait ? store_->create(id, size, /*primary=*/true)
                : store_->try_create(id, size, /*primary=*/true, store::monotonic_ns()))
          .take();
  fill(reinterpret_cast<char*>(w.data().data()), ctx);
  w.seal();
  return std::make_shared<StorePayload>(id, topo_.rank, size, /*owner_record=*/true, std::nullopt);
}

}  // namespace weft::core
