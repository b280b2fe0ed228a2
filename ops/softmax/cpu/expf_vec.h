// exp for float, written so that a loop of calls auto-vectorizes (baseline x86-64 SSE2 at
// -O3, no -ffast-math): std::exp is a scalar library call (~6 ns per element), which made the
// CPU softmax 4.7x slower than torch's on 64x64.
//
// exp(x) = 2^k * exp(r), k = round(x / ln 2), r = x - k ln 2 in [-ln2/2, ln2/2]:
//   - k by the 1.5 * 2^23 trick: adding it rounds x / ln 2 to an integer (nearest even) and
//     leaves that integer in the low mantissa bits, so no float -> int conversion is needed
//     (a conversion of NaN would be undefined behaviour in C++);
//   - r by Cody-Waite: ln 2 split in a short high part (k * kLn2Hi is exact) and the rest;
//   - exp(r) by Cephes' degree-5 minimax polynomial, 1 + r + r^2 P(r);
//   - 2^k applied as two factors 2^(k/2) 2^(k-k/2), each a normal float for every k reached
//     here, so results past FLT_MAX overflow to inf and results below FLT_MIN round once
//     into the denormals (or to 0), as the correctly rounded exp would.
// Special values: x is clamped to [-104, 89] first (beyond, exp is 0 or inf in float), so
// -inf -> 0 and +inf -> inf; NaN fails both comparisons, stays NaN, and the arithmetic
// propagates it. Measured against float64 exp over every float of [-105, 90]: at most
// 0.99 ulp, 1.01 ulp in the AVX2 + FMA clone (tests/runtime/test_expf_vec.py checks <= 1.5).
//
// OPRT_EXP_CLONES on a function that loops over expf_vec compiles it twice, for baseline
// x86-64 (SSE2) and for x86-64-v3 (AVX2 + FMA: 8 lanes, and the polynomial's multiply-adds
// fused), picked at load time by the CPU it runs on (GCC's target_clones, an ifunc): the
// build flags stay baseline and no AVX-512 is needed. It halved the CPU softmax's time on an
// AVX2 machine. Both clones are measured by the test.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && defined(__linux__)
#define OPRT_EXP_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#define OPRT_EXP_HAS_V3 1
#else
#define OPRT_EXP_CLONES
#define OPRT_EXP_HAS_V3 0
#endif

namespace oprt {

// c ? a : b through bit masks. A plain ?: on x let GCC thread the clamped case into its own
// branch (constant-folding the rest of exp there), and the loop no longer vectorized.
inline float select_bits(bool c, float a, float b) {
  uint32_t ua, ub;
  std::memcpy(&ua, &a, 4);
  std::memcpy(&ub, &b, 4);
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  const uint32_t u = (ua & mask) | (ub & ~mask);
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

inline float expf_vec(float x) {
  constexpr float kLo = -104.0f;  // exp(-104) < 2^-150: rounds to 0
  constexpr float kHi = 89.0f;    // exp(89) > FLT_MAX: inf
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kRound = 12582912.0f;        // 1.5 * 2^23
  constexpr float kLn2Hi = 0.693359375f;       // 0x3f318000: 12 significant bits, k * kLn2Hi exact
  constexpr float kLn2Lo = -2.12194440e-4f;    // ln 2 - kLn2Hi
  x = select_bits(x < kLo, kLo, x);  // (NaN compares false both times: it passes through)
  x = select_bits(x > kHi, kHi, x);
  const float kb = x * kLog2e + kRound;
  const float kf = kb - kRound;
  uint32_t kb_bits, round_bits;
  std::memcpy(&kb_bits, &kb, 4);
  std::memcpy(&round_bits, &kRound, 4);
  const int32_t k = static_cast<int32_t>(kb_bits - round_bits);  // in [-150, 129] (any value for NaN)
  const float r = (x - kf * kLn2Hi) - kf * kLn2Lo;
  const float p = ((((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r +
                      4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f) * (r * r) + r) + 1.0f;
  const int32_t k1 = k / 2, k2 = k - k1;  // each in [-75, 65]: 2^k1 and 2^k2 are normal floats
  const uint32_t s1_bits = static_cast<uint32_t>(k1 + 127) << 23, s2_bits = static_cast<uint32_t>(k2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &s1_bits, 4);
  std::memcpy(&s2, &s2_bits, 4);
  return p * s1 * s2;
}

}  // namespace oprt
