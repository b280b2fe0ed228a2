// Checks ops/matmul/nvidia/matmul_workspace_plan.h on the CPU (tests/runtime/test_matmul_workspace_plan.py).
// Packing:
// over 16-bit operands of many shapes, batches and layouts, an operand is copied exactly when no
// layout of it has 16-byte rows; the copy (simulated here as matmul_pack.cuh's pack_kernel walks
// it) read through the packed plan gives every element the original plan gives, never a pad
// element, and stays inside its part of the workspace; the packed plan's rows are 16-byte rows; the
// copy reads along the source's contiguous dim, and never makes rows of one element.
// Split-K: every k-tile in exactly one split, none empty, at most kMaxSplits, splits only of a batch
// of one whose tiles fill under half the SMs with M or N <= 64, and partials within a quarter of the
// operands' bytes.
// Skinny: see check_skinny.
// Prints "FAIL ..." per broken case, then "checked N".
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "matmul_workspace_plan.h"

using namespace oprt;
using namespace oprt::matmul_pack;

namespace {

int failures = 0;

void fail(const char* what, const MatmulPlan& p, char op) {
  if (++failures <= 20)
    std::printf("FAIL %s: operand %c of batch %lld M %lld N %lld K %lld, strides A (%lld, %lld, %lld) B (%lld, %lld, %lld)\n",
                what, op, (long long)p.batch, (long long)p.m, (long long)p.n, (long long)p.k, (long long)p.a_batch,
                (long long)p.a_m, (long long)p.a_k, (long long)p.b_batch, (long long)p.b_k, (long long)p.b_n);
}

// One operand of `batches` matrices (mn x k) at strides (s_mn, s_k, s_batch); `copy` its Copy, `ws_first` and
// `ws_bytes` its part of the workspace. Fills a source whose element at each logical position is unique,
// copies it as pack_kernel does into a workspace filled with -1, then reads every logical element back
// through the packed strides (p_mn, p_k, p_batch).
void check_operand(const MatmulPlan& plan, char op, const Copy& c, int64_t mn, int64_t k, int64_t batches,
                   int64_t s_mn, int64_t s_k, int64_t s_batch, int64_t p_mn, int64_t p_k, int64_t p_batch,
                   int64_t ws_first, int64_t ws_bytes) {
  int64_t extent = 1 + (batches - 1) * s_batch + (mn - 1) * s_mn + (k - 1) * s_k;
  std::vector<int32_t> src(static_cast<size_t>(extent), -2);
  for (int64_t z = 0; z < batches; ++z)
    for (int64_t i = 0; i < mn; ++i)
      for (int64_t j = 0; j < k; ++j) src[z * s_batch + i * s_mn + j * s_k] = static_cast<int32_t>((z * mn + i) * k + j);
  std::vector<int32_t> ws(static_cast<size_t>(ws_bytes / 2), -1);  // 16-bit elements
  const SourceStrides s = source_strides(c, s_mn, s_k);
  if ((s_mn == 1 && mn > 1 && s_k != 1 && s.inner != 1) || (c.inner == 1 && (mn > 1 || k > 1)))
    return fail("the copy does not run along the source's contiguous dim (or pads rows of 1 to 8)", plan, op);
  const int64_t first = ws_first / 2;
  for (int64_t row = 0; row < c.batches * c.outer; ++row) {  // pack_kernel's loops
    const int64_t z = row / c.outer, o = row % c.outer;
    for (int64_t i = 0; i < c.inner; ++i) {
      const int64_t at = first + row * c.ld + i;
      if (at < first || at >= static_cast<int64_t>(ws.size())) return fail("copy writes outside its workspace", plan, op);
      ws[at] = src[z * s_batch + o * s.outer + i * s.inner];
    }
  }
  const int64_t inner_stride = c.k_inner ? p_k : p_mn, ld = c.k_inner ? p_mn : p_k, outer = c.k_inner ? mn : k;
  if (!rows_ok(inner_stride, ld, outer, p_batch)) return fail("the packed operand has no 16-byte rows", plan, op);
  for (int64_t z = 0; z < batches; ++z)
    for (int64_t i = 0; i < mn; ++i)
      for (int64_t j = 0; j < k; ++j) {
        const int64_t at = first + z * p_batch + i * p_mn + j * p_k;
        if (at < first || at >= static_cast<int64_t>(ws.size()) || ws[at] != (z * mn + i) * k + j)
          return fail("the packed plan reads another element (or a pad)", plan, op);
      }
}

// A layout of a (mn x k) operand: 0 mn-major rows of k (K contiguous), 1 k-major (MN contiguous), 2 no
// unit stride (every stride doubled); `pad` elements added to the leading stride.
void strides_of(int layout, int64_t mn, int64_t k, int64_t pad, int64_t& s_mn, int64_t& s_k, int64_t& s_batch) {
  if (layout == 0) s_k = 1, s_mn = k + pad, s_batch = mn * (k + pad);
  if (layout == 1) s_mn = 1, s_k = mn + pad, s_batch = k * (mn + pad);
  if (layout == 2) s_k = 2, s_mn = 2 * k + pad, s_batch = mn * (2 * k + pad);
}

}  // namespace

