// CUDA's execution model for the host C++ compiler: the lab kernel's source, unchanged, compiles
// with g++ against this header and runs on the CPU (cuda_cpu.py says how and why).
//
// What it supplies: the qualifiers (__global__, __device__, __shared__, ...), the built-in
// indices (threadIdx, blockIdx, blockDim, gridDim), __syncthreads, the warp intrinsics (shuffles,
// ballot, __activemask, __syncwarp), atomics, __half and __nv_bfloat16, the math intrinsics the
// labs use, and the launch. The work is done by runtime.cpp (a separate, trusted object): every
// CUDA thread is a fiber; fibers switch only at barriers and warp collectives, so the threads of a
// block really interleave there, and nowhere else.
//
// The student's translation unit is compiled with -fsanitize=thread, but not linked with TSan:
// the __tsan_read*/__tsan_write* calls GCC inserts before every load and store land in
// runtime.cpp, which checks each address (bounds of the lab's buffers, shared-memory races, reads of
// shared memory no thread of the block wrote).
#pragma once

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>

// CUDA declares isfinite, isnan and isinf for float and double at global scope; <cmath> only in std::
// (a softmax's `isfinite(m)` in a template failed the CPU build: "no arguments that depend on a template
// parameter")
using std::isfinite;
using std::isinf;
using std::isnan;

// The macros a kernel sees are nvcc's device pass's (sm_90), and no others of ours: a kernel must
// not be able to tell this build from a GPU's (cuda_build.check_source lets #if test only these,
// PARITY_MACROS, and the student's own; tests/grader/test_cuda_source_check.py compares them with nvcc -E -dM).
#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 900  // the kernel's device path is the one that runs here
#endif
#define __CUDA_ARCH_LIST__ 900
#define __CUDACC__ 1
#define __NVCC__ 1

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __grid_constant__
#define __managed__
#define __constant__ static
// One copy per launch's running block: blocks run one after the other, so a function-local static
// is the block's shared memory (not cleared between blocks, as on a GPU nothing clears it either).
#define __shared__ static
#define __align__(n) alignas(n)
#define __CUDA_ALIGN__(n) alignas(n)

struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

#define __CUDA_CPU_VEC(name, T, align)                  \
  struct alignas(align) name##1 { T x; };               \
  struct alignas(align * 2) name##2 { T x, y; };        \
  struct name##3 { T x, y, z; };                        \
  struct alignas(align * 4) name##4 { T x, y, z, w; };
