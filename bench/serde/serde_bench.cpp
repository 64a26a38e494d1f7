// weft::serde encode+decode round trips, each beside a baseline measured in the same run:
//   vector<double> 1 MiB    vs two memcpy (into a buffer and back out)
//   small raw struct         vs two memcpy of sizeof(T)
//   small Boost struct       vs a hand-written encoder/decoder
//   map<string,int> x1000    vs a hand-written encoder/decoder, and vs Boost over stringstream
// Usage: weft_bench_serde [seconds per case, default 0.3]
#include <algorithm>
#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "weft/serialization.hpp"

namespace {

using Clock = std::chrono::steady_clock;
double g_seconds = 0.3;
size_t g_sink = 0;  // printed at the end, so results stay observable

// Median time of one call of f in ns, over batches that together take about g_seconds.
template <class F>
double time_ns(F&& f) {
  size_t batch = 1;
  for (;;) {  // size a batch to ~1 ms
    auto t0 = Clock::now();
    for (size_t i = 0; i < batch; ++i) f();
    double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    if (ns > 1e6 || batch > (size_t{1} << 30)) break;
    batch *= 2;
  }
  std::vector<double> per_call;
  auto end = Clock::now() + std::chrono::duration<double>(g_seconds);
  while (Clock::now() < end || per_call.size() < 5) {
    auto t0 = Clock::now();
    for (size_t i = 0; i < batch; ++i) f();
    per_call.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / batch);
  }
  std::nth_element(per_call.begin(), per_call.begin() + per_call.size() / 2, per_call.end());
  return per_call[per_call.size() / 2];
}

void row(const char* name, const char* baseline, size_t bytes, double ns, double base_ns) {
  char rate[32] = "";
  if (bytes >= 4096) std::snprintf(rate, sizeof rate, "%.2f GB/s", bytes / ns);
  std::printf("%-28s %12.1f ns %-12s | %-26s %12.1f ns | ratio %5.2fx\n", name, ns, rate, baseline,
              base_ns, ns / base_ns);
}

struct Small {
  int32_t id;
  double x, y, z;
  uint8_t flags;
};

struct Named {
  int32_t id = 0;
  std::string name;
  double value = 0;
  template <class Archive>
  void serialize(Archive& ar, unsigned) {
    ar& id& name& value;
  }
};

void bench_vector() {
  std::vector<double> v((1 << 20) / sizeof(double));
  for (size_t i = 0; i < v.size(); ++i) v[i] = i * 0.25;
  const size_t bytes = v.size() * sizeof(double);
  weft::serde::Buffer out(bytes + 64);
  std::vector<double> back;
  double ns = time_ns([&] {
    out.clear();
    weft::serde::encode(out, v);
    weft::serde::Reader in(out.data(), out.size());
    weft::serde::decode(in, back);
    g_sink += back.size();
  });
  std::vector<char> buf(bytes + 8);
  std::vector<double> dst(v.size());
  double base = time_ns([&] {
    std::memcpy(buf.data(), v.data(), bytes);
    std::memcpy(dst.data(), buf.data(), bytes);
    g_sink += dst[1] > 0;
  });
  row("vector<double> 1 MiB", "2x memcpy (buffers reused)", 2 * bytes, ns, base);
  // The allocating form the runtime uses: to_bytes + from_bytes (fresh vectors each time).
  double ns2 = time_ns([&] {
    std::vector<char> b = weft::serde::to_bytes(v);
    auto r = weft::serde::from_bytes<std::vector<double>>(b);
    g_sink += r.size();
  });
  double base2 = time_ns([&] {
    std::vector<char> b(bytes);
    std::memcpy(b.data(), v.data(), bytes);
    std::vector<double> r(v.size());
    std::memcpy(r.data(), b.data(), bytes);
    g_sink += r.size();
  });
  row("to_bytes+from_bytes 1 MiB", "alloc + 2x memcpy", 2 * bytes, ns2, base2);
}

void bench_small() {
  Small s{7, 1, 2, 3, 9};
  weft::serde::Buffer out(64);
  double ns = time_ns([&] {
    out.clear();
    weft::serde::encode(out, s);
    weft::serde::Reader in(out.data(), out.size());
    g_sink += weft::serde::decode<Small>(in).id;
  });
  char buf[sizeof(Small)];
  double base = time_ns([&] {
    std::memcpy(buf, &s, sizeof s);
    asm volatile("" ::"r"(buf) : "memory");
    Small r;
    std::memcpy(&r, buf, sizeof r);
    g_sink += r.id;
  });
  row("small raw struct (32 B)", "2x memcpy", 0, ns, base);

  Named n{42, "a small name", 2.5};
  double ns2 = time_ns([&] {
    out.clear();
    weft::serde::encode(out, n);
    weft::serde::Reader in(out.data(), out.size());
    g_sink += weft::serde::decode<Named>(in).id;
  });
  double base2 = time_ns([&] {
    out.clear();
    uint64_t len = n.name.size();
    out.append(&n.id, 4);
    out.append(&len, 8);
    out.append(n.name.data(), len);
    out.append(&n.value, 8);
    weft::serde::Reader in(out.data(), out.size());
    Named r;
    in.read(&r.id, 4);
    in.read(&len, 8);
    r.name.assign(in.skip(len), len);
    in.read(&r.value, 8);
    g_sink += r.id;
  });
  row("small Boost struct", "hand-written", 0, ns2, base2);
}

void bench_map() {
  std::map<std::string, int> m;
  for (int i = 0; i < 1000; ++i) m.emplace("key-" + std::to_string(i * 7919), i);
  weft::serde::Buffer out(64 << 10);
  std::map<std::string, int> back;
  double ns = time_ns([&] {
    out.clear();
    weft::serde::encode(out, m);
    weft::serde::Reader in(out.data(), out.size());
    weft::serde::decode(in, back);
    g_sink += back.size();
  });
  double base = time_ns([&] {
    out.clear();
    uint64_t n = m.size();
    out.append(&n, 8);
    for (const auto& [k, v] : m) {
      uint64_t len = k.size();
      out.append(&len, 8);
      out.append(k.data(), len);
      out.append(&v, sizeof v);
    }
    weft::serde::Reader in(out.data(), out.size());
    std::map<std::string, int> r;
    in.read(&n, 8);
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t len;
      in.read(&len, 8);
      std::string k(in.skip(len), len);
      int v;
      in.read(&v, sizeof v);
      r.emplace_hint(r.end(), std::move(k), v);
    }
    g_sink += r.size();
  });
  row("map<string,int> x1000", "hand-written", 0, ns, base);
  double base2 = time_ns([&] {
    std::stringstream ss;
    {
      boost::archive::binary_oarchive oa(ss, boost::archive::no_header);
      oa << m;
    }
    std::map<std::string, int> r;
    boost::archive::binary_iarchive ia(ss, boost::archive::no_header);
    ia >> r;
    g_sink += r.size();
  });
  row("map<string,int> x1000", "Boost over stringstream", 0, ns, base2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_seconds = std::atof(argv[1]);
  std::printf("%-28s %30s | %-26s %15s |\n", "case (encode+decode)", "weft::serde", "baseline", "");
  bench_vector();
  bench_small();
  bench_map();
  std::printf("(checksum %zu)\n", g_sink);
  return 0;
}
