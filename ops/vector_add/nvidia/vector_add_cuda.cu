// vector_add on NVIDIA GPUs; f16/bf16 add in f32 and round once, as torch does.
//
// Contiguous a, b and out: 16-byte packed loads and stores, one pack per thread, one tile per
// block (elementwise_cuda.cuh, zip_tiles_kernel); unequally aligned operands take the older
// grid-stride kernel.
// Operands contiguous or broadcast along the innermost dim (a bias row, a column vector, a
// scalar, a sliced view): a pack per thread along rows (zip_rows_kernel). Any other layout:
// one thread per element through the plan's strides.
#include <cstring>

#include "elementwise_cuda.cuh"
#include "vector_add_descriptor.h"

using namespace oprt;

namespace {
struct Add {
  __device__ __forceinline__ float operator()(float x, float y) const { return x + y; }
};

// OPRT_VECTOR_ADD_STRATEGY picks how contiguous operands are added, to benchmark the choices
// (scripts/elementwise_sweep.py): auto (kAuto below), old (the grid-stride kernel that came
// before the tiles), or a tile shape: stream4 (four evict-first 16-byte packs per thread),
// plain4, plain2, plain1 (plain loads and stores). On the H200 (that sweep,
// x torch.add at 2^28 f32 / bf16 / 2^24 f32): old 0.94 / 0.94 / 0.97, stream4 0.94 / 0.94 /
// 0.95, plain4 1.00 / 0.99 / 1.00, plain2 1.00 / 0.99 / 1.00, plain1 1.01 / 1.00 / 1.01: the
// evict-first hints were the cost, and one pack per thread (4.3 TB/s) is enough in flight.
// Read once per process: the descriptor has no backend part to keep it in.
struct Choice {
  const char* name;
  bool old;
  ZipTiles tiles;
};
constexpr Choice kChoices[] = {{"old", true, {4, true}},      {"stream4", false, {4, true}},
                               {"plain4", false, {4, false}}, {"plain2", false, {2, false}},
                               {"plain1", false, {1, false}}};
constexpr const char* kAuto = "plain1";

const Choice& choice() {
  static const Choice& chosen = []() -> const Choice& {
    const char* v = env_or("OPRT_VECTOR_ADD_STRATEGY", "auto");
    const char* want = std::strcmp(v, "auto") == 0 ? kAuto : v;
    for (const Choice& c : kChoices)
      if (std::strcmp(c.name, want) == 0) return c;
    fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_VECTOR_ADD_STRATEGY=", v,
         " is not one of auto, old, stream4, plain4, plain2, plain1");
  }();
  return chosen;
}

template <class T>
struct AddElement {
  T* out;
  const T* a;
  const T* b;
  __device__ void operator()(const int64_t (&off)[3]) const {
    out[off[0]] = from_float<T>(to_float(a[off[1]]) + to_float(b[off[2]]));
  }
};
}  // namespace

extern "C" OPRT_API oprt_status oprt_execute_vector_add(const oprt_vector_add_descriptor* desc, void* workspace,
                                                        size_t workspace_size, void* out, const void* a,
                                                        const void* b, oprt_stream stream) {
  return guard([&] {
    const auto& d = begin_execute<VectorAddDescriptor>(desc, workspace, workspace_size);
    if (d.plan.numel == 0) return;
    require_buffers({{out, "out", true}, {a, "a", true}, {b, "b", true}});
    dispatch_dtype(d.dtype, [&](auto type) {
      using T = typename decltype(type)::type;
      auto* o = static_cast<T*>(out);
      const auto *x = static_cast<const T*>(a), *y = static_cast<const T*>(b);
      if (d.plan.contiguous && !choice().old &&
          launch_zip_tiles(o, x, y, d.plan.numel, Add{}, as_cuda_stream(stream), choice().tiles)) {
        check_launch("vector_add kernel (contiguous tiles)");
      } else if (d.plan.contiguous) {
        auto* kernel = zip_contiguous_kernel<T, Add>;
        kernel<<<packed_grid(kernel, d.plan.numel, kPack<T>), kElementwiseThreads, 0, as_cuda_stream(stream)>>>(
            o, x, y, d.plan.numel, Add{});
        check_launch("vector_add kernel (contiguous)");
      } else if (InnerRows<3> rows; inner_rows(d.plan, rows)) {  // broadcasts and views along rows
        launch_zip_rows(rows, o, x, y, Add{}, as_cuda_stream(stream));
        check_launch("vector_add kernel (rows)");
      } else {
        launch_elementwise(d.plan, AddElement<T>{o, x, y}, stream, "vector_add kernel (strided)");
      }
    });
  });
}