__CUDA_CPU_VEC(float, float, 4)
__CUDA_CPU_VEC(int, int, 4)
__CUDA_CPU_VEC(short, short, 2)
__CUDA_CPU_VEC(ushort, unsigned short, 2)
#undef __CUDA_CPU_VEC
struct alignas(4) uint1 { unsigned int x; };
struct alignas(8) uint2 { unsigned int x, y; };
struct alignas(16) uint4 { unsigned int x, y, z, w; };
struct alignas(16) double2 { double x, y; };
struct alignas(8) longlong1 { long long x; };
struct alignas(16) longlong2 { long long x, y; };
inline float2 make_float2(float x, float y) { return float2{x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline int2 make_int2(int x, int y) { return int2{x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }
inline dim3 make_dim3(unsigned x, unsigned y, unsigned z) { return dim3(x, y, z); }

typedef int cudaError_t;
typedef struct CUstream_st* cudaStream_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorInvalidConfiguration = 9, cudaErrorLaunchFailure = 719 };

namespace __cuda_cpu {
struct Builtins { uint3 threadIdx, blockIdx; dim3 blockDim, gridDim; };
extern Builtins builtins;  // set by the scheduler each time a fiber is switched in

// Warp collectives: one rendezvous of the lanes named in the mask (runtime.cpp).
enum Kind { SHFL = 1, SHFL_UP, SHFL_DOWN, SHFL_XOR, BALLOT, ANY, ALL, SYNCWARP, MATCH_ANY };
void collective(int kind, unsigned mask, void* value, int size, int arg, int width, int line);
void syncthreads(int line);
int syncthreads_reduce(int kind, int predicate, int line);  // kind: 0 count, 1 and, 2 or
unsigned activemask();
void atomic_enter(int line);  // the accesses up to atomic_exit are one atomic operation
void atomic_exit();
bool cas_contended(void* address, int line);  // fail this atomicCAS once, as under contention (runtime.cpp)
// What a contended CAS returns: the value next to `v` in its bits (another thread's update, as far as the
// caller can tell), not a NaN where the bits are a float's (a float atomic max's -inf stays a number)
template <class T>
inline T beside(T v) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "atomicCAS takes 16-, 32- and 64-bit words");
  using Bits = typename std::conditional<sizeof(T) == 2, unsigned short,
               typename std::conditional<sizeof(T) == 4, unsigned, unsigned long long>::type>::type;
  const int mantissa = sizeof(T) == 2 ? 10 : sizeof(T) == 4 ? 23 : 52, exponent = sizeof(T) == 2 ? 5 : sizeof(T) == 4 ? 8 : 11;
  const Bits exp_mask = (Bits)(((Bits(1) << exponent) - 1) << mantissa), man_mask = (Bits)((Bits(1) << mantissa) - 1);
  Bits b;
  std::memcpy(&b, &v, sizeof b);
  Bits up = (Bits)(b + 1);
  if ((up & exp_mask) == exp_mask && (up & man_mask)) up = (Bits)(b - 1);  // b + 1 would read as a NaN
  T out;
  std::memcpy(&out, &up, sizeof out);
  return out;
}
void trap(int line);
void* dynamic_shared();
int kernel_printf(const char* format, ...);
long long clock_counter();
int last_error(bool reset);
int launch_raw(dim3 grid, dim3 block, size_t shared_bytes, void (*body)(void*), void* context);
long long grid_cap(long long gpu_cap);  // the most blocks an element-wise lab's launcher starts here

struct Config {
  dim3 grid, block;
  size_t shared;
  Config(dim3 g, dim3 b, size_t s = 0, cudaStream_t = nullptr) : grid(g), block(b), shared(s) {}
};
template <class F>
inline void launch(const Config& c, F&& body) {
  using Body = typename std::remove_reference<F>::type;
  launch_raw(c.grid, c.block, c.shared, [](void* p) { (*static_cast<Body*>(p))(); }, (void*)&body);
}

template <class T>
inline T shuffle(int line, int kind, unsigned mask, T value, int arg, int width = 32) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 16, "shuffles move values of up to 16 bytes");
  collective(kind, mask, &value, (int)sizeof(T), arg, width, line);
  return value;
}
inline unsigned vote(int line, int kind, unsigned mask, int predicate) {
  unsigned v = predicate != 0;
  collective(kind, mask, &v, (int)sizeof v, 0, 32, line);
  return v;
}
template <class T, class F>
inline T atomic(int line, T* address, F update) {
  atomic_enter(line);
  T old = *address;
  *address = update(old);
  atomic_exit();
  return old;
}
}  // namespace __cuda_cpu

#define threadIdx (::__cuda_cpu::builtins.threadIdx)
#define blockIdx (::__cuda_cpu::builtins.blockIdx)
#define blockDim (::__cuda_cpu::builtins.blockDim)
#define gridDim (::__cuda_cpu::builtins.gridDim)
constexpr int warpSize = 32;

