#include "net/ucx_rma.hpp"

#include <cstring>

#include "common/log.hpp"
#include "net/net_error.hpp"
#include "net/rma_bounds.hpp"

namespace weft::net::detail {

UcxRma::UcxRma(UcxEndpoints& eps, const Topology& topo, size_t chunk_bytes, size_t depth)
    : eps_(eps), topo_(topo), chunk_(chunk_bytes), depth_(depth) {}

UcxRma::~UcxRma() = default;

int UcxRma::register_region(MPI_Comm world, void* base, size_t len) {
  auto reg = std::make_unique<Region>();
  reg->base = base;
  reg->len = len;
  std::string err;
  std::vector<char> packed;
  if (len > 0) {
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = base;
    mp.length = len;
    ucp_mem_h memh = nullptr;
    ucs_status_t st = ucp_mem_map(eps_.context(), &mp, &memh);
    if (st == UCS_OK) {
      ucp_context_h ctx = eps_.context();
      reg->memh = UcpMemHandle(memh, [ctx](ucp_mem_h m) { ucp_mem_unmap(ctx, m); });
      void* buf = nullptr;
      size_t blen = 0;
      st = ucp_rkey_pack(ctx, memh, &buf, &blen);
      if (st == UCS_OK) {
        packed.assign(static_cast<char*>(buf), static_cast<char*>(buf) + blen);
        ucp_rkey_buffer_release(buf);
      }
    }
    if (st != UCS_OK) err = std::string("ucp_mem_map/rkey_pack: ") + ucs_status_string(st);
  }
  int bad = err.empty() ? 0 : 1, any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, world);
  if (any) {
    throw TransportError("rank " + std::to_string(topo_.rank) + ": registering region " +
                         std::to_string(regions_.size()) + " failed" +
                         (err.empty() ? " on another rank" : ": " + err));
  }
  const int n = topo_.size;
  uint64_t mine[3] = {reinterpret_cast<uint64_t>(base), len, packed.size()};
  std::vector<uint64_t> all(3 * n);
  MPI_Allgather(mine, 3, MPI_UINT64_T, all.data(), 3, MPI_UINT64_T, world);
  std::vector<int> lens(n), displs(n);
  int total = 0;
  for (int r = 0; r < n; ++r)
    lens[r] = static_cast<int>(all[3 * r + 2]), displs[r] = total, total += lens[r];
  std::vector<char> keys(total);
  MPI_Allgatherv(packed.data(), static_cast<int>(packed.size()), MPI_BYTE, keys.data(), lens.data(),
                 displs.data(), MPI_BYTE, world);
  reg->remote.resize(n);
  for (int r = 0; r < n; ++r) {
    reg->remote[r].addr = all[3 * r];
    reg->remote[r].len = all[3 * r + 1];
    reg->remote[r].packed.assign(keys.begin() + displs[r], keys.begin() + displs[r] + lens[r]);
  }
  regions_.push_back(std::move(reg));
  return static_cast<int>(regions_.size()) - 1;
}

void UcxRma::check(int rank, int region, size_t remote_offset, size_t len) const {
  check_rma_get("rma_get", region, regions_.size(), rank, topo_.size, remote_offset, len,
                [&] { return regions_[region]->remote[rank].len; });
}

void UcxRma::get(int rank, int region, size_t remote_offset, void* local, size_t len, Done done) {
  check(rank, region, remote_offset, len);
  Region& reg = *regions_[region];
  Remote& rem = reg.remote[rank];
  if (len == 0) {
    finished_.push_back({std::move(done), true, {}});
    return;
  }
  if (rank == topo_.rank) {  // our own memory: no wire involved
    std::memcpy(local, static_cast<char*>(reg.base) + remote_offset, len);
    finished_.push_back({std::move(done), true, {}});
    return;
  }
  ucp_ep_h ep = eps_.ep(rank);
  if (!ep) {
    finished_.push_back({std::move(done), false, eps_.failure(rank)});
    return;
  }
  if (!rem.rkey) {
    ucp_rkey_h rk = nullptr;
    ucs_status_t st = ucp_ep_rkey_unpack(ep, rem.packed.data(), &rk);
    if (st != UCS_OK) {
      finished_.push_back({std::move(done), false,
                           std::string("rkey unpack for rank ") + std::to_string(rank) + ": " +
                               ucs_status_string(st)});
      return;
    }
    rem.rkey = UcpRkey(rk, [](ucp_rkey_h k) { ucp_rkey_destroy(k); });
  }
  auto op = std::make_unique<Op>();
  op->self = this;
  op->rank = rank;
  op->remote_addr = rem.addr + remote_offset;
  op->rkey = rem.rkey.get();
  op->local = static_cast<char*>(local);
  op->len = len;
  op->done = std::move(done);
  ops_.push_back(std::move(op));
}

void UcxRma::on_get_done(void* req, ucs_status_t status, void* user) {
  auto* op = static_cast<Op*>(user);
  --op->outstanding;
  if (status != UCS_OK && op->error.empty())
    op->error =
        "rma_get from rank " + std::to_string(op->rank) + " failed: " + ucs_status_string(status);
  ucp_request_free(req);
}

size_t UcxRma::advance() {
  for (auto& op : ops_) {
    if (op->error.empty() && eps_.failed(op->rank)) op->error = eps_.failure(op->rank);
    while (op->error.empty() && op->next < op->len && op->outstanding < depth_) {
      ucp_ep_h ep = eps_.ep(op->rank);
      if (!ep) break;
      const size_t n = std::min(chunk_, op->len - op->next);
      ucp_request_param_t p{};
      p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
      p.cb.send = &UcxRma::on_get_done;
      p.user_data = op.get();
      void* req =
          ucp_get_nbx(ep, op->local + op->next, n, op->remote_addr + op->next, op->rkey, &p);
      if (UCS_PTR_IS_ERR(req)) {
        op->error = std::string("ucp_get_nbx: ") + ucs_status_string(UCS_PTR_STATUS(req));
        break;
      }
      if (req != nullptr) ++op->outstanding;
      op->next += n;
    }
  }
  // Finished ops leave the queue before any callback runs (a callback may start new reads).
  for (auto it = ops_.begin(); it != ops_.end();) {
    Op& op = **it;
    if (op.outstanding == 0 && (!op.error.empty() || op.next == op.len)) {
      finished_.push_back({std::move(op.done), op.error.empty(), op.error});
      it = ops_.erase(it);
    } else {
      ++it;
    }
  }
  auto fin = std::exchange(finished_, {});
  for (auto& f : fin) f.done(f.ok, f.error);
  return fin.size();
}

}  // namespace weft::net::detail
