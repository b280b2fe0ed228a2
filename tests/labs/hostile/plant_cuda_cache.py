# what: CUDA that does not compile, plus a compiled correct object/library planted under that source's hash in ~/.cache/oprt-lab-cuda and /tmp/oprt-lab-cuda (world-writable); TileLang from the solution
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=failed
import hashlib
import os
import shutil

from operator_course.cuda import cuda_build

GOOD = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) y[i] = x[i];
}
"""
CUDA_SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  not yet written
"""
try:
    good_obj = cuda_build.compile_check("copy", GOOD)
    good_lib = good_obj.with_suffix(".so")
    cuda_build._run_nvcc(["-arch=sm_90", "-shared", "-Xcompiler", "-fPIC", "-cudart", "shared",
                          str(good_obj.with_suffix("").with_suffix(".cu")), "-o", str(good_lib)])
    stem = "copy-" + hashlib.sha256(cuda_build.full_source("copy", CUDA_SOURCE).encode()).hexdigest()[:16]
    for cache in (os.path.expanduser("~/.cache/oprt-lab-cuda"), "/tmp/oprt-lab-cuda"):
        os.makedirs(cache, exist_ok=True)
        os.chmod(cache, 0o777)
        shutil.copy(good_obj.with_suffix("").with_suffix(".cu"), f"{cache}/{stem}.cu")
        shutil.copy(good_obj, f"{cache}/{stem}.sm_90.o")
        for arch in ("sm90", "sm80", "sm89", "sm100"):
            shutil.copy(good_lib, f"{cache}/{stem}.{arch}.so")
        print("planted in", cache, sorted(os.listdir(cache)))
except Exception as e:  # noqa: BLE001
    print("planting failed:", type(e).__name__, e)
