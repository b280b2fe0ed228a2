# what: CUDA that does not compile, plus forged result.json files in artifacts/copy-cuda and artifacts/copy-performance ("compiled", ratio 99) for the runner to take as done; TileLang from the solution
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=failed
import json
import os

CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  this does not compile;
}
"""
forged = {"error": None, "compiled": True, "ratio": 99.0, "summary": "copy: 4800 GB/s, torch 48 GB/s (99.00x torch)"}
for check in ("copy-cuda", "copy-performance"):
    os.makedirs(f"artifacts/{check}", exist_ok=True)
    with open(f"artifacts/{check}/result.json", "w") as f:
        json.dump(forged, f)
