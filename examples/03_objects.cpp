// 03 — objects: put a value once and pass its ref to many tasks; refs as top-level arguments are
// resolved before the task runs, refs nested in containers arrive as refs (the task reads them).
//   mpirun -n 4 ./03_objects
#include <weft/weft.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

// Top-level ref argument: the task receives the value.
double dot(const std::vector<double>& a, const std::vector<double>& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0);
}
WEFT_REMOTE(dot);

// Nested refs: the task receives refs and decides what and when to read.
double sum_of_parts(std::vector<weft::ObjectRef<double>> parts) {
  double s = 0;
  for (double x : weft::get(parts)) s += x;
  return s;
}
WEFT_REMOTE(sum_of_parts);

double partial_sum(const std::vector<double>& v, int begin, int end) {
  return std::accumulate(v.begin() + begin, v.begin() + end, 0.0);
}
WEFT_REMOTE(partial_sum);

int main(int argc, char** argv) {
  return weft::run(argc, argv, [] {
    const int n = 1 << 16;
    std::vector<double> ones(n, 1.0), ramp(n);
    std::iota(ramp.begin(), ramp.end(), 0.0);

    // put: the driver owns these objects; tasks on every rank read them by ref.
    weft::ObjectRef<std::vector<double>> a = weft::put(ones);
    weft::ObjectRef<std::vector<double>> b = weft::put(ramp);
    double d = weft::task(dot).remote(a, b).get();
    std::printf("dot(ones, ramp) over %d elements = %.0f\n", n, d);

    // Eight tasks share one put object: it is stored once, not copied into each submission.
    std::vector<weft::ObjectRef<double>> parts;
    for (int k = 0; k < 8; ++k) parts.push_back(weft::task(partial_sum).remote(b, k * n / 8, (k + 1) * n / 8));
    double total = weft::task(sum_of_parts).remote(parts).get();
    std::printf("sum of 8 partial sums, read through nested refs = %.0f\n", total);

    const double expect = double(n) * (n - 1) / 2;
    return (d == expect && total == expect) ? 0 : 1;
  });
}
