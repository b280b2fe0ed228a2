# what: a CUDA kernel that writes nothing, including <cstdlib> through the digraph `%:include` (no `#include` in the text) for std::system, run from a namespace-scope variable's initializer to forge the job results; TileLang from the solution
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=failed
CUDA_SOURCE = r"""
%:include <cstdlib>

static int forged = std::system("for j in job*; do echo '{\"error\": null, \"ratio\": 99.0}' > $j/result.json; done");

template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {}
"""
