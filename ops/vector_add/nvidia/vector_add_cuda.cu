// vector_add on NVIDIA GPUs; f16/bf16 add in f32 and round once, as torch does.
//
// Contiguous a, b and out: 16-byte packed streaming loads and stores, one tile per block
// (elementwise_cuda.cuh, zip_tiles_kernel); unequally aligned operands take the older
// grid-stride kernel.
// Broadcast or strided operands: one thread per element through the plan's strides.
#include <cstring>

#include "elementwise_cuda.cuh"
#include "vector_add_descriptor.h"

using namespace oprt;

namespace {
struct Add {
  __device__ __forceinline__ float operator()(float x, float y) const { return x + y; }
};

// OPRT_VECTOR_ADD_STRATEGY=old: the grid-stride kernel that came before the tiles (0.95x
// torch at 2^28 f32 on the H200), to benchmark against. Read once per process: the
// descriptor has no backend part to keep it in.
bool old_strategy() {
  static const bool old = [] {
    const char* v = env_or("OPRT_VECTOR_ADD_STRATEGY", "auto");
    if (std::strcmp(v, "auto") != 0 && std::strcmp(v, "old") != 0)
      fail(OPRT_STATUS_BAD_ATTRIBUTE, "OPRT_VECTOR_ADD_STRATEGY=", v, " is not one of auto, old");
    return std::strcmp(v, "old") == 0;
  }();
  return old;
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
      if (d.plan.contiguous && !old_strategy() &&
          launch_zip_tiles(o, x, y, d.plan.numel, Add{}, as_cuda_stream(stream))) {
        check_launch("vector_add kernel (contiguous tiles)");
      } else if (d.plan.contiguous) {
        auto* kernel = zip_contiguous_kernel<T, Add>;
        kernel<<<packed_grid(kernel, d.plan.numel, kPack<T>), kElementwiseThreads, 0, as_cuda_stream(stream)>>>(
            o, x, y, d.plan.numel, Add{});
        check_launch("vector_add kernel (contiguous)");
      } else {
        launch_elementwise(d.plan, AddElement<T>{o, x, y}, stream, "vector_add kernel (strided)");
      }
    });
  });
}
