"""The CPU path's initcheck (cuda_cpu.py, runtime.cpp): a read of __shared__ memory that no thread
of the block wrote is reported (garbage on a GPU, zeros on the CPU). The catalogue
(tests/labs/cuda_faults/uninit_*.py, correct_shared_memcpy_memset.py) runs the kernels; this file
checks how the variables to watch are found."""

from __future__ import annotations

import shutil

import pytest
import torch

from operator_course.cuda import cuda_cpu


def test_the_names_declared_shared_are_found():
    source = """
    __device__ float bias;
    __shared__ float file_scope[4];
    template <typename T> __global__ void k(const T* x, T* y, int64_t n) {
      __shared__ __align__(16) float tile[32][33], row[32];  // a comment: __shared__ float nope;
      static __shared__ typename Wrap<T>::type wrapped;
      __shared__ float sdata[N < 4 ? 4 : N];
      /* __shared__ float commented[2]; */
      float local[4];
    }
    """
    assert cuda_cpu.shared_names(source) == {"file_scope", "tile", "row", "wrapped", "sdata"}


SOURCE = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  __shared__ float stage[256];
  __shared__ float never[256];
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    stage[threadIdx.x] = static_cast<float>(x[i]);
    y[i] = T(stage[threadIdx.x] + (READ_NEVER ? never[threadIdx.x] : 0.f));
  }
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="the CPU path builds kernels with g++")
@pytest.mark.parametrize("read_never", [False, True])
def test_only_reads_of_unwritten_shared_bytes_are_reported(read_never):
    source = SOURCE.replace("READ_NEVER", "true" if read_never else "false")
    lib, _ = cuda_cpu.build_library("copy", source)
    assert cuda_cpu.shared_names(source) == {"stage", "never"}
    x = torch.arange(1, 301, dtype=torch.float32)
    y = torch.zeros_like(x)
    kernel = cuda_cpu.CpuLab("copy", lib)  # no source: the names come from the unit beside the library
    if not read_never:
        kernel.run([x], y, "copy")
        assert torch.equal(x, y)
        return
    with pytest.raises(AssertionError) as e:
        kernel.run([x], y, "copy")
    text = str(e.value)
    assert "read of shared memory no thread wrote: thread (0,0,0) of block (0,0,0) reads never[0] at CUDA_SOURCE line 8" in text
    assert "(300 such reads in all)" in text, text


COUNTER = r"""
template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  __shared__ unsigned arrived;
  SET_TO_ZERO
  atomicAdd(&arrived, 1u);
  __syncthreads();
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = arrived == blockDim.x ? x[i] : T(0);
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="the CPU path builds kernels with g++")
@pytest.mark.parametrize("zeroed", [False, True])
def test_an_atomic_on_a_shared_counter_no_thread_set_is_reported(zeroed):
    source = COUNTER.replace("SET_TO_ZERO", "if (threadIdx.x == 0) arrived = 0;\n  __syncthreads();" if zeroed else "")
    lib, _ = cuda_cpu.build_library("copy", source)
    x = torch.arange(1, 301, dtype=torch.float32)
    y = torch.zeros_like(x)
    kernel = cuda_cpu.CpuLab("copy", lib, source)
    if zeroed:
        kernel.run([x], y, "copy")
        assert torch.equal(x, y)
        return
    with pytest.raises(AssertionError) as e:
        kernel.run([x], y, "copy")
    assert "thread (0,0,0) of block (0,0,0) reads arrived at CUDA_SOURCE line 6, which no thread of the block wrote" \
        in str(e.value), str(e.value)