// split_k over M, N, K and SM counts, with the sm_90 kernel's tiles (128 x 256, k-tiles of 64).
int64_t check_splits() {
  constexpr int64_t bm = 128, bn = 256, bk = 64;
  int64_t checked = 0;
  for (int64_t sms : {1, 78, 114, 132})
    for (int64_t m : {1, 8, 16, 64, 65, 128, 1000, 1089})
      for (int64_t n : {1, 8, 83, 1000, 4096, 8192, 50257})
        for (int64_t k : {1, 63, 64, 129, 1000, 4096, 13113, 100003})
          for (int64_t batch : {1, 2}) {
            MatmulPlan p;
            p.batch = batch, p.m = m, p.n = n, p.k = k;
            ++checked;
            const int64_t splits = split_k(p, sms, bm, bn, bk);
            const int64_t tiles = ((m + bm - 1) / bm) * ((n + bn - 1) / bn), k_tiles = (k + bk - 1) / bk;
            if (splits < 1 || splits > kMaxSplits) fail("split count out of range", p, 'k');
            if (splits == 1) continue;
            if (batch != 1 || tiles * 2 > sms || (m > kSplitMaxMN && n > kSplitMaxMN))
              fail("split where the rules say not to", p, 'k');
            if (splits * m * n * 4 * 2 > (m + n) * k * 2 / 4) fail("partials past a quarter of the operands", p, 'k');
            const int64_t per = k_tiles_per_split(k_tiles, splits);  // as the kernel's launch computes it
            if (per < kMinSplitTiles && k_tiles >= kMinSplitTiles) fail("a split of fewer k-tiles than the minimum", p, 'k');
            if (per * splits < k_tiles) fail("k-tiles no split walks", p, 'k');
            if (per * (splits - 1) >= k_tiles) fail("a split with no k-tile", p, 'k');
          }
  return checked;
}

// skinny over M, N, K, batches, dtypes and SM counts: taken exactly when M or N is at most kSkinnyRows
// (16-bit: kSkinnyRows16, and the other dim at most kSkinnyColumns16),
// transposed exactly when only N is; a split only of a batch of one, every K index in exactly one
// non-empty split of whole pieces of its form's depth; the transposed plan names the same elements
// (out[i][j] at out^T[j][i], a[i][k] at b^T[k][i]) and transposing twice gives the plan back.
int64_t check_skinny() {
  int64_t checked = 0;
  for (int64_t sms : {1, 132})
    for (int64_t m : {1, 2, 4, 5, 7, 8, 9, 64, 9000})
      for (int64_t n : {1, 3, 4, 5, 8, 9, 83, 4096, 8193})
        for (int64_t k : {1, 255, 256, 257, 1030, 13113})
          for (int64_t batch : {1, 3})
            for (bool n_unit : {false, true})
              for (oprt_dtype dtype : {OPRT_DTYPE_F32, OPRT_DTYPE_BF16}) {
              MatmulPlan p;
              p.batch = batch, p.m = m, p.n = n, p.k = k;
              p.a_m = k, p.a_k = 1, p.a_batch = m * k;
              p.b_k = n_unit ? n : 1, p.b_n = n_unit ? 1 : k, p.b_batch = n * k;
              p.o_m = n, p.o_n = 1, p.o_batch = m * n;
              ++checked;
              const Skinny s = skinny(p, dtype, sms);
              const int64_t rows = dtype == OPRT_DTYPE_F32 ? kSkinnyRows : kSkinnyRows16;
              const int64_t columns = m <= rows ? n : m;  // the other dim, once transposed
              const bool want = (m <= rows || n <= rows) && (dtype == OPRT_DTYPE_F32 || columns <= kSkinnyColumns16);
              if (s.on != want) fail("skinny taken where it must not be, or not", p, 's');
              if (!s.on) continue;
              if (s.transposed != (m > rows)) fail("transposed when rows are few, or not when columns are", p, 's');
              const MatmulPlan q = s.transposed ? transposed(p) : p;
              if (q.m > rows || q.m > kSkinnyRows) fail("the kernel sees more rows than it holds", p, 's');
              if (s.n_contiguous != (q.b_n == 1 && q.n > 1)) fail("the wrong form for B's layout", p, 's');
              if (s.splits < 1 || s.splits > kSkinnyMaxSplits || (batch > 1 && s.splits > 1)) fail("split count", p, 's');
              if (s.k_per_split % (s.n_contiguous ? kSkinnySplitDepthNContiguous : kSkinnySplitDepth))
                fail("a split not of whole pieces", p, 's');
              if (s.k_per_split * s.splits < k || s.k_per_split * (s.splits - 1) >= k) fail("K not covered once", p, 's');
              const Workspace w = workspace_for(s, p);
              if (w.packing.workspace_bytes() || w.partials_offset() ||
                  w.workspace_bytes() != (s.splits > 1 ? s.splits * m * n * 4 : 0))
                fail("the skinny workspace is not just the partials", p, 's');
              const MatmulPlan t = transposed(p), back = transposed(t);
              if (std::memcmp(&back, &p, sizeof p)) fail("transposing twice changes the plan", p, 't');
              for (int64_t i : {int64_t{0}, m - 1})
                for (int64_t j : {int64_t{0}, n - 1})
                  for (int64_t kk : {int64_t{0}, k - 1})
                    if (i * p.o_m + j * p.o_n != j * t.o_m + i * t.o_n ||
                        i * p.a_m + kk * p.a_k != kk * t.b_k + i * t.b_n ||
                        kk * p.b_k + j * p.b_n != j * t.a_m + kk * t.a_k || p.a_batch != t.b_batch)
                      fail("the transposed plan names other elements", p, 't');
            }
  return checked;
}