#define __syncthreads() ::__cuda_cpu::syncthreads(__LINE__)
#define __syncthreads_count(p) ::__cuda_cpu::syncthreads_reduce(0, (p), __LINE__)
#define __syncthreads_and(p) ::__cuda_cpu::syncthreads_reduce(1, (p), __LINE__)
#define __syncthreads_or(p) ::__cuda_cpu::syncthreads_reduce(2, (p), __LINE__)
#define __syncwarp(...) ::__cuda_cpu::vote(__LINE__, ::__cuda_cpu::SYNCWARP, ::__cuda_cpu::mask_or_full(__VA_ARGS__), 0)
#define __shfl_sync(...) ::__cuda_cpu::shuffle(__LINE__, ::__cuda_cpu::SHFL, __VA_ARGS__)
#define __shfl_up_sync(...) ::__cuda_cpu::shuffle(__LINE__, ::__cuda_cpu::SHFL_UP, __VA_ARGS__)
#define __shfl_down_sync(...) ::__cuda_cpu::shuffle(__LINE__, ::__cuda_cpu::SHFL_DOWN, __VA_ARGS__)
#define __shfl_xor_sync(...) ::__cuda_cpu::shuffle(__LINE__, ::__cuda_cpu::SHFL_XOR, __VA_ARGS__)
#define __ballot_sync(mask, p) ::__cuda_cpu::vote(__LINE__, ::__cuda_cpu::BALLOT, (mask), (p))
#define __any_sync(mask, p) ((int)::__cuda_cpu::vote(__LINE__, ::__cuda_cpu::ANY, (mask), (p)))
#define __all_sync(mask, p) ((int)::__cuda_cpu::vote(__LINE__, ::__cuda_cpu::ALL, (mask), (p)))
#define __activemask() ::__cuda_cpu::activemask()
#define __trap() ::__cuda_cpu::trap(__LINE__)
#define printf(...) ::__cuda_cpu::kernel_printf(__VA_ARGS__)
namespace __cuda_cpu {
inline unsigned mask_or_full() { return 0xffffffffu; }
inline unsigned mask_or_full(unsigned m) { return m; }
}  // namespace __cuda_cpu

inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}
inline void __nanosleep(unsigned) {}
inline long long clock64() { return ::__cuda_cpu::clock_counter(); }
inline cudaError_t cudaGetLastError() { return ::__cuda_cpu::last_error(true); }
inline cudaError_t cudaPeekAtLastError() { return ::__cuda_cpu::last_error(false); }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline const char* cudaGetErrorString(cudaError_t e) { return e ? "CUDA error (CPU build)" : "no error"; }
// Device queries, for launches sized to the machine (the chapters' step kernels): the CPU poses as a
// small GPU of 4 SMs, each holding 2048 threads, so an occupancy-sized grid stays a few blocks here.
enum cudaDeviceAttr { cudaDevAttrMaxThreadsPerBlock = 1, cudaDevAttrMultiProcessorCount = 16,
                      cudaDevAttrMaxThreadsPerMultiProcessor = 39 };
inline cudaError_t cudaGetDevice(int* device) { *device = 0; return cudaSuccess; }
inline cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
  *value = attr == cudaDevAttrMultiProcessorCount ? 4 : attr == cudaDevAttrMaxThreadsPerBlock ? 1024 : 2048;
  return cudaSuccess;
}
template <class Kernel>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, Kernel, int block_size, size_t) {
  *blocks = block_size > 0 ? 2048 / block_size : 0;
  return cudaSuccess;
}

// Atomics: fibers switch only at barriers and warp collectives, so a read-modify-write between
// atomic_enter and atomic_exit is atomic; the race check leaves those accesses out.
#define __CUDA_CPU_ATOMIC(name, expr)                                                       \
  template <class T, class U>                                                               \
  inline T name##_at(int line, T* a, U v) {                                                 \
    return ::__cuda_cpu::atomic(line, a, [&](T old) { return (T)(expr); });                 \
  }
