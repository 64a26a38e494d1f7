// wordcount — MapReduce over an HDF5 text file. Map tasks each read one byte range of the
// dataset "/text" (a hyperslab, straight from the file, on whatever rank runs them) and count
// words into R partitions; reduce tasks receive the map results as nested refs and merge their
// partition. The driver checks the result against a serial count (the baseline, timed beside).
//   ./wordcount --input words.h5 --make-input [--words 200000]      # write a test input first
//   mpirun -n 4 ./wordcount --input words.h5 [--maps 16] [--reduces 4]
// Prints "wordcount OK words=<n> distinct=<k> top=<word>:<count>".
#include <hdf5.h>
#include <weft/weft.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Counts = std::map<std::string, int64_t>;

// One HDF5 handle, closed by its destructor whatever happens.
class H5Handle {
 public:
  H5Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(id), close_(close) {
    if (id_ < 0) throw std::runtime_error("HDF5: cannot " + what);
  }
  ~H5Handle() { close_(id_); }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  hid_t get() const { return id_; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

// Debian's HDF5 is not built thread-safe, and several map tasks may run at once in one rank.
std::mutex g_hdf5;

// A text of `words` words drawn from a Zipf-like vocabulary, so counts differ widely.
void make_input(const std::string& path, int64_t words) {
  std::lock_guard<std::mutex> lock(g_hdf5);
  static const char* kVocab[] = {"the", "of", "and", "rank", "task", "actor", "object", "node",
                                 "weft", "mpi", "store", "ref", "batch", "gpu", "spill", "owner"};
  std::mt19937_64 gen(42);
  std::discrete_distribution<int> pick({16, 12, 10, 8, 7, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1});
  std::string text;
  text.reserve(words * 6);
  for (int64_t i = 0; i < words; ++i) {
    text += kVocab[pick(gen)];
    text += (i % 12 == 11) ? '\n' : ' ';
  }
  H5Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose,
                "create " + path);
  hsize_t dims[1] = {text.size()};
  H5Handle space(H5Screate_simple(1, dims, nullptr), H5Sclose, "create a dataspace");
  H5Handle set(H5Dcreate2(file.get(), "text", H5T_NATIVE_CHAR, space.get(), H5P_DEFAULT,
                          H5P_DEFAULT, H5P_DEFAULT),
               H5Dclose, "create dataset /text in " + path);
  if (H5Dwrite(set.get(), H5T_NATIVE_CHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, text.data()) < 0)
    throw std::runtime_error("HDF5: cannot write " + path);
}

// Bytes [begin, end) of /text, clamped to the dataset.
std::string read_range(const std::string& path, int64_t begin, int64_t end, int64_t* total) {
  std::lock_guard<std::mutex> lock(g_hdf5);
  H5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open " + path);
  H5Handle set(H5Dopen2(file.get(), "text", H5P_DEFAULT), H5Dclose, "open /text in " + path);
  H5Handle space(H5Dget_space(set.get()), H5Sclose, "get the dataspace");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(space.get(), &n, nullptr);
  if (total) *total = static_cast<int64_t>(n);
  begin = std::clamp<int64_t>(begin, 0, n);
  end = std::clamp<int64_t>(end, begin, n);
  std::string out(end - begin, '\0');
  if (out.empty()) return out;
  hsize_t start[1] = {hsize_t(begin)}, count[1] = {hsize_t(end - begin)};
  H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
  H5Handle mem(H5Screate_simple(1, count, nullptr), H5Sclose, "create a memory dataspace");
  if (H5Dread(set.get(), H5T_NATIVE_CHAR, mem.get(), space.get(), H5P_DEFAULT, out.data()) < 0)
    throw std::runtime_error("HDF5: cannot read " + path);
  return out;
}

int64_t dataset_size(const std::string& path) {
  int64_t n = 0;
  read_range(path, 0, 0, &n);
  return n;
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\0'; }

// Counts the words that *start* in [begin, end): a word straddling `end` belongs to this range,
// one straddling `begin` to the previous one.
void count_range(const std::string& path, int64_t begin, int64_t end, Counts& out) {
  const int64_t pad = 64;  // longer than any word of the input
  std::string s = read_range(path, std::max<int64_t>(0, begin - 1), end + pad, nullptr);
  size_t i = 0;
  if (begin > 0) {  // s[0] is the byte before `begin`
    if (!is_space(s[0])) while (i < s.size() && !is_space(s[i])) ++i;  // skip the straddler
    else i = 1;
  }
  const size_t stop = static_cast<size_t>(end - std::max<int64_t>(0, begin - 1));
  while (i < s.size() && i < stop) {
    while (i < s.size() && is_space(s[i])) ++i;
    if (i >= s.size() || i >= stop) break;
    size_t j = i;
    while (j < s.size() && !is_space(s[j])) ++j;
    ++out[s.substr(i, j - i)];
    i = j;
  }
}

}  // namespace

// Map: counts of one byte range, split into `reduces` partitions by the word's hash.
std::vector<Counts> map_range(std::string path, int64_t begin, int64_t end, int reduces) {
  Counts c;
  count_range(path, begin, end, c);
  std::vector<Counts> parts(reduces);
  for (auto& [w, n] : c) parts[std::hash<std::string>{}(w) % reduces][w] = n;
  return parts;
}
WEFT_REMOTE(map_range);

// Reduce: partition `r` of every map result. The refs arrive unresolved (nested in a vector),
// so this task reads them itself, from wherever they are.
Counts reduce_partition(std::vector<weft::ObjectRef<std::vector<Counts>>> maps, int r) {
  Counts total;
  for (const auto& parts : weft::get(maps))
    for (const auto& [w, n] : parts.at(r)) total[w] += n;
  return total;
}
WEFT_REMOTE(reduce_partition);

namespace {
std::string flag(int argc, char** argv, const char* name, const std::string& def) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return i + 1 < argc ? argv[i + 1] : "1";
  }
  return def;
}
bool has_flag(int argc, char** argv, const char* name) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return true;
  return false;
}
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  return weft::run(argc, argv, [&] {
    const std::string path = flag(argc, argv, "--input", "wordcount_input.h5");
    const int maps = std::stoi(flag(argc, argv, "--maps", "16"));
    const int reduces = std::stoi(flag(argc, argv, "--reduces", "4"));
    if (maps < 1 || reduces < 1) {
      std::fprintf(stderr, "wordcount: --maps and --reduces must be >= 1\n");
      return 2;
    }
    if (has_flag(argc, argv, "--make-input")) {
      const int64_t words = std::stoll(flag(argc, argv, "--words", "200000"));
      make_input(path, words);
      std::printf("wrote %lld words to %s (dataset /text)\n", (long long)words, path.c_str());
    }
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become exceptions, not stack dumps
    const int64_t size = dataset_size(path);

    auto t0 = std::chrono::steady_clock::now();
    std::vector<weft::ObjectRef<std::vector<Counts>>> mapped;
    for (int m = 0; m < maps; ++m)
      mapped.push_back(weft::task(map_range).remote(path, size * m / maps, size * (m + 1) / maps, reduces));
    std::vector<weft::ObjectRef<Counts>> reduced;
    for (int r = 0; r < reduces; ++r) reduced.push_back(weft::task(reduce_partition).remote(mapped, r));
    Counts result;
    for (auto& part : weft::get(reduced)) result.merge(part);
    const double t_weft = seconds_since(t0);

    auto t1 = std::chrono::steady_clock::now();
    Counts serial;
    count_range(path, 0, size, serial);
    const double t_serial = seconds_since(t1);

    int64_t words = 0;
    std::pair<std::string, int64_t> top{"", 0};
    for (auto& [w, n] : result) {
      words += n;
      if (n > top.second) top = {w, n};
    }
    std::printf("%d maps + %d reduces on %d rank(s): %.3f s; serial baseline %.3f s; ratio %.2fx\n",
                maps, reduces, weft::world_size(), t_weft, t_serial, t_serial / t_weft);
    if (result != serial) {
      std::printf("wordcount FAILED: MapReduce counts differ from the serial count\n");
      return 1;
    }
    std::printf("wordcount OK words=%lld distinct=%zu top=%s:%lld\n", (long long)words,
                result.size(), top.first.c_str(), (long long)top.second);
    return 0;
  });
}
