#include "store/object_table.hpp"

#include <bit>
#include <functional>

#include "common/check.hpp"

namespace weft::store {

uint32_t ObjectTable::index_slots_for(uint32_t max_entries) {
  return std::bit_ceil(std::max<uint32_t>(16, max_entries * 2));
}

void ObjectTable::init(TableState* st, Entry* entries, int32_t* index, uint32_t max_entries) {
  *st = TableState{};
  st->max_entries = max_entries;
  st->index_slots = index_slots_for(max_entries);
  st->lru[0] = st->lru[1] = LruList{-1, -1};
  for (uint32_t i = 0; i < st->index_slots; ++i) index[i] = -1;
  for (uint32_t i = 0; i < max_entries; ++i) {
    entries[i] = Entry{};
    entries[i].next_free = i + 1 < max_entries ? static_cast<int32_t>(i + 1) : -1;
  }
  st->free_head = max_entries > 0 ? 0 : -1;
}

uint32_t ObjectTable::slot_of(const ObjectId& id) const {
  return static_cast<uint32_t>(std::hash<ObjectId>{}(id)) & (st_->index_slots - 1);
}

int32_t ObjectTable::find(const ObjectId& id) const {
  const uint32_t mask = st_->index_slots - 1;
  for (uint32_t s = slot_of(id);; s = (s + 1) & mask) {
    const int32_t e = index_[s];
    if (e < 0) return -1;
    if (entries_[e].id == id) return e;
  }
}

int32_t ObjectTable::insert(const ObjectId& id) {
  if (st_->free_head < 0) return -1;
  const int32_t e = st_->free_head;
  Entry& en = entries_[e];
  st_->free_head = en.next_free;
  const uint32_t gen = en.generation + 1;
  en = Entry{};
  en.id = id;
  en.generation = gen;
  en.state = ObjectState::kCreating;
  en.lru_prev = en.lru_next = en.next_free = -1;
  const uint32_t mask = st_->index_slots - 1;
  uint32_t s = slot_of(id);
  while (index_[s] >= 0) s = (s + 1) & mask;
  index_[s] = e;
  ++st_->count;
  return e;
}

void ObjectTable::erase(int32_t e) {
  Entry& en = entries_[e];
  WEFT_CHECK(en.state != ObjectState::kFree);
  if (en.flags & kInLru) lru_remove(e);
  const uint32_t mask = st_->index_slots - 1;
  uint32_t s = slot_of(en.id);
  while (index_[s] != e) {
    WEFT_CHECK(index_[s] >= 0) << "object table: entry " << e << " missing from the index";
    s = (s + 1) & mask;
  }
  // Backward-shift deletion: pull later members of the probe run into the hole so lookups
  // never need tombstones.
  uint32_t hole = s;
  for (uint32_t j = (hole + 1) & mask; index_[j] >= 0; j = (j + 1) & mask) {
    const uint32_t home = slot_of(entries_[index_[j]].id);
    const bool movable = ((j - home) & mask) >= ((j - hole) & mask);
    if (movable) {
      index_[hole] = index_[j];
      hole = j;
    }
  }
  index_[hole] = -1;
  en.state = ObjectState::kFree;
  en.loc = Location::kNone;
  en.flags = 0;
  en.pins = 0;
  en.next_free = st_->free_head;
  st_->free_head = e;
  --st_->count;
}

void ObjectTable::lru_push_front(int32_t e) {
  Entry& en = entries_[e];
  WEFT_CHECK(!(en.flags & kInLru));
  LruList& l = st_->lru[en.primary ? 1 : 0];
  en.lru_prev = -1;
  en.lru_next = l.head;
  if (l.head >= 0) entries_[l.head].lru_prev = e;
  l.head = e;
  if (l.tail < 0) l.tail = e;
  en.flags |= kInLru;
}

void ObjectTable::lru_remove(int32_t e) {
  Entry& en = entries_[e];
  if (!(en.flags & kInLru)) return;
  LruList& l = st_->lru[en.primary ? 1 : 0];
  if (en.lru_prev >= 0)
    entries_[en.lru_prev].lru_next = en.lru_next;
  else
    l.head = en.lru_next;
  if (en.lru_next >= 0)
    entries_[en.lru_next].lru_prev = en.lru_prev;
  else
    l.tail = en.lru_prev;
  en.lru_prev = en.lru_next = -1;
  en.flags &= ~kInLru;
}

void ObjectTable::lru_touch(int32_t e) {
  if (!(entries_[e].flags & kInLru)) return;
  if (st_->lru[entries_[e].primary ? 1 : 0].head == e) return;
  lru_remove(e);
  lru_push_front(e);
}

void ObjectTable::rebuild() {
  for (uint32_t i = 0; i < st_->index_slots; ++i) index_[i] = -1;
  st_->lru[0] = st_->lru[1] = LruList{-1, -1};
  st_->free_head = -1;
  st_->count = 0;
  const uint32_t mask = st_->index_slots - 1;
  for (int32_t e = static_cast<int32_t>(st_->max_entries) - 1; e >= 0; --e) {
    Entry& en = entries_[e];
    if (en.state == ObjectState::kFree) {
      en.next_free = st_->free_head;
      st_->free_head = e;
      continue;
    }
    uint32_t s = slot_of(en.id);
    while (index_[s] >= 0) s = (s + 1) & mask;
    index_[s] = e;
    ++st_->count;
    const bool was_in_lru = en.flags & kInLru;
    en.flags &= ~kInLru;
    if (was_in_lru) lru_push_front(e);
  }
}

}  // namespace weft::store
