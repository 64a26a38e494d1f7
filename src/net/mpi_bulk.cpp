#include "net/mpi_bulk.hpp"

#include <algorithm>
#include <climits>
#include <cstring>

#include "common/log.hpp"
#include "net/net_error.hpp"
#include "net/rma_bounds.hpp"

namespace weft::net::detail {
namespace {

enum : uint8_t { kRequest = 1, kRefuse = 2 };

struct Request {
  uint8_t kind;
  int32_t tag;
  int32_t region;
  uint64_t offset;
  uint64_t len;
};

}  // namespace

MpiBulk::MpiBulk(MPI_Comm world, const Topology& topo, size_t chunk_bytes, size_t depth,
                 SendFn send)
    : topo_(topo),
      // An MPI count is an int: keep each chunk well inside it.
      chunk_(std::min<size_t>(chunk_bytes, size_t{1} << 30)),
      depth_(std::max<size_t>(depth, 1)),
      send_(std::move(send)) {
  MPI_Comm_dup(world, &comm_);
  void* ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(comm_, MPI_TAG_UB, &ub, &flag);
  if (flag && ub) tag_ub_ = *static_cast<int*>(ub);
}

MpiBulk::~MpiBulk() {
  for (auto& x : reads_) cancel(*x, false);
  for (auto& x : sends_) cancel(*x, true);
  // Local in practice (no traffic), and every rank destroys its transport at shutdown.
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

int MpiBulk::register_region(void* base, size_t len) {
  Region reg;
  reg.base = static_cast<char*>(base);
  reg.len.resize(topo_.size);
  uint64_t mine = len;
  MPI_Allgather(&mine, 1, MPI_UINT64_T, reg.len.data(), 1, MPI_UINT64_T, comm_);
  regions_.push_back(std::move(reg));
  return static_cast<int>(regions_.size()) - 1;
}

void MpiBulk::get(int rank, int region, size_t remote_offset, void* local, size_t len, Done done) {
  check_rma_get("rma_get (MPI)", region, regions_.size(), rank, topo_.size, remote_offset, len,
                [&] { return regions_[region].len[rank]; });
  if (len == 0) {
    finished_.push_back({std::move(done), true, {}});
    return;
  }
  if (static_cast<size_t>(rank) < failed_.size() && !failed_[rank].empty()) {
    finished_.push_back(
        {std::move(done), false,
         "MPI read from rank " + std::to_string(rank) + " failed: " + failed_[rank]});
    return;
  }
  if (rank == topo_.rank) {  // our own memory: no wire involved
    std::memcpy(local, regions_[region].base + remote_offset, len);
    finished_.push_back({std::move(done), true, {}});
    return;
  }
  auto x = std::make_unique<Xfer>();
  x->peer = rank;
  x->tag = next_tag_;
  next_tag_ = next_tag_ >= tag_ub_ ? 1 : next_tag_ + 1;
  x->buf = static_cast<char*>(local);
  x->len = len;
  x->done = std::move(done);
  // Receives first, so the holder's first chunks find them posted (no unexpected-message copy).
  pump(*x, false);
  Request r{kRequest, x->tag, region, remote_offset, len};
  send_(rank, &r, sizeof r);
  reads_.push_back(std::move(x));
}

void MpiBulk::on_message(int src, const char* data, size_t len) {
  if (len < 1) return;
  if (data[0] == kRefuse && len >= 1 + sizeof(int32_t)) {
    int32_t tag;
    std::memcpy(&tag, data + 1, sizeof tag);
    for (auto& x : reads_)
      if (x->peer == src && x->tag == tag && x->error.empty())
        x->error = std::string(data + 1 + sizeof tag, len - 1 - sizeof tag);
    return;
  }
  Request r;
  if (data[0] != kRequest || len != sizeof r) {
    WEFT_LOG(Error) << "net: dropping a malformed MPI bulk message of " << len
                    << " bytes from rank " << src;
    return;
  }
  std::memcpy(&r, data, sizeof r);
  std::string why;
  if (r.region < 0 || r.region >= static_cast<int>(regions_.size()))
    why = "rank " + std::to_string(topo_.rank) + " has no region " + std::to_string(r.region);
  else if (const uint64_t rl = regions_[r.region].len[topo_.rank];
           r.offset > rl || r.len > rl - r.offset)
    why = "bytes [" + std::to_string(r.offset) + ", +" + std::to_string(r.len) +
          ") lie outside rank " + std::to_string(topo_.rank) + "'s region of " +
          std::to_string(rl) + " bytes";
  if (!why.empty()) {
    std::string msg(1 + sizeof r.tag, '\0');
    msg[0] = static_cast<char>(kRefuse);
    std::memcpy(msg.data() + 1, &r.tag, sizeof r.tag);
    msg += why;
    send_(src, msg.data(), msg.size());
    return;
  }
  auto x = std::make_unique<Xfer>();
  x->peer = src;
  x->tag = r.tag;
  x->buf = regions_[r.region].base + r.offset;
  x->len = r.len;
  pump(*x, true);
  sends_.push_back(std::move(x));
}

void MpiBulk::fail_peer(int rank, const std::string& reason) {
  if (failed_.size() <= static_cast<size_t>(rank)) failed_.resize(rank + 1);
  failed_[rank] = reason;  // later reads from it fail at once (nobody would answer them)
  for (auto& x : reads_)
    if (x->peer == rank && x->error.empty()) x->error = reason;
  for (auto& x : sends_)
    if (x->peer == rank && x->error.empty()) x->error = reason;
}

size_t MpiBulk::pump(Xfer& x, bool send) {
  size_t n = 0;
  if (!x.reqs.empty()) {
    std::vector<int> idx(x.reqs.size());
    int done = 0;
    MPI_Testsome(static_cast<int>(x.reqs.size()), x.reqs.data(), &done, idx.data(),
                 MPI_STATUSES_IGNORE);
    if (done != MPI_UNDEFINED && done > 0) {
      n += static_cast<size_t>(done);
      x.reqs.erase(std::remove(x.reqs.begin(), x.reqs.end(), MPI_REQUEST_NULL), x.reqs.end());
    }
  }
  while (x.error.empty() && x.next < x.len && x.reqs.size() < depth_) {
    const int count = static_cast<int>(std::min(chunk_, x.len - x.next));
    MPI_Request q = MPI_REQUEST_NULL;
    const int rc = send ? MPI_Isend(x.buf + x.next, count, MPI_BYTE, x.peer, x.tag, comm_, &q)
                        : MPI_Irecv(x.buf + x.next, count, MPI_BYTE, x.peer, x.tag, comm_, &q);
    if (rc != MPI_SUCCESS) {
      x.error = std::string(send ? "MPI_Isend" : "MPI_Irecv") + " to rank " +
                std::to_string(x.peer) + " failed (MPI error " + std::to_string(rc) + ")";
      break;
    }
    x.reqs.push_back(q);
    x.next += static_cast<size_t>(count);
    ++n;
  }
  return n;
}

void MpiBulk::cancel(Xfer& x, bool send) {
  for (MPI_Request& q : x.reqs) {
    if (q == MPI_REQUEST_NULL) continue;
    if (!send) {  // a posted receive can be withdrawn safely
      MPI_Cancel(&q);
      MPI_Wait(&q, MPI_STATUS_IGNORE);
    } else {  // a send towards a dead or departed peer: let MPI reclaim it whenever it can
      MPI_Request_free(&q);
    }
  }
  x.reqs.clear();
}

size_t MpiBulk::advance() {
  size_t n = 0;
  for (auto it = sends_.begin(); it != sends_.end();) {
    Xfer& x = **it;
    n += pump(x, true);
    if (!x.error.empty()) cancel(x, true);
    if (x.reqs.empty() && (x.next == x.len || !x.error.empty())) {
      it = sends_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  // Finished reads leave the list before any callback runs (a callback may start new reads).
  for (auto it = reads_.begin(); it != reads_.end();) {
    Xfer& x = **it;
    n += pump(x, false);
    if (!x.error.empty()) {
      cancel(x, false);
      finished_.push_back({std::move(x.done), false,
                           "MPI read from rank " + std::to_string(x.peer) + " failed: " + x.error});
      it = reads_.erase(it);
    } else if (x.reqs.empty() && x.next == x.len) {
      bytes_read_ += x.len;
      finished_.push_back({std::move(x.done), true, {}});
      it = reads_.erase(it);
    } else {
      ++it;
    }
  }
  auto fin = std::exchange(finished_, {});
  for (auto& f : fin) f.done(f.ok, f.error);
  return n + fin.size();
}

}  // namespace weft::net::detail