__CUDA_CPU_ATOMIC(atomicAdd, old + (T)v)
__CUDA_CPU_ATOMIC(atomicSub, old - (T)v)
__CUDA_CPU_ATOMIC(atomicExch, (T)v)
__CUDA_CPU_ATOMIC(atomicMax, old < (T)v ? (T)v : old)
__CUDA_CPU_ATOMIC(atomicMin, (T)v < old ? (T)v : old)
__CUDA_CPU_ATOMIC(atomicAnd, old & (T)v)
__CUDA_CPU_ATOMIC(atomicOr, old | (T)v)
__CUDA_CPU_ATOMIC(atomicXor, old ^ (T)v)
__CUDA_CPU_ATOMIC(atomicInc, old >= (T)v ? 0 : old + 1)
__CUDA_CPU_ATOMIC(atomicDec, (old == 0 || old > (T)v) ? (T)v : old - 1)
#undef __CUDA_CPU_ATOMIC
template <class T, class U, class V>
inline T atomicCAS_at(int line, T* a, U compare, V v) {
  // where it would succeed, another thread's update may land first under contention (cas_contended): then
  // it fails, returning a value other than `compare` and storing nothing; where it fails anyway, it fails
  bool lost = false;
  const T seen = ::__cuda_cpu::atomic(line, a, [&](T old) {
    if (old != (T)compare) return old;
    lost = ::__cuda_cpu::cas_contended((void*)a, line);
    return lost ? old : (T)v;
  });
  if (!lost) return seen;
  return ::__cuda_cpu::beside(seen);
}
#define atomicAdd(...) atomicAdd_at(__LINE__, __VA_ARGS__)
#define atomicSub(...) atomicSub_at(__LINE__, __VA_ARGS__)
#define atomicExch(...) atomicExch_at(__LINE__, __VA_ARGS__)
#define atomicMax(...) atomicMax_at(__LINE__, __VA_ARGS__)
#define atomicMin(...) atomicMin_at(__LINE__, __VA_ARGS__)
#define atomicAnd(...) atomicAnd_at(__LINE__, __VA_ARGS__)
#define atomicOr(...) atomicOr_at(__LINE__, __VA_ARGS__)
#define atomicXor(...) atomicXor_at(__LINE__, __VA_ARGS__)
#define atomicInc(...) atomicInc_at(__LINE__, __VA_ARGS__)
#define atomicDec(...) atomicDec_at(__LINE__, __VA_ARGS__)
#define atomicCAS(...) atomicCAS_at(__LINE__, __VA_ARGS__)
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd

// Loads through the read-only / streaming caches are plain loads here.
template <class T> inline T __ldg(const T* p) { return *p; }
template <class T> inline T __ldcg(const T* p) { return *p; }
template <class T> inline T __ldca(const T* p) { return *p; }
template <class T> inline T __ldcs(const T* p) { return *p; }
template <class T> inline T __ldlu(const T* p) { return *p; }
template <class T> inline T __ldcv(const T* p) { return *p; }
template <class T> inline void __stcg(T* p, T v) { *p = v; }
template <class T> inline void __stcs(T* p, T v) { *p = v; }
template <class T> inline void __stwb(T* p, T v) { *p = v; }
template <class T> inline void __stwt(T* p, T v) { *p = v; }

