// Accuracy of oprt::expf_vec (ops/softmax/cpu/expf_vec.h) against float64 exp, driven by
// tests/runtime/test_expf_vec.py. Evaluated in blocks through a loop the compiler vectorizes, as the
// softmax kernel calls it, so the vector code is what is measured: the baseline build and, where
// the CPU has it, the x86-64-v3 (AVX2 + FMA) build that OPRT_EXP_CLONES also makes.
//
//   expf_vec_sweep STRIDE   every STRIDE-th float of [-105, 90] (by bit pattern; 1: all of them),
//                           every 4099-th of the rest of the float range, and the special values
// Prints per build "<build> max_ulp <value> at <x> checked <count>", and one "FAIL ..." line per
// wrong special value.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "expf_vec.h"

namespace {
float from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
uint32_t to_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

// Error of `got` in units in the last place of the float nearest to `want`.
double ulp_error(float got, double want) {
  const float nearest = static_cast<float>(want);
  if (std::isinf(nearest) || std::isinf(got)) return got == nearest ? 0.0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  int e;
  std::frexp(nearest == 0.0f ? std::numeric_limits<float>::min() : nearest, &e);
  const double ulp = std::ldexp(1.0, std::max(e - 24, -149));  // denormals: 2^-149
  return std::fabs(static_cast<double>(got) - want) / ulp;
}

using Evaluate = void (*)(const float*, float*, int);

__attribute__((noinline)) void evaluate_default(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = oprt::expf_vec(x[i]);
}

#if OPRT_EXP_HAS_V3
__attribute__((noinline, target("arch=x86-64-v3"))) void evaluate_v3(const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] = oprt::expf_vec(x[i]);
}
#endif

struct Sweep {
  Evaluate evaluate;
  double max_ulp = 0;
  float worst = 0;
  uint64_t checked = 0;
  std::vector<float> xs, ys;
  void add(float x) {
    xs.push_back(x);
    if (xs.size() == 4096) flush();
  }
  void flush() {
    ys.resize(xs.size());
    evaluate(xs.data(), ys.data(), static_cast<int>(xs.size()));
    for (size_t i = 0; i < xs.size(); ++i) {
      const double err = ulp_error(ys[i], std::exp(static_cast<double>(xs[i])));
      if (err > max_ulp) max_ulp = err, worst = xs[i];
    }
    checked += xs.size();
    xs.clear();
  }
};

void sweep(const char* build, Evaluate evaluate, uint32_t stride) {
  Sweep s;
  s.evaluate = evaluate;
  const uint32_t pos_end = to_bits(90.0f), neg_end = to_bits(-105.0f);
  for (uint64_t u = 0; u <= pos_end; u += stride) s.add(from_bits(static_cast<uint32_t>(u)));
  for (uint64_t u = 0x80000000u; u <= neg_end; u += stride) s.add(from_bits(static_cast<uint32_t>(u)));
  for (uint64_t u = pos_end; u < 0x7f800000u; u += 4099) s.add(from_bits(static_cast<uint32_t>(u)));
  for (uint64_t u = neg_end; u < 0xff800000u; u += 4099) s.add(from_bits(static_cast<uint32_t>(u)));
  // the edges: overflow, the last normal and denormal results, FLT_MAX, denormal inputs
  const float edges[] = {88.7228317f, 88.7228394f, 88.72284f, -87.3365479f, -87.33655f, -103.278931f, -103.972f,
                         -103.9721f, 3.4028235e38f, -3.4028235e38f, 1e-45f, -1e-45f, 0.0f, -0.0f, 1.17549435e-38f};
  for (float x : edges) s.add(x);
  s.flush();
  std::printf("%s max_ulp %.4f at %.9g checked %llu\n", build, s.max_ulp, s.worst,
              static_cast<unsigned long long>(s.checked));

  const float inf = std::numeric_limits<float>::infinity();
  float special[4] = {inf, -inf, std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()};
  float out[4];
  evaluate(special, out, 4);
  if (!(out[0] == inf)) std::printf("FAIL %s exp(inf) = %g\n", build, out[0]);
  if (!(out[1] == 0.0f && !std::signbit(out[1]))) std::printf("FAIL %s exp(-inf) = %g\n", build, out[1]);
  if (!std::isnan(out[2])) std::printf("FAIL %s exp(nan) = %g\n", build, out[2]);
  if (!std::isnan(out[3])) std::printf("FAIL %s exp(-nan) = %g\n", build, out[3]);
}
}  // namespace

int main(int argc, char** argv) {
  const uint32_t stride = argc > 1 ? static_cast<uint32_t>(std::atol(argv[1])) : 1;
  sweep("default", evaluate_default, stride);
#if OPRT_EXP_HAS_V3
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) sweep("x86-64-v3", evaluate_v3, stride);
#endif
  return 0;
}
