// scaled_dot_product_attention on Hopper (sm_90a): FlashAttention's forward with wgmma and TMA,
// compiled only for sm_90a (CMakeLists.txt builds ops/*/nvidia/sm90/ for 90a alone; the host runs
// the mma.sync kernel of ../attention_mma.cuh on every other GPU, and for calls too small to fill this one).
//
// - One block per (batch * KV head, tile of BM = 128 packed query rows), three warpgroups. Rows are
//   packed as in attention_mma.cuh: row r of a KV head is query r % Sq of head kv_head * group +
//   r / Sq, so grouped-query heads share every K and V tile the block reads.
// - Warpgroup 0, the producer: one thread issues the TMA copies of every K and V tile of BN = 128
//   keys into a ring of stages (wgmma's 128-byte swizzled layout, wgmma.cuh; keys past Sk read as
//   zeros), each tile completing its own mbarrier, so Q K^T can start before V has landed.
// - Warpgroups 1 and 2, the consumers, 64 query rows each (their rows of Q by cp.async, once). Per
//   key tile: S = Q K^T (64 x 128, f32, 64 registers per thread) by wgmma from shared memory (Q and
//   K are both K-major: features contiguous), then the online softmax on the thread's two rows (a
//   quad of four threads holds a row), then O += P V with P straight from registers (the scores'
//   accumulator layout, rounded to 16 bits, is wgmma's A fragment) and V from shared memory as an
//   MN-major B (features contiguous). O (64 x D, f32) is rescaled by 2^(m_old - m_new) when a
//   tile raises a row's max.
// - Within a consumer the tensor cores and the softmax overlap (FlashAttention-3's intra-warpgroup
//   pipelining, Shah et al. 2024): S of tile kt and P V of tile kt - 1 are issued together, the
//   softmax of kt runs while P V(kt - 1) is still on the tensor cores, and O takes its rescale
//   once that P V is done. Across consumers, FlashAttention-3's ping-pong: named barriers make
//   them take turns issuing their products, so one's softmax runs while the other's wgmmas hold
//   the tensor cores (left to the warp schedulers, both often multiplied at once, then both ran
//   their softmax with the tensor cores idle: on an H100, 0.70-0.92x cuDNN without the turns,
//   0.72-1.00x with them; data/results-log.md, 2026-12-07 fifth session).
// - Causal (torch's top-left mask): a block stops at the keys its last row sees; a tile crossing
//   some row's last key is masked element by element. Every consumer multiplies every tile the
//   block loads, even one none of its rows sees (the first 64 rows of the block's last tile: all
//   masked, they add nothing): a branch around wgmma, even one the whole warpgroup takes alike,
//   makes ptxas serialise every wgmma of the kernel (warning C7520).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "async_copy.cuh"
#include "attention_online_softmax.cuh"
#include "attention_wgmma.h"
#include "cuda_launch.cuh"
#include "tensor_core.cuh"  // pack_pair
#include "tma.cuh"
#include "wgmma.cuh"

using namespace oprt;

namespace {

constexpr int BM = kAttentionWgmmaRows, BN = 128;

// out's rows `row` and row + 8 (packed rows of KV head kv_head; none at or past `rows`): o / l,
// l summed over the quad first. Every row sees key 0, so l > 0.
template <class T, int OT>
__device__ __forceinline__ void store_rows(const float (&o)[OT * 4], float (&l)[2], const AttentionPlan& p,
                                           T* __restrict__ out, int64_t oo, int64_t kv_head, int64_t row,
                                           int64_t rows, int t) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t packed = row + 8 * r;
    if (packed >= rows) continue;
    const int64_t h = kv_head * p.group + packed / p.sq, i = packed % p.sq;
    const float inv = 1.f / l[r];
    T* orow = out + oo + h * p.o.head + i * p.o.seq;
#pragma unroll
    for (int n = 0; n < OT; ++n) {
      T* dst = orow + (n * 8 + 2 * t) * p.o.dim;
      const float x = o[4 * n + 2 * r] * inv, y = o[4 * n + 2 * r + 1] * inv;
      if (p.o.dim == 1 && (reinterpret_cast<uintptr_t>(dst) & 3) == 0) {
        *reinterpret_cast<uint32_t*>(dst) = pack_pair<T>(x, y);  // two adjacent features, one store
      } else {
        dst[0] = from_float<T>(x);
        dst[p.o.dim] = from_float<T>(y);
      }
    }
  }
}

constexpr int CONSUMERS = 2, THREADS = 128 * (CONSUMERS + 1);

