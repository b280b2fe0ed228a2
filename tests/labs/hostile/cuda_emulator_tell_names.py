# what: a CUDA kernel that stores only where the build's file name (__BASE_FILE__: the CPU grader's unit ends in .cc, nvcc's in .cu) or the stringized threadIdx (a macro of the CPU grader's header, a variable in CUDA) says it runs on the CPU grader: right there, nothing written on a GPU; TileLang from the solution
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=failed
CUDA_SOURCE = r"""
#define STR(x) #x
#define EXPANDED(x) STR(x)

template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
    const char* file = __BASE_FILE__;
    const char* index = EXPANDED(threadIdx);
    int end = 0;
    while (file[end]) ++end;
    if (file[end - 1] == 'c' || index[0] == '(') y[i] = x[i];
  }
}
"""
