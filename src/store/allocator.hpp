// Variable-size allocator for the object region of the segment: boundary-tag blocks with
// segregated free lists (one per power of two, TLSF-like), best fit within a bin, immediate
// coalescing on free. Everything is an offset from the segment base, because each process maps
// the segment at a different address. Blocks are 64-byte aligned (cache lines); a payload starts
// kPayloadLead bytes into its block's first line (below). Not thread-safe: callers hold the
// segment lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace weft::store {

inline constexpr uint64_t kBlockAlign = 64;
inline constexpr uint64_t kBlockHeader = 64;  // one cache line
// Payloads start 8 bytes past a cache line, so that the elements of a raw vector or string (after
// its 8-byte count) start 16 bytes past one: where glibc's large blocks start (16 bytes of chunk
// header past a page). A by-value decode then copies between addresses equal mod 64, which
// into fresh pages costs ~25 % less than copying between addresses 8 bytes apart (measured:
// 64 MiB in 7.6-8.7 ms against 10.5-11.3 ms, beside a 6.1-7.0 ms warm memcpy).
inline constexpr uint64_t kPayloadLead = 8;
inline constexpr uint64_t kPayloadOffset = kBlockHeader + kPayloadLead;  // block to payload
// A payload of at least kPagePlacedBytes is also placed kPayloadLead bytes past a page (when a
// free block has the room to move it there): glibc's large blocks start 16 bytes past a page,
// and a copy between addresses equal mod 4096 runs ~1.4x faster into fresh pages than one
// between addresses equal only mod 64 (64 MiB: 7.6-7.7 ms against 10.4-10.5 ms here).
inline constexpr uint64_t kPagePlacedBytes = uint64_t{4} << 20;
inline constexpr uint64_t kPlacementPage = 4096;
inline constexpr int kNumBins = 64;

// Allocator state kept in the segment header.
struct AllocatorState {
  uint64_t region_offset;   // first block, from the segment base
  uint64_t region_size;     // bytes of the region (multiple of kBlockAlign)
  uint64_t used;            // bytes in allocated blocks, headers included
  uint64_t nonempty;        // bit b set: bins[b] is not empty
  uint64_t bins[kNumBins];  // offset of the first free block of each bin, 0 = empty
};

class Allocator {
 public:
  Allocator(std::byte* base, AllocatorState* st) : base_(base), st_(st) {}

  // Formats the region as one free block.
  static void init(std::byte* base, AllocatorState* st, uint64_t region_offset,
                   uint64_t region_size);

  // Payload offset (from the segment base) of a block holding `bytes`, or nullopt if no free
  // block is large enough.
  std::optional<uint64_t> allocate(uint64_t bytes);
  void free(uint64_t payload_offset);

  // Bytes a request of `bytes` takes in the region (header and rounding included).
  static uint64_t block_bytes(uint64_t bytes);
  uint64_t used() const { return st_->used; }
  uint64_t region_size() const { return st_->region_size; }
  uint64_t largest_free() const;

  // Rebuilds free lists, coalescing and `used` from the block headers alone. Called after a
  // process died holding the lock in the middle of an update; returns false if the block chain
  // itself is broken (then the region is unusable and the caller must say so).
  bool rebuild();
  // Walks the chain and cross-checks it against the free lists (tests, repair).
  bool validate() const;
  // Payload offsets of every allocated block (repair looks for blocks no entry owns).
  std::vector<uint64_t> used_payloads() const;

  struct Block;  // the block header, defined in allocator.cpp

 private:
  // A block of `need` bytes from a free block of at least `search`; search > need asks for the
  // payload to be placed kPayloadLead past a page.
  std::optional<uint64_t> allocate_block(uint64_t search, uint64_t need);
  Block* at(uint64_t off) const;
  uint64_t off_of(const Block* b) const;
  uint64_t region_end() const { return st_->region_offset + st_->region_size; }
  void push_free(Block* b);
  void unlink_free(Block* b);
  void set_next_prev_size(Block* b);

  std::byte* base_;
  AllocatorState* st_;
};

}  // namespace weft::store