// Shared memory: the Q tile, three stages of K tiles, three of V tiles (each swizzled, 1024-aligned),
// the mbarriers (full K, full V, empty per stage), a scratch word per consumer thread, and 1024 bytes
// of slack to align the first tile.
template <int HD>
struct Smem {
  static constexpr int stages = 3;  // a stage is refilled a whole tile before it is read
  static constexpr int q_bytes = BM * HD * 2, kv_bytes = BN * HD * 2;
  static constexpr int bars = q_bytes + 2 * stages * kv_bytes;  // offset of the mbarriers
  static constexpr int scratch = bars + 3 * stages * 8;  // a word per consumer thread (pin_before_wait)
  static constexpr int bytes = scratch + CONSUMERS * 128 * 4 + 1024;
};

template <class T, int HD>
__global__ void __launch_bounds__(THREADS, 1)
    attention_wgmma_kernel(const __grid_constant__ CUtensorMap map_k, const __grid_constant__ CUtensorMap map_v,
                           const T* __restrict__ q, T* __restrict__ out, const AttentionPlan p, const int64_t q_tiles) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using S = Smem<HD>;
  constexpr int STAGES = S::stages, NT = BN / 8, OT = HD / 8;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* qs = smem_raw + (1024 - smem_u32(smem_raw) % 1024) % 1024;
  const uint32_t base = smem_u32(qs);
  auto k_stage = [&](int s) { return base + S::q_bytes + s * S::kv_bytes; };
  auto v_stage = [&](int s) { return base + S::q_bytes + (STAGES + s) * S::kv_bytes; };
  auto full_k = [&](int s) { return base + S::bars + 8 * s; };
  auto full_v = [&](int s) { return base + S::bars + 8 * (STAGES + s); };
  auto empty = [&](int s) { return base + S::bars + 8 * (2 * STAGES + s); };
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(full_k(s), 1), mbar_init(full_v(s), 1);  // the producer's expect_tx; TMA completes the bytes
      mbar_init(empty(s), CONSUMERS * 4);                 // one arrival per consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit
  }
  __syncthreads();

  const int64_t bkv = blockIdx.x / q_tiles, tile = q_tiles - 1 - blockIdx.x % q_tiles;
  const int64_t z = bkv / p.kv_heads, kv_head = bkv % p.kv_heads, rows = p.group * p.sq;
  const int64_t m0 = tile * BM;
  const int64_t last = (m0 + BM < rows ? m0 + BM : rows) - 1;
  const int key_tiles = static_cast<int>((p.key_end(last / p.sq != m0 / p.sq ? p.sq - 1 : last % p.sq) + BN - 1) / BN);
  const int wg = threadIdx.x / 128;

  if (wg == 0) {  // the producer: one thread issues every copy
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
    if (threadIdx.x == 0) {
      for (int kt = 0; kt < key_tiles; ++kt) {
        const int s = kt % STAGES;
        if (kt >= STAGES) mbar_wait(empty(s), (kt / STAGES - 1) & 1);  // both consumers are done with it
        mbar_expect_tx(full_k(s), S::kv_bytes);
#pragma unroll
        for (int b = 0; b < HD / 64; ++b)  // 64 features (one 128-byte swizzle row) per box
          tma_load(k_stage(s) + b * BN * 128, &map_k, 64 * b, kt * BN, static_cast<int>(kv_head), static_cast<int>(z),
                   full_k(s));
        mbar_expect_tx(full_v(s), S::kv_bytes);
#pragma unroll
        for (int b = 0; b < HD / 64; ++b)
          tma_load(v_stage(s) + b * BN * 128, &map_v, 64 * b, kt * BN, static_cast<int>(kv_head), static_cast<int>(z),
                   full_v(s));
      }
    }
    return;
  }

  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  const int c = wg - 1, tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  int64_t qo, ko, vo, oo;
  p.batch_offsets(z, qo, ko, vo, oo);
  const int64_t wg_row0 = m0 + 64 * c;
  const int64_t wg_last = wg_row0 + 63 < rows ? wg_row0 + 63 : rows - 1;
  const int64_t wg_keys_min =
      wg_row0 >= rows ? 0 : p.key_end(wg_row0 / p.sq == wg_last / p.sq ? wg_row0 % p.sq : 0);
  int64_t row_keys[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = wg_row0 + warp * 16 + g + 8 * r;
    row_keys[r] = row < rows ? p.key_end(row % p.sq) : 0;
  }
  const float scale = p.scale * kLog2e;

  // This warpgroup's 64 rows of Q by cp.async (rows from several heads under grouped-query
  // packing: no one TMA box), made visible to wgmma, then the warpgroup's own barrier.
  for (int i = tid; i < 64 * (HD / 8); i += 128) {
    const int r = i / (HD / 8), chunk = i % (HD / 8);
    const int64_t row = wg_row0 + r;
    unsigned char* d = qs + swizzled_128b<BM>(64 * c + r, chunk);
    if (row < rows)
      copy16_async(d, q + qo + (kv_head * p.group + row / p.sq) * p.q.head + row % p.sq * p.q.seq + chunk * 8);
    else
      *reinterpret_cast<uint4*>(d) = make_uint4(0, 0, 0, 0);
  }
  async_commit();
  async_wait<0>();
  fence_proxy_async();
  asm volatile("bar.sync %0, 128;\n" ::"r"(1 + c) : "memory");

  float o[HD / 2], sc[BN / 2];