// ---- 16-bit floats: storage types with round-to-nearest-even conversions ----
namespace __cuda_cpu {
inline unsigned f2u(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float u2f(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
inline unsigned short float_to_half_bits(float f) {
  const unsigned u = f2u(f), sign = (u >> 16) & 0x8000u, exp = (u >> 23) & 0xffu;
  unsigned mant = u & 0x7fffffu;
  if (exp == 0xff) return (unsigned short)(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0u));
  const int e = (int)exp - 127 + 15;
  if (e >= 31) return (unsigned short)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return (unsigned short)sign;
    mant |= 0x800000u;
    const int shift = 14 - e;
    unsigned half = mant >> shift;
    const unsigned rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1u))) ++half;
    return (unsigned short)(sign | half);
  }
  unsigned half = ((unsigned)e << 10) | (mant >> 13);
  const unsigned rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: right
  return (unsigned short)(sign | half);
}
inline float half_bits_to_float(unsigned short h) {
  const unsigned sign = (unsigned)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return u2f(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    const float v = (float)mant * 5.9604644775390625e-08f;  // 2^-24
    return sign ? -v : v;
  }
  return u2f(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}
inline unsigned short float_to_bf16_bits(float f) {
  const unsigned u = f2u(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // quiet NaN
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
inline float bf16_bits_to_float(unsigned short b) { return u2f((unsigned)b << 16); }
}  // namespace __cuda_cpu

#define __CUDA_CPU_16BIT(Name, to_bits, from_bits)                                                   \
  struct Name {                                                                                      \
    unsigned short __x;                                                                              \
    Name() = default;                                                                                \
    Name(float f) : __x(::__cuda_cpu::to_bits(f)) {}                                                 \
    Name(double d) : __x(::__cuda_cpu::to_bits((float)d)) {}                                         \
    template <class I, typename std::enable_if<std::is_integral<I>::value, int>::type = 0>           \
    Name(I i) : __x(::__cuda_cpu::to_bits((float)i)) {}                                              \
    operator float() const { return ::__cuda_cpu::from_bits(__x); }                                  \
    Name& operator+=(const Name& o) { return *this = Name(float(*this) + float(o)); }                \
    Name& operator-=(const Name& o) { return *this = Name(float(*this) - float(o)); }                \
    Name& operator*=(const Name& o) { return *this = Name(float(*this) * float(o)); }                \
    Name& operator/=(const Name& o) { return *this = Name(float(*this) / float(o)); }                \
  };                                                                                                 \
  inline Name operator+(const Name& a, const Name& b) { return Name(float(a) + float(b)); }          \
  inline Name operator-(const Name& a, const Name& b) { return Name(float(a) - float(b)); }          \
  inline Name operator*(const Name& a, const Name& b) { return Name(float(a) * float(b)); }          \
  inline Name operator/(const Name& a, const Name& b) { return Name(float(a) / float(b)); }          \
  inline Name operator-(const Name& a) { Name r = a; r.__x ^= 0x8000u; return r; }                   \
  inline bool operator==(const Name& a, const Name& b) { return float(a) == float(b); }              \
  inline bool operator!=(const Name& a, const Name& b) { return float(a) != float(b); }              \
  inline bool operator<(const Name& a, const Name& b) { return float(a) < float(b); }                \
  inline bool operator>(const Name& a, const Name& b) { return float(a) > float(b); }                \
  inline bool operator<=(const Name& a, const Name& b) { return float(a) <= float(b); }              \
  inline bool operator>=(const Name& a, const Name& b) { return float(a) >= float(b); }
__CUDA_CPU_16BIT(__half, float_to_half_bits, half_bits_to_float)
__CUDA_CPU_16BIT(__nv_bfloat16, float_to_bf16_bits, bf16_bits_to_float)
#undef __CUDA_CPU_16BIT
typedef __half half;
typedef __nv_bfloat16 nv_bfloat16;
struct alignas(4) __half2 { __half x, y; };
struct alignas(4) __nv_bfloat162 { __nv_bfloat16 x, y; };
typedef __half2 half2;

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __double2half(double d) { return __half(d); }
inline float __half2float(__half h) { return float(h); }
inline __half __int2half_rn(int i) { return __half((float)i); }
inline int __half2int_rz(__half h) { return (int)float(h); }
inline __half __ushort_as_half(unsigned short u) { __half h; h.__x = u; return h; }
inline unsigned short __half_as_ushort(__half h) { return h.__x; }
inline __half2 __floats2half2_rn(float a, float b) { return __half2{__half(a), __half(b)}; }
inline __half2 __float2half2_rn(float a) { return __half2{__half(a), __half(a)}; }
inline float __low2float(__half2 h) { return float(h.x); }
inline float __high2float(__half2 h) { return float(h.y); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return float(b); }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { __nv_bfloat16 b; b.__x = u; return b; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.__x; }
#define __CUDA_CPU_H16(T)                                                                    \
  inline T __hadd(T a, T b) { return a + b; }                                                \
  inline T __hsub(T a, T b) { return a - b; }                                                \
  inline T __hmul(T a, T b) { return a * b; }                                                \
  inline T __hdiv(T a, T b) { return a / b; }                                                \
  inline T __hneg(T a) { return -a; }                                                        \
  inline T __habs(T a) { T r = a; r.__x &= 0x7fffu; return r; }                              \
  inline T __hfma(T a, T b, T c) { return T(std::fma(float(a), float(b), float(c))); }       \
  inline T __hmax(T a, T b) { return T(std::fmax(float(a), float(b))); }                     \
  inline T __hmin(T a, T b) { return T(std::fmin(float(a), float(b))); }                     \
  inline bool __heq(T a, T b) { return a == b; }                                             \
  inline bool __hne(T a, T b) { return a != b; }                                             \
  inline bool __hlt(T a, T b) { return a < b; }                                              \
  inline bool __hgt(T a, T b) { return a > b; }                                              \
  inline bool __hle(T a, T b) { return a <= b; }                                             \
  inline bool __hge(T a, T b) { return a >= b; }                                             \
  inline bool __hisnan(T a) { return std::isnan(float(a)); }                                 \
  inline bool __hisinf(T a) { return std::isinf(float(a)); }                                 \
  inline T hexp(T a) { return T(std::exp(float(a))); }                                       \
  inline T hlog(T a) { return T(std::log(float(a))); }                                       \
  inline T hsqrt(T a) { return T(std::sqrt(float(a))); }                                     \
  inline T hrsqrt(T a) { return T(1.f / std::sqrt(float(a))); }
__CUDA_CPU_H16(__half)
__CUDA_CPU_H16(__nv_bfloat16)
#undef __CUDA_CPU_H16

// ---- math: CUDA's device functions that the C library does not spell the same ----
inline float rsqrtf(float x) { return 1.f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __frsqrt_rn(float x) { return 1.f / std::sqrt(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }
inline float exp10f(float x) { return std::pow(10.f, x); }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }
inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
inline int __float2int_rn(float f) { return (int)std::nearbyint(f); }
inline int __float2int_rz(float f) { return (int)f; }
inline int __float2int_rd(float f) { return (int)std::floor(f); }
inline int __float2int_ru(float f) { return (int)std::ceil(f); }
inline float __int2float_rn(int i) { return (float)i; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline int __mul24(int a, int b) { return a * b; }
inline unsigned __umul24(unsigned a, unsigned b) { return a * b; }
inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
template <class A, class B>
inline typename std::common_type<A, B>::type max(A a, B b) {
  typedef typename std::common_type<A, B>::type C;
  return (C)a < (C)b ? (C)b : (C)a;
}
template <class A, class B>
inline typename std::common_type<A, B>::type min(A a, B b) {
  typedef typename std::common_type<A, B>::type C;
  return (C)b < (C)a ? (C)b : (C)a;
}
#ifndef CUDART_INF_F
#define CUDART_INF_F INFINITY
#define CUDART_NAN_F NAN
#define CUDART_INF HUGE_VAL
#define CUDART_NAN NAN
#endif

// memcpy, memset and memmove in a kernel: GCC instruments neither the C library's calls nor its own
// inline expansion of them (memset of a few bytes becomes plain stores), so these say what they read
// and write first: a copy into __shared__ memory is a write there (the race check and the initcheck
// see it), a copy past the end of a buffer an out-of-bounds access. Always inlined: the accesses are
// the caller's line of CUDA_SOURCE. The parenthesized names are the C library's, not the macros.
extern "C" void __tsan_read_range(void*, unsigned long);
extern "C" void __tsan_write_range(void*, unsigned long);
__attribute__((always_inline)) inline void* __cuda_cpu_memcpy(void* d, const void* s, size_t n) {
  __tsan_read_range(const_cast<void*>(s), n);
  __tsan_write_range(d, n);
  return (memcpy)(d, s, n);
}
__attribute__((always_inline)) inline void* __cuda_cpu_memmove(void* d, const void* s, size_t n) {
  __tsan_read_range(const_cast<void*>(s), n);
  __tsan_write_range(d, n);
  return (memmove)(d, s, n);
}
__attribute__((always_inline)) inline void* __cuda_cpu_memset(void* d, int c, size_t n) {
  __tsan_write_range(d, n);
  return (memset)(d, c, n);
}
namespace std {
using ::__cuda_cpu_memcpy;
using ::__cuda_cpu_memmove;
using ::__cuda_cpu_memset;
}  // namespace std
#define memcpy(...) __cuda_cpu_memcpy(__VA_ARGS__)
#define memmove(...) __cuda_cpu_memmove(__VA_ARGS__)
#define memset(...) __cuda_cpu_memset(__VA_ARGS__)
