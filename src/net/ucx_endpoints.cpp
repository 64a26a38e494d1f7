#include "net/ucx_endpoints.hpp"

#include <cstdlib>
#include <cstring>

#include "common/check.hpp"
#include "common/log.hpp"
#include "net/net_error.hpp"
#include "net/allgather.hpp"

namespace weft::net::detail {
namespace {

// Collective verdict: every rank throws if any rank failed, so no rank waits in a later
// collective for a rank that already gave up.
void agree_or_throw(MPI_Comm world, int rank, const std::string& err, const char* what) {
  int bad = err.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, world);
  if (any) {
    throw TransportError("rank " + std::to_string(rank) + ": " + what + " failed" +
                         (err.empty() ? " on another rank" : ": " + err) +
                         " (check UCX_NET_DEVICES / UCX_TLS; `ucx_info -d` lists transports)");
  }
}

// Closes with FORCE (peer-error mode allows it) and progresses the worker until done; bounded
// because a dead peer must not hang teardown.
void close_endpoint(ucp_worker_h worker, ucp_ep_h ep) {
  ucp_request_param_t p{};
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = UCP_EP_CLOSE_FLAG_FORCE;
  void* req = ucp_ep_close_nbx(ep, &p);
  if (UCS_PTR_IS_PTR(req)) {
    for (int i = 0; i < 100000 && ucp_request_check_status(req) == UCS_INPROGRESS; ++i)
      ucp_worker_progress(worker);
    ucp_request_free(req);
  }
}

}  // namespace

UcxEndpoints::UcxEndpoints(MPI_Comm world, const Topology& topo, std::string role,
                           bool log_failures)
    : topo_(topo),
      role_(std::move(role)),
      log_failures_(log_failures),
      addresses_(topo.size),
      args_(topo.size),
      eps_(topo.size),
      failure_(topo.size) {
  // Loopback unless the user chose otherwise: nothing may go to another interface by default.
  ::setenv("UCX_NET_DEVICES", "lo", /*overwrite=*/0);
  std::string err;
  ucp_config_t* config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
  if (st == UCS_OK) {
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 0;
    ucp_context_h ctx = nullptr;
    st = ucp_init(&params, config, &ctx);
    ucp_config_release(config);
    if (st == UCS_OK) context_ = UcpContext(ctx, [](ucp_context_h c) { ucp_cleanup(c); });
  }
  if (st == UCS_OK) {
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    // One thread at a time: the one holding the event loop's token (core/event_loop.hpp).
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    ucp_worker_h w = nullptr;
    st = ucp_worker_create(context_.get(), &wp, &w);
    if (st == UCS_OK) worker_ = UcpWorker(w, [](ucp_worker_h x) { ucp_worker_destroy(x); });
  }
  std::vector<char> mine;
  if (st == UCS_OK) {
    ucp_address_t* a = nullptr;
    size_t len = 0;
    st = ucp_worker_get_address(worker_.get(), &a, &len);
    if (st == UCS_OK) {
      mine.assign(reinterpret_cast<char*>(a), reinterpret_cast<char*>(a) + len);
      ucp_worker_release_address(worker_.get(), a);
    }
  }
  if (st != UCS_OK) err = std::string("UCX initialisation: ") + ucs_status_string(st);
  agree_or_throw(world, topo.rank, err, ("UCX setup (" + role_ + ")").c_str());

  // Exchange worker addresses (variable length).
  std::vector<std::string> all =
      allgather_bytes(world, std::string_view(mine.data(), mine.size()));
  for (int r = 0; r < topo.size; ++r) addresses_[r].assign(all[r].begin(), all[r].end());

  for (int r = 0; r < topo.size; ++r) {
    if (r != topo.rank && !topo.same_node(r)) connect(r);
  }
}

UcxEndpoints::~UcxEndpoints() { close_all(); }

void UcxEndpoints::close_all() {
  closing_ = true;
  for (auto& ep : eps_) ep.reset();
}

void UcxEndpoints::connect(int rank) {
  args_[rank] = std::make_unique<PeerArg>(PeerArg{this, rank});
  ucp_ep_params_t p{};
  p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                 UCP_EP_PARAM_FIELD_ERR_HANDLER;
  p.address = reinterpret_cast<const ucp_address_t*>(addresses_[rank].data());
  p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  p.err_handler.cb = &UcxEndpoints::on_ep_error;
  p.err_handler.arg = args_[rank].get();
  ucp_ep_h ep = nullptr;
  ucs_status_t st = ucp_ep_create(worker_.get(), &p, &ep);
  if (st != UCS_OK) {
    mark_failed(rank, std::string("ucp_ep_create: ") + ucs_status_string(st));
    return;
  }
  ucp_worker_h w = worker_.get();
  eps_[rank] = UcpEndpoint(ep, [w](ucp_ep_h e) { close_endpoint(w, e); });
}

ucp_ep_h UcxEndpoints::ep(int rank) {
  if (failed(rank)) return nullptr;
  if (!eps_[rank]) connect(rank);
  return eps_[rank].get();
}

void UcxEndpoints::on_ep_error(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* a = static_cast<PeerArg*>(arg);
  if (a->self->closing_) return;
  a->self->mark_failed(a->rank, std::string("UCX endpoint error: ") + ucs_status_string(status));
}

void UcxEndpoints::mark_failed(int rank, const std::string& reason, bool log) {
  if (failed(rank)) return;
  failure_[rank] = "rank " + std::to_string(rank) + " (node " +
                   std::to_string(topo_.node_of_rank[rank]) + ") unreachable: " + reason;
  new_failures_.emplace_back(rank, failure_[rank]);
  if (log && log_failures_) WEFT_LOG(Warn) << role_ << ": " << failure_[rank];
}

std::vector<std::pair<int, std::string>> UcxEndpoints::take_new_failures() {
  return std::exchange(new_failures_, {});
}

size_t UcxEndpoints::progress() {
  size_t n = 0;
  for (int i = 0; i < 64 && ucp_worker_progress(worker_.get()); ++i) ++n;
  return n;
}

}  // namespace weft::net::detail