#pragma unroll
  for (int i = 0; i < HD / 2; ++i) o[i] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
  const uint32_t q_addr = base + c * 64 * 128;
  uint32_t pa[BN / 16][4];  // the tile's probabilities, P V's A fragments

  // O += P V over the tile in stage s: P's fragment for keys 16kk.. is S's column tiles 2kk, 2kk + 1.
  auto issue_pv = [&](int s) {
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
      wgmma_rs_mn<T, HD>(o, pa[kk], smem_desc(v_stage(s) + kk * 2048, BN * 128, 1024));
  };
  // S = Q K^T over the tile in stage s: feature slice kk lies in 64-feature block kk / 4, 32 bytes a slice.
  auto issue_s = [&](int s) {
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      const uint32_t in_row = kk % 4 * 32;
      wgmma_m64n128_ss<T>(sc, smem_desc(q_addr + kk / 4 * (BM * 128) + in_row, 16, 1024),
                          smem_desc(k_stage(s) + kk / 4 * (BN * 128) + in_row, 16, 1024), kk > 0);
    }
  };
  // Tile kt's softmax once its S is in: the probabilities in sc, the factor O still owes in `correction`.
  float correction[2];
  auto softmax_tile = [&](int kt) {
    online_softmax_scores<NT, true>(sc, m, l, scale, static_cast<int64_t>(kt) * BN, wg_keys_min, row_keys, t,
                                    [&](int r, float c) { correction[r] = c; });
  };
  auto pack_p = [&] {
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk)
#pragma unroll
      for (int i = 0; i < 4; ++i) pa[kk][i] = pack_pair<T>(sc[8 * kk + 2 * i], sc[8 * kk + 2 * i + 1]);
  };
  // ptxas hoists a wgmma wait above independent arithmetic (seen in the SASS: the softmax sank below
  // the wait for P V, and nothing overlapped); a shared-memory store stays in order with the wait,
  // so storing a value that depends on the whole softmax keeps the softmax ahead of it.
  const uint32_t pin_slot = base + S::scratch + 4 * (128 * c + tid);
  auto pin_before_wait = [&](float x) { asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(pin_slot), "f"(x) : "memory"); };
  auto release = [&](int s) {  // this warp is done with the stage's K and V
    __syncwarp();
    if (lane == 0) mbar_arrive(empty(s));
  };

  // The ping-pong: the consumers take turns issuing their wgmmas, by named barriers 3 and 4 (256
  // threads: one consumer's sync meets the other's arrive), so one's softmax runs while the other's
  // products occupy the tensor cores. Consumer 0 goes first (consumer 1 arrives once up front);
  // consumer 1 does not hand back its last turn, which nobody would wait for.
  auto turn_begin = [&] { asm volatile("bar.sync %0, 256;\n" ::"r"(3 + c) : "memory"); };
  auto turn_end = [&](int kt) {
    if (c == 0 || kt + 1 < key_tiles) asm volatile("bar.arrive %0, 256;\n" ::"r"(4 - c) : "memory");
  };
  if (c == 1) asm volatile("bar.arrive 3, 256;\n" ::: "memory");

  // Tile 0: S, the softmax, P (O is still zero: nothing to rescale).
  mbar_wait(full_k(0), 0);
  turn_begin();
  wgmma_fence();
  issue_s(0);
  wgmma_commit();
  turn_end(0);
  wgmma_wait<0>();
  fence_operands(sc);
  softmax_tile(0);
  pack_p();
  // Tile kt: S(kt) and O += P V(kt - 1) issued together as two commit groups; the softmax of tile
  // kt runs as soon as S(kt) is in, while the tensor cores still work on P V(kt - 1); then O is
  // rescaled (P V(kt - 1) done) and P(kt) packed over P(kt - 1).
  for (int kt = 1; kt < key_tiles; ++kt) {
    const int s = kt % STAGES, prev = (kt - 1) % STAGES;
    mbar_wait(full_k(s), (kt / STAGES) & 1);
    mbar_wait(full_v(prev), ((kt - 1) / STAGES) & 1);
    fence_operands(o);  // the rescaled O and the packed P are final before wgmma reads them
    fence_operands(pa);
    turn_begin();
    wgmma_fence();
    issue_s(s);
    wgmma_commit();
    issue_pv(prev);
    wgmma_commit();
    turn_end(kt);
    wgmma_wait<1>();  // S(kt) is in
    fence_operands(sc);
    softmax_tile(kt);
    pin_before_wait(l[0] + l[1]);  // the whole softmax (its row sums) before the wait below
    wgmma_wait<0>();  // P V(kt - 1) is in
    fence_operands(o);
    fence_operands(pa);
    release(prev);
    rescale_row<OT>(o, 0, correction[0]);
    rescale_row<OT>(o, 1, correction[1]);
    pack_p();
  }
  // The last tile's P V.
  const int last_stage = (key_tiles - 1) % STAGES;
  mbar_wait(full_v(last_stage), ((key_tiles - 1) / STAGES) & 1);
  fence_operands(o);
  fence_operands(pa);
  wgmma_fence();
  issue_pv(last_stage);
  wgmma_commit();
  wgmma_wait<0>();
  fence_operands(o);
  release(last_stage);
  store_rows<T, OT>(o, l, p, out, oo, kv_head, wg_row0 + warp * 16 + g, rows, t);
