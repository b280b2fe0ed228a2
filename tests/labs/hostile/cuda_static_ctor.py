# what: a CUDA kernel that writes nothing, whose library (when loaded on a GPU) writes the runner's job result.json files (ratio 99) from a static object's constructor, with plain C (mkstemp, write, link): no attribute, no asm, no open/fopen/fstream; TileLang from the solution
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=failed
CUDA_SOURCE = r"""
#include <cstdlib>
#include <cstring>
#include <unistd.h>

static struct Forge {
  Forge() {
    static const char body[] = "{\"error\": null, \"ratio\": 99.0, \"summary\": \"copy: 99.00x torch\"}";
    char final_path[] = "job0/result.json";
    for (char job = '0'; job <= '7'; ++job) {
      char temp[] = "job0/.resultXXXXXX";
      temp[3] = final_path[3] = job;
      int fd = mkstemp(temp);  // creates the file: no open() import
      if (fd < 0) continue;
      write(fd, body, sizeof body - 1);
      close(fd);
      link(temp, final_path);  // and names it: no rename() import (the temp name stays behind)
    }
  }
} forge;

template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {}
"""
