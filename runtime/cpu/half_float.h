// f16 and bf16 storage types for the CPU backend, and dispatch over the three dtypes.
//
// Conversions round to nearest even, as torch (and the hardware) do, so a CPU result
// stored in f16/bf16 is bit-identical to torch's rounding of the same f32 value.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "errors.h"

namespace oprt {

struct f16 { uint16_t bits; };
struct bf16 { uint16_t bits; };

inline uint32_t float_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float bits_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

inline float to_float(float x) { return x; }
inline float to_float(bf16 x) { return bits_float(uint32_t{x.bits} << 16); }
inline float to_float(f16 x) {
  const uint32_t sign = uint32_t{x.bits & 0x8000u} << 16;
  const uint32_t exp = (x.bits >> 10) & 0x1f, mant = x.bits & 0x3ff;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));  // inf / nan
  return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
}

template <class T> T from_float(float v);
template <> inline float from_float<float>(float v) { return v; }
template <> inline bf16 from_float<bf16>(float v) {
  const uint32_t u = float_bits(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return bf16{static_cast<uint16_t>((u >> 16) | 0x40)};  // quiet NaN
  return bf16{static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1)) >> 16)};
}
template <> inline f16 from_float<f16>(float v) {
  const uint32_t u = float_bits(v);
  const uint16_t sign = (u >> 16) & 0x8000;
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return f16{static_cast<uint16_t>(sign | 0x7e00)};  // NaN
  if (a >= 0x477ff000u) return f16{static_cast<uint16_t>(sign | 0x7c00)};  // rounds past 65504: inf
  if (a < 0x38800000u) {  // below 2^-14: a subnormal step count, rounded to even by nearbyint
    const float steps = std::nearbyint(bits_float(a) * 16777216.0f);  // exact: scaling by 2^24
    return f16{static_cast<uint16_t>(sign | static_cast<uint16_t>(steps))};
  }
  uint32_t r = a - 0x38000000u;  // rebias the exponent from 127 to 15
  r += 0xfffu + ((r >> 13) & 1);  // round the 13 dropped mantissa bits to nearest even
  return f16{static_cast<uint16_t>(sign | (r >> 13))};
}

template <class T> struct Type { using type = T; };

// Calls fn(Type<T>{}) with T the storage type of dtype.
template <class F>
void dispatch_dtype(oprt_dtype dtype, F&& fn) {
  switch (dtype) {
    case OPRT_DTYPE_F32: return fn(Type<float>{});
    case OPRT_DTYPE_F16: return fn(Type<f16>{});
    case OPRT_DTYPE_BF16: return fn(Type<bf16>{});
  }
  fail(OPRT_STATUS_BAD_DTYPE, "dtype code ", static_cast<int>(dtype), " is unknown");
}

}  // namespace oprt
