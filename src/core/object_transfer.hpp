// State of the data plane on one rank (loop thread only): pulls in flight towards holders of
// primaries on other nodes, and the views this rank keeps pinned while remote readers copy.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "store/node_store.hpp"
#include "weft/detail/object_state.hpp"

namespace weft::core {

using PulledFn =
    std::function<void(std::shared_ptr<const detail::Payload> payload, detail::ErrorInfo error)>;

struct TransferTable {
  struct Waiter {
    bool owner_record = false;
    PulledFn done;
  };
  struct Pull {
    int holder = -1;
    size_t size = 0;
    std::vector<Waiter> waiters;
    // How a failure reaches the waiters: kObjectLost when the holder or the network fails,
    // kStoreFull / kGeneric when this node cannot make the copy (finish_pull reads it).
    detail::ErrorKind error_kind = detail::ErrorKind::kObjectLost;
    // kPullRequests sent: another rank of this node that gives up its copy makes this one ask
    // the holder again (await_copy), a bounded number of times.
    int requests = 0;
  };
  std::unordered_map<ObjectId, Pull> pulls;
  // (reader rank, object) → views pinned until the reader says its copy is done.
  std::multimap<std::pair<int, ObjectId>, store::ObjectView> lent;
  // Owner: refs whose values a task reads from a store by location, kept until its result.
  std::unordered_map<ObjectId, std::vector<std::shared_ptr<detail::ObjectState>>> arg_holds;
};

// Pool thread, after a task or actor call produced `value`: a value above the inline threshold
// goes into this node's store as a primary and `value` is emptied; returns its size, or -1 when
// it stays inline. A store that cannot take it turns the result into a typed error.
int64_t store_result(const ObjectId& ret, std::vector<char>& value, bool& ok,
                     detail::ErrorInfo& err);

// ObjectLostError's ErrorInfo, raised on `rank`.
detail::ErrorInfo lost_error(int rank, const std::string& msg);

}  // namespace weft::core
