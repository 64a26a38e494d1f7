#include "store/allocator.hpp"

#include <bit>

#include "common/check.hpp"

namespace weft::store {

namespace {
constexpr uint64_t kMagicUsed = 0x5745465455534544ull;  // "WEFTUSED"
constexpr uint64_t kMagicFree = 0x5745465446524545ull;  // "WEFTFREE"
constexpr uint64_t kMinBlock = kBlockHeader + kBlockAlign;
// Best fit inside the request's own bin scans at most this many blocks: bounded work under the
// lock, and a good fit in practice.
constexpr int kMaxBinScan = 32;

int bin_of(uint64_t size) { return 63 - std::countl_zero(size); }
}  // namespace

struct Allocator::Block {
  uint64_t size;       // whole block, header included
  uint64_t prev_size;  // size of the block before (0 for the first)
  uint64_t magic;      // kMagicUsed or kMagicFree
  uint64_t next_free;  // free-list links (offsets), 0 = none
  uint64_t prev_free;
  uint64_t pad[3];
};
static_assert(sizeof(Allocator::Block) == kBlockHeader);

Allocator::Block* Allocator::at(uint64_t off) const {
  return reinterpret_cast<Block*>(base_ + off);
}
uint64_t Allocator::off_of(const Block* b) const {
  return static_cast<uint64_t>(reinterpret_cast<const std::byte*>(b) - base_);
}

uint64_t Allocator::block_bytes(uint64_t bytes) {
  const uint64_t with_lead = bytes + kPayloadLead;
  const uint64_t payload = (with_lead + kBlockAlign - 1) & ~(kBlockAlign - 1);
  return payload + kBlockHeader;
}

void Allocator::init(std::byte* base, AllocatorState* st, uint64_t region_offset,
                     uint64_t region_size) {
  WEFT_CHECK(region_offset % kBlockAlign == 0 && region_size % kBlockAlign == 0);
  WEFT_CHECK(region_size >= kMinBlock);
  *st = AllocatorState{};
  st->region_offset = region_offset;
  st->region_size = region_size;
  Allocator a(base, st);
  Block* b = a.at(region_offset);
  *b = Block{};
  b->size = region_size;
  b->magic = kMagicFree;
  a.push_free(b);
}

void Allocator::push_free(Block* b) {
  b->magic = kMagicFree;
  const int bin = bin_of(b->size);
  b->prev_free = 0;
  b->next_free = st_->bins[bin];
  if (b->next_free != 0) at(b->next_free)->prev_free = off_of(b);
  st_->bins[bin] = off_of(b);
  st_->nonempty |= 1ull << bin;
}

void Allocator::unlink_free(Block* b) {
  const int bin = bin_of(b->size);
  if (b->prev_free != 0) {
    at(b->prev_free)->next_free = b->next_free;
  } else {
    st_->bins[bin] = b->next_free;
  }
  if (b->next_free != 0) at(b->next_free)->prev_free = b->prev_free;
  if (st_->bins[bin] == 0) st_->nonempty &= ~(1ull << bin);
  b->next_free = b->prev_free = 0;
}

void Allocator::set_next_prev_size(Block* b) {
  const uint64_t next = off_of(b) + b->size;
  if (next < region_end()) at(next)->prev_size = b->size;
}

std::optional<uint64_t> Allocator::allocate(uint64_t bytes) {
  const uint64_t need = block_bytes(bytes);
  if (need > st_->region_size) return std::nullopt;
  // A large payload asks for a block with room to start it kPayloadLead past a page
  // (allocator.hpp): up to a page plus a leading free block more. Where none has that room, it goes
  // anywhere.
  if (bytes >= kPagePlacedBytes) {
    if (auto off = allocate_block(need + kPlacementPage + kMinBlock, need)) return off;
  }
  return allocate_block(need, need);
}

std::optional<uint64_t> Allocator::allocate_block(uint64_t search, uint64_t need) {
  if (search > st_->region_size) return std::nullopt;
  const bool page_placed = search > need;
  Block* best = nullptr;
  const int bin = bin_of(search);
  int scanned = 0;
  for (uint64_t off = st_->bins[bin]; off != 0 && scanned < kMaxBinScan; ++scanned) {
    Block* b = at(off);
    if (b->size >= search && (best == nullptr || b->size < best->size)) {
      best = b;
      if (b->size == search) break;
    }
    off = b->next_free;
  }
  if (best == nullptr) {
    // Every block of a higher bin is at least 2^(bin+1) > need.
    const uint64_t higher = bin + 1 < kNumBins ? st_->nonempty & ~((2ull << bin) - 1) : 0;
    if (higher == 0) return std::nullopt;
    best = at(st_->bins[std::countr_zero(higher)]);
  }
  unlink_free(best);
  if (page_placed) {
    // Move the start so that the payload lands kPayloadLead past a page; the bytes before it
    // become a free block of their own (at least kMinBlock, so a page more when the gap is small).
    const uint64_t start = off_of(best);
    uint64_t gap = (kPlacementPage + kPayloadLead - (start + kPayloadOffset) % kPlacementPage) %
                   kPlacementPage;
    if (gap != 0 && gap < kMinBlock) gap += kPlacementPage;
    if (gap != 0) {
      Block* b = at(start + gap);
      *b = Block{};
      b->size = best->size - gap;
      b->prev_size = gap;
      best->size = gap;
      set_next_prev_size(b);
      push_free(best);
      best = b;
    }
  }
  if (best->size - need >= kMinBlock) {
    Block* rest = at(off_of(best) + need);
    *rest = Block{};
    rest->size = best->size - need;
    rest->prev_size = need;
    best->size = need;
    set_next_prev_size(rest);
    push_free(rest);
  }
  best->magic = kMagicUsed;
  st_->used += best->size;
  return off_of(best) + kPayloadOffset;
}

void Allocator::free(uint64_t payload_offset) {
  Block* b = at(payload_offset - kPayloadOffset);
  WEFT_CHECK(b->magic == kMagicUsed)
      << "store allocator: free of a block that is not in use at " << payload_offset;
  st_->used -= b->size;
  const uint64_t next_off = off_of(b) + b->size;
  if (next_off < region_end()) {
    Block* n = at(next_off);
    if (n->magic == kMagicFree) {
      unlink_free(n);
      b->size += n->size;
      n->magic = 0;
    }
  }
  if (b->prev_size != 0) {
    Block* p = at(off_of(b) - b->prev_size);
    if (p->magic == kMagicFree) {
      unlink_free(p);
      p->size += b->size;
      b->magic = 0;
      b = p;
    }
  }
  set_next_prev_size(b);
  push_free(b);
}

uint64_t Allocator::largest_free() const {
  if (st_->nonempty == 0) return 0;
  const int top = 63 - std::countl_zero(st_->nonempty);
  uint64_t best = 0;
  for (uint64_t off = st_->bins[top]; off != 0; off = at(off)->next_free) {
    best = std::max(best, at(off)->size);
  }
  return best > kPayloadOffset ? best - kPayloadOffset : 0;
}

bool Allocator::rebuild() {
  st_->nonempty = 0;
  for (auto& b : st_->bins) b = 0;
  st_->used = 0;
  uint64_t prev_size = 0;
  Block* prev_free = nullptr;
  for (uint64_t off = st_->region_offset; off < region_end();) {
    Block* b = at(off);
    if (b->size < kMinBlock || b->size % kBlockAlign != 0 || off + b->size > region_end() ||
        (b->magic != kMagicUsed && b->magic != kMagicFree)) {
      return false;
    }
    b->prev_size = prev_size;
    if (b->magic == kMagicFree) {
      if (prev_free != nullptr) {  // an interrupted free/split left two free neighbours
        prev_free->size += b->size;
        b->magic = 0;
        off += b->size;
        prev_size = prev_free->size;
        continue;
      }
      prev_free = b;
    } else {
      if (prev_free != nullptr) push_free(prev_free);
      prev_free = nullptr;
      st_->used += b->size;
    }
    prev_size = b->size;
    off += b->size;
  }
  if (prev_free != nullptr) push_free(prev_free);
  // prev_size of the block after a merged run must name the merged size.
  for (uint64_t off = st_->region_offset; off < region_end(); off += at(off)->size) {
    set_next_prev_size(at(off));
  }
  return true;
}

std::vector<uint64_t> Allocator::used_payloads() const {
  std::vector<uint64_t> out;
  for (uint64_t off = st_->region_offset; off < region_end(); off += at(off)->size) {
    if (at(off)->magic == kMagicUsed) out.push_back(off + kPayloadOffset);
  }
  return out;
}

bool Allocator::validate() const {
  uint64_t used = 0, free_bytes = 0, prev = 0;
  size_t free_blocks = 0;
  bool prev_free = false;
  for (uint64_t off = st_->region_offset; off < region_end();) {
    const Block* b = at(off);
    if (b->size < kMinBlock || b->prev_size != prev) return false;
    const bool is_free = b->magic == kMagicFree;
    if (!is_free && b->magic != kMagicUsed) return false;
    if (is_free && prev_free) return false;  // missed coalescing
    (is_free ? free_bytes : used) += b->size;
    free_blocks += is_free;
    prev_free = is_free;
    prev = b->size;
    off += b->size;
  }
  size_t listed = 0;
  for (int bin = 0; bin < kNumBins; ++bin) {
    for (uint64_t off = st_->bins[bin]; off != 0; off = at(off)->next_free) {
      if (at(off)->magic != kMagicFree || bin_of(at(off)->size) != bin) return false;
      ++listed;
    }
  }
  return used == st_->used && used + free_bytes == st_->region_size && listed == free_blocks;
}

}  // namespace weft::store
