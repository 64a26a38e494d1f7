// The thread-local collector behind ObjectRef::save (include/weft/detail/refcount_api.hpp), and
// the reference tables' figures for tests and tools.
#include <algorithm>

#include "core/event_loop.hpp"
#include "weft/detail/refcount_api.hpp"

namespace weft::detail {
namespace {
thread_local std::vector<StatePtr>* t_collector = nullptr;
}  // namespace

RefCollector::RefCollector(std::vector<StatePtr>* out) noexcept : prev_(t_collector) {
  t_collector = out;
}

RefCollector::~RefCollector() { t_collector = prev_; }

void note_serialized(const StatePtr& s) {
  if (!s) return;
  if (t_collector) {
    t_collector->push_back(s);
    return;
  }
  // Serialized by hand, outside any Weft message: nobody can say when those bytes are read, so
  // the state (an owner's value, or a borrower's credit) stays until the job ends.
  core::EventLoop* l = core::current_loop();
  if (l && !s->escaped.exchange(true)) l->objects().pin(s);
}

void dedupe_refs(std::vector<StatePtr>& refs) {
  if (refs.size() < 2) return;
  std::sort(refs.begin(), refs.end(), [](const StatePtr& a, const StatePtr& b) {
    return std::less<const ObjectState*>{}(a.get(), b.get());
  });
  refs.erase(std::unique(refs.begin(), refs.end()), refs.end());
}

RefTableInfo ref_table_info() {
  RefTableInfo i;
  core::EventLoop* l = core::current_loop();
  if (!l) return i;
  i.objects = l->objects().size();
  i.pinned = l->objects().pinned();
  i.borrowed = l->borrows().borrows().size();
  i.borrow_count = l->borrows().borrows().total();
  return i;
}

}  // namespace weft::detail