struct Shape {
  int64_t m, n, k;
};

int main() {
  const int64_t sizes_mn[] = {1, 7, 64, 130}, sizes_n[] = {1, 8, 83, 264}, sizes_k[] = {1, 9, 1024, 1995};
  std::vector<Shape> shapes;
  for (int64_t m : sizes_mn)
    for (int64_t n : sizes_n)
      for (int64_t k : sizes_k) shapes.push_back({m, n, k});
  // a row or a column against a long K: large enough to be packed (M N K >= 2^22)
  for (Shape extra : {Shape{1, 264, 16001}, Shape{264, 1, 16001}}) shapes.push_back(extra);
  int64_t checked = 0;
  for (const auto [m, n, k] : shapes)
        for (int64_t batch : {1, 3})
          for (int a_layout = 0; a_layout < 3; ++a_layout)
            for (int b_layout = 0; b_layout < 3; ++b_layout)
              for (int64_t pad : {0, 3, 8})
                for (bool a_repeats : {false, true}) {
                  if ((batch == 1 && a_repeats) || (batch > 1 && k > 4096)) continue;  // the long K: one batch
                  MatmulPlan p;
                  p.batch = batch, p.m = m, p.n = n, p.k = k;
                  strides_of(a_layout, m, k, pad, p.a_m, p.a_k, p.a_batch);
                  strides_of(b_layout, n, k, pad, p.b_n, p.b_k, p.b_batch);
                  if (a_repeats || batch == 1) p.a_batch = 0;
                  if (batch == 1) p.b_batch = 0;
                  ++checked;
                  const Packing f32 = plan(p, OPRT_DTYPE_F32, true), none = plan(p, OPRT_DTYPE_F16, false);
                  if (f32.a.needed || f32.b.needed || none.a.needed || none.b.needed)
                    fail("packed f32, or without tensor cores", p, '-');
                  const Packing k16 = plan(p, OPRT_DTYPE_BF16, true);
                  const bool small = m * n * k < kMinPackWork;
                  const int64_t ab = batch > 1 ? p.a_batch : 0, bb = batch > 1 ? p.b_batch : 0;
                  const bool a_rows = rows_ok(p.a_k, p.a_m, m, ab) || rows_ok(p.a_m, p.a_k, k, ab);
                  const bool b_rows = rows_ok(p.b_k, p.b_n, n, bb) || rows_ok(p.b_n, p.b_k, k, bb);
                  if (k16.a.needed != (!small && !a_rows)) fail("A packed when it need not be, or not when it must", p, 'a');
                  if (k16.b.needed != (!small && !b_rows)) fail("B packed when it need not be, or not when it must", p, 'b');
                  if (k16.b.needed && k16.b_offset() % kAlign != 0) fail("B's copy is not aligned", p, 'b');
                  const MatmulPlan q = packed(k16, p);
                  const int64_t total = k16.workspace_bytes();
                  const Workspace w = workspace_for(k16, 3, p);  // the partials after the copies, aligned
                  if (w.partials_offset() % kAlign || w.partials_offset() < total ||
                      w.workspace_bytes() != w.partials_offset() + 3 * m * n * 4)
                    fail("the split-K partials overlap the copies or are misaligned", p, 'w');
                  if (k16.a.needed)
                    check_operand(p, 'a', k16.a, m, k, ab ? batch : 1, p.a_m, p.a_k, ab, q.a_m, q.a_k,
                                  batch > 1 ? q.a_batch : 0, 0, k16.b.needed ? k16.b_offset() : total);
                  if (k16.b.needed)
                    check_operand(p, 'b', k16.b, n, k, bb ? batch : 1, p.b_n, p.b_k, bb, q.b_n, q.b_k,
                                  batch > 1 ? q.b_batch : 0, k16.b_offset(), total);
                }
  checked += check_splits();
  checked += check_skinny();
  std::printf("checked %lld\n", static_cast<long long>(checked));
  return failures ? 1 : 0;
}
