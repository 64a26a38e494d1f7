// The transport's framing (src/net): frames in a shared-memory ring read by RingReader::drain
// and reassembled into messages by Reassembler (drain_ring, as Transport::poll does), and the
// frames of a coalesced UCX batch (for_each_batched, as UcxMessenger::deliver_am does).
// Input: one byte choosing the mode, then
//   0 ring:   u8 capacity choice, then rounds of [u16 n][n bytes]: a writer that puts arbitrary
//             bytes into the ring at its tail and publishes, the reader draining after each
//   1 batch:  the bytes of one batch
//   2 codec:  messages [u16 type][u16 len][len bytes] sent through flush_to_ring into a small
//             ring (fragmented when large) and drained: every message must come out whole,
//             in order, with its type
// Every delivered payload is read to its last byte (ASan catches a length past the buffer).
#include <cstring>
#include <deque>
#include <memory>

#include "fuzz_harness.hpp"
#include "net/frame.hpp"
#include "net/limits.hpp"
#include "net/shm_link.hpp"

namespace {

using namespace weft;
using namespace weft::net::detail;

class ByteCursor {
 public:
  ByteCursor(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  size_t left() const { return n_; }
  template <class T>
  bool get(T* out) {
    if (n_ < sizeof(T)) return false;
    std::memcpy(out, p_, sizeof(T));
    p_ += sizeof(T), n_ -= sizeof(T);
    return true;
  }
  const uint8_t* take(size_t n) {
    n = std::min(n, n_);
    const uint8_t* at = p_;
    p_ += n, n_ -= n;
    return at;
  }

 private:
  const uint8_t* p_;
  size_t n_;
};

// A ring in memory of exactly its size, so ASan sees any read outside it.
struct Ring {
  explicit Ring(size_t cap)
      : cap(cap), mem(std::make_unique<char[]>(sizeof(RingControl) + cap)) {
    ctl = new (mem.get()) RingControl{};
    ctl->tail.store(0);
    ctl->head.store(0);
  }
  char* data() { return mem.get() + sizeof(RingControl); }
  size_t cap;
  std::unique_ptr<char[]> mem;
  RingControl* ctl;
};

size_t capacity_of(uint8_t choice) { return size_t{256} << (choice % 6); }  // 256 .. 8 KiB

volatile uint64_t g_sink;
void touch(uint16_t type, const char* data, size_t len) {
  WEFT_FUZZ_CHECK(type < net::kFirstReservedType || type == net::kBulkMessageType);
  uint64_t s = type;
  for (size_t i = 0; i < len; ++i) s = s * 31 + static_cast<unsigned char>(data[i]);
  g_sink = s;
}

void fuzz_ring(ByteCursor in) {
  uint8_t choice = 0;
  if (!in.get(&choice)) return;
  Ring ring(capacity_of(choice));
  RingReader reader(ring.ctl, ring.cap);
  Reassembler reasm;
  uint64_t tail = 0;
  for (int round = 0; round < 64 && in.left() > 0; ++round) {
    uint16_t n = 0;
    if (!in.get(&n)) return;
    const size_t got = std::min<size_t>(n, in.left());
    const uint8_t* bytes = in.take(got);
    // The writer's bytes go where a writer would put them: from the tail on, wrapping.
    const size_t put = std::min(got, ring.cap);
    for (size_t i = 0; i < put; ++i) ring.data()[(tail + i) & (ring.cap - 1)] = char(bytes[i]);
    tail += n;  // n may exceed the room or the capacity: the reader must refuse that tail
    ring.ctl->tail.store(tail, std::memory_order_release);
    for (int drains = 0; drains < 8 && reader.has_data(); ++drains) {
      size_t frames = 0;
      drain_ring(1, reader, reasm, 16, touch, &frames);
      if (frames == 0) break;
    }
    WEFT_FUZZ_CHECK(ring.ctl->head.load() <= tail);
    tail = std::max<uint64_t>(tail, ring.ctl->head.load());
  }
}

void fuzz_batch(ByteCursor in) {
  const size_t n = in.left();
  // A copy of exactly the batch's size (the fuzzer's buffer may be followed by other bytes).
  std::unique_ptr<char[]> batch(new char[n]);
  if (n) std::memcpy(batch.get(), in.take(n), n);
  (void)for_each_batched(batch.get(), n, touch);
}

void fuzz_codec(ByteCursor in) {
  Ring ring(1024);
  RingWriter writer(ring.ctl, ring.cap);
  RingReader reader(ring.ctl, ring.cap);
  Reassembler reasm;
  Outbox out;
  std::deque<std::pair<uint16_t, std::vector<char>>> expected;
  for (int i = 0; i < 32 && in.left() >= 4; ++i) {
    uint16_t type = 0, len = 0;
    in.get(&type);
    in.get(&len);
    type %= net::kFirstReservedType;
    len %= 4096;
    std::vector<char> body(len);
    for (size_t k = 0; k < len; ++k) body[k] = char(i * 7 + k);
    out.push(type, body.data(), body.size(), nullptr, 0);
    expected.emplace_back(type, std::move(body));
  }
  for (int step = 0; step < 10000 && !expected.empty(); ++step) {
    bool published = false;
    flush_to_ring(writer, out, &published);
    size_t frames = 0;
    drain_ring(
        2, reader, reasm, 64,
        [&](uint16_t type, const char* data, size_t len) {
          WEFT_FUZZ_CHECK(!expected.empty());
          WEFT_FUZZ_CHECK(expected.front().first == type);
          WEFT_FUZZ_CHECK(expected.front().second.size() == len);
          WEFT_FUZZ_CHECK(len == 0 || std::memcmp(expected.front().second.data(), data, len) == 0);
          expected.pop_front();
        },
        &frames);
    WEFT_FUZZ_CHECK(published || frames > 0 || out.empty());
  }
  WEFT_FUZZ_CHECK(expected.empty());
}

void decode(const uint8_t* data, size_t size) {
  ByteCursor in(data, size);
  uint8_t mode = 0;
  if (!in.get(&mode)) return;
  switch (mode % 3) {
    case 0: return fuzz_ring(in);
    case 1: return fuzz_batch(in);
    default: return fuzz_codec(in);
  }
}

// ---- seeds: what the real writers put on the wire ------------------------------------------

struct Msg {
  uint16_t type;
  std::vector<char> body;
};
std::vector<Msg> sample(size_t big) {
  std::vector<Msg> m;
  m.push_back({1, std::vector<char>(24, 'a')});
  m.push_back({4, {}});
  m.push_back({12, std::vector<char>(7, 'b')});
  m.push_back({net::kBulkMessageType, std::vector<char>(40, 'c')});
  m.push_back({6, std::vector<char>(big, 'd')});  // fragmented when larger than a frame
  m.push_back({2, std::vector<char>(3, 'e')});
  return m;
}

template <class T>
void put(std::vector<char>& b, const T& v) {
  const char* p = reinterpret_cast<const char*>(&v);
  b.insert(b.end(), p, p + sizeof v);
}

// The ring seed: the bytes RingWriter/flush_to_ring published, round by round (a reader that
// drains after each round frees the room the next one needs).
fuzz::Seed ring_seed(const std::string& name, uint8_t choice, size_t big) {
  Ring ring(capacity_of(choice));
  RingWriter writer(ring.ctl, ring.cap);
  RingReader reader(ring.ctl, ring.cap);
  Reassembler reasm;
  Outbox out;
  for (const Msg& m : sample(big)) out.push(m.type, m.body.data(), m.body.size(), nullptr, 0);
  std::vector<char> b{0, static_cast<char>(choice)};
  uint64_t tail = 0;
  for (int round = 0; round < 64 && !out.empty(); ++round) {
    bool published = false;
    flush_to_ring(writer, out, &published);
    const uint64_t now = ring.ctl->tail.load();
    const uint16_t n = static_cast<uint16_t>(now - tail);
    put(b, n);
    for (uint64_t i = tail; i < now; ++i) b.push_back(ring.data()[i & (ring.cap - 1)]);
    tail = now;
    drain_ring(1, reader, reasm, 16, touch);
  }
  return {name, std::move(b)};
}

fuzz::Seed batch_seed(const std::string& name) {
  std::vector<char> batch;
  for (const Msg& m : sample(100))
    append_batched(batch, m.type, m.body.data(), static_cast<uint32_t>(m.body.size()));
  std::vector<char> b{1};
  b.insert(b.end(), batch.begin(), batch.end());
  return {name, std::move(b)};
}

fuzz::Seed codec_seed(const std::string& name, std::vector<std::pair<uint16_t, uint16_t>> msgs) {
  std::vector<char> b{2};
  for (auto [type, len] : msgs) put(b, type), put(b, len);
  return {name, std::move(b)};
}

std::vector<fuzz::Seed> seeds() {
  return {
      ring_seed("ring_256_small", 0, 10),
      ring_seed("ring_256_fragmented", 0, 600),
      ring_seed("ring_1k_wraps", 2, 900),
      ring_seed("ring_8k", 5, 3000),
      batch_seed("batch"),
      codec_seed("codec_small", {{1, 0}, {2, 5}, {3, 16}, {4, 17}}),
      codec_seed("codec_fragments", {{6, 3000}, {7, 1}, {8, 240}, {9, 2000}}),
  };
}

}  // namespace

WEFT_FUZZ_TARGET(seeds, decode)
