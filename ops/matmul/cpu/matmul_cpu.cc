// matmul on the CPU: out tiles of MB x NB spread over threads, each accumulated in f32.
//
// For each tile, K is walked in blocks of KB: the A block (MB x KB) and the B block
// (KB x NB) are converted to f32 and packed into the thread's workspace first, so the inner
// loops read contiguous f32 whatever the operands' dtype and strides (transposed, sliced,
// broadcast batch). The micro-kernel keeps an MR x NR block of the tile in registers while it
// walks the packed K block. Repacking A once per column tile costs 1/NB of the arithmetic.
#include <algorithm>
#include <cstring>

#include "half_float.h"
#include "matmul_descriptor.h"
#include "parallel_for.h"

using namespace oprt;

namespace {
constexpr int64_t MB = 64, NB = 64, KB = 256;  // tile; a thread's scratch stays in L2 (~144 KiB)
constexpr int64_t MR = 4, NR = 8;              // register block of the micro-kernel
constexpr int64_t kScratchFloats = MB * KB + KB * NB + MB * NB;
static_assert(MB % MR == 0 && NB % NR == 0, "tiles hold whole register blocks");

int64_t tile_count(const MatmulPlan& p) { return p.batch * ((p.m + MB - 1) / MB) * ((p.n + NB - 1) / NB); }
}  // namespace

namespace oprt {
size_t matmul_workspace_bytes(MatmulDescriptor& d) {
  if (d.plan.empty() || d.plan.k == 0) return 0;  // K = 0 only writes zeros
  const int64_t workers = std::min<int64_t>(tile_count(d.plan), cpu_threads());
  return static_cast<size_t>(workers * kScratchFloats) * sizeof(float);
}
}  // namespace oprt

namespace {
// c[MR][NB-row block] += a_panel (MR interleaved rows) x b_panel, over kb steps.
inline void micro_kernel(const float* a, const float* b, float* c, int64_t kb) {
  for (int64_t j0 = 0; j0 < NB; j0 += NR) {
    float acc[MR][NR];
    for (int64_t r = 0; r < MR; ++r)
      for (int64_t j = 0; j < NR; ++j) acc[r][j] = c[r * NB + j0 + j];
    for (int64_t kk = 0; kk < kb; ++kk) {
      const float* bk = b + kk * NB + j0;
      const float* ak = a + kk * MR;
      for (int64_t r = 0; r < MR; ++r)
        for (int64_t j = 0; j < NR; ++j) acc[r][j] += ak[r] * bk[j];
    }
    for (int64_t r = 0; r < MR; ++r)
      for (int64_t j = 0; j < NR; ++j) c[r * NB + j0 + j] = acc[r][j];
  }
}

template <class T>
void matmul_tiles(const MatmulPlan& p, const T* a, const T* b, T* out, float* scratch) {
  const int64_t m_tiles = (p.m + MB - 1) / MB, n_tiles = (p.n + NB - 1) / NB;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / (MB * NB) / p.k);  // ~10 us of work per thread
  parallel_for(tile_count(p), grain, [&](int64_t begin, int64_t end, int worker) {
    float* ap = scratch + worker * kScratchFloats;  // [MB / MR][KB][MR]: MR rows interleaved
    float* bp = ap + MB * KB;                       // [KB][NB]
    float* cp = bp + KB * NB;                       // [MB][NB]
    for (int64_t t = begin; t < end; ++t) {
      const int64_t z = t / (m_tiles * n_tiles), i0 = (t / n_tiles) % m_tiles * MB, j0 = t % n_tiles * NB;
      const int64_t mb = std::min(MB, p.m - i0), nb = std::min(NB, p.n - j0);
      const T* az = a + z * p.a_batch;
      const T* bz = b + z * p.b_batch;
      std::fill(cp, cp + MB * NB, 0.f);
      for (int64_t k0 = 0; k0 < p.k; k0 += KB) {
        const int64_t kb = std::min(KB, p.k - k0);
        // Pack; rows past mb and columns past nb are zeros, so the micro-kernel needs no edge case.
        for (int64_t i = 0; i < MB; ++i) {
          float* dst = ap + (i / MR) * KB * MR + i % MR;
          if (i < mb) {
            const T* src = az + (i0 + i) * p.a_m + k0 * p.a_k;
            for (int64_t kk = 0; kk < kb; ++kk) dst[kk * MR] = to_float(src[kk * p.a_k]);
          } else {
            for (int64_t kk = 0; kk < kb; ++kk) dst[kk * MR] = 0.f;
          }
        }
        for (int64_t kk = 0; kk < kb; ++kk) {
          const T* src = bz + (k0 + kk) * p.b_k + j0 * p.b_n;
          float* dst = bp + kk * NB;
          for (int64_t j = 0; j < nb; ++j) dst[j] = to_float(src[j * p.b_n]);
          std::fill(dst + nb, dst + NB, 0.f);
        }
        for (int64_t i = 0; i < mb; i += MR) micro_kernel(ap + (i / MR) * KB * MR, bp, cp + i * NB, kb);
      }
      T* oz = out + z * p.o_batch;
      for (int64_t i = 0; i < mb; ++i)
        for (int64_t j = 0; j < nb; ++j) oz[(i0 + i) * p.o_m + (j0 + j) * p.o_n] = from_float<T>(cp[i * NB + j]);
    }
  });
}

// K = 0: every output is an empty sum.
template <class T>
void fill_zeros(const MatmulPlan& p, T* out) {
  parallel_for(p.batch * p.m, std::max<int64_t>(1, (int64_t{1} << 16) / p.n), [&](int64_t begin, int64_t end, int) {
    for (int64_t r = begin; r < end; ++r) {
      T* row = out + (r / p.m) * p.o_batch + (r % p.m) * p.o_m;
      for (int64_t j = 0; j < p.n; ++j) row[j * p.o_n] = from_float<T>(0.f);
    }
  });
}
}  // namespace

extern "C" OPRT_API oprt_status oprt_execute_matmul(const oprt_matmul_descriptor* desc, void* workspace,
                                                    size_t workspace_size, void* out, const void* a, const void* b,
                                                    oprt_stream) {
  return guard([&] {
    const auto& d = begin_execute<MatmulDescriptor>(desc, workspace, workspace_size);
    const MatmulPlan& p = d.plan;
    if (p.empty()) return;
    const bool reads = p.k > 0;  // with K = 0, a and b are empty and may have no storage
    require_buffers({{out, "out", true}, {a, "a", reads}, {b, "b", reads}});
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      if (!reads) return fill_zeros(p, static_cast<T*>(out));
      matmul_tiles(p, static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out),
                   static_cast<float*>(workspace));
    });
  });
}