#else
  __trap();  // never launched: built for sm_90a only, and the host checks for compute capability 9.0
#endif
}

// A 4-d tensor map over key or value (feature, key, KV head, batch) with boxes of 64 features
// (one 128-byte swizzle row) x BN keys, or false where TMA cannot describe the operand (more than
// one batch dim after coalescing, or strides the encoder refuses). Keys past Sk read as zeros.
template <class T>
bool kv_map(CUtensorMap& map, const void* ptr, const AttentionOperand& a, const AttentionPlan& p) {
  if (p.batch_rank > 1) return false;
  // strides of dims of size 1 are never stepped: give them a legal value (a multiple of 16 bytes)
  const int64_t seq = p.sk > 1 ? a.seq : (p.d + 7) / 8 * 8;
  const int64_t head = p.kv_heads > 1 ? a.head : seq * p.sk;
  const int64_t batch = p.batch > 1 ? a.batch[0] : head * p.kv_heads;
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(p.d), static_cast<cuuint64_t>(p.sk),
                              static_cast<cuuint64_t>(p.kv_heads), static_cast<cuuint64_t>(p.batch)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(seq * 2), static_cast<cuuint64_t>(head * 2),
                                 static_cast<cuuint64_t>(batch * 2)};
  const cuuint32_t box[4] = {64, BN, 1, 1}, elem_strides[4] = {1, 1, 1, 1};
  constexpr CUtensorMapDataType type =
      std::is_same_v<T, __half> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  return encode_tiled()(&map, type, 4, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

template <class T, int HD>
bool launch(const AttentionPlan& p, const T* q, const T* k, const T* v, T* out, cudaStream_t stream) {
  CUtensorMap map_k, map_v;
  if (!kv_map<T>(map_k, k, p.k, p) || !kv_map<T>(map_v, v, p.v, p)) return false;
  auto* kernel = attention_wgmma_kernel<T, HD>;
  allow_dynamic_smem(reinterpret_cast<const void*>(kernel), Smem<HD>::bytes);
  const int64_t q_tiles = (p.group * p.sq + BM - 1) / BM;
  kernel<<<static_cast<unsigned>(p.batch * p.kv_heads * q_tiles), THREADS, Smem<HD>::bytes, stream>>>(
      map_k, map_v, q, out, p, q_tiles);
  check_launch("scaled_dot_product_attention wgmma kernel (TMA)");
  return true;
}

template <class T>
bool run(const AttentionPlan& p, const void* q, const void* k, const void* v, void* out, cudaStream_t stream) {
  const T *tq = static_cast<const T*>(q), *tk = static_cast<const T*>(k), *tv = static_cast<const T*>(v);
  T* to = static_cast<T*>(out);
  return p.d == 64 ? launch<T, 64>(p, tq, tk, tv, to, stream) : launch<T, 128>(p, tq, tk, tv, to, stream);
}

}  // namespace

namespace oprt {

bool attention_wgmma(const AttentionPlan& p, oprt_dtype dtype, const void* q, const void* k, const void* v, void* out,
                     cudaStream_t stream) {
  // TMA's coordinates are int: keys up to INT32_MAX (only a zero-stride key dim reaches past it)
  if (!is_sm90() || p.sk == 0 || p.sk > INT32_MAX - BN || p.d != p.dv || (p.d != 64 && p.d != 128)) return false;
  if (dtype == OPRT_DTYPE_F16) return run<__half>(p, q, k, v, out, stream);
  if (dtype == OPRT_DTYPE_BF16) return run<__nv_bfloat16>(p, q, k, v, out, stream);
  return false;
}

}  // namespace oprt
