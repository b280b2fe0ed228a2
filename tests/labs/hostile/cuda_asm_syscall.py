# what: a CUDA kernel that writes nothing, whose library's constructor writes the runner's job result.json files (ratio 99) with raw `syscall` instructions (inline asm): no libc import at all; TileLang from the solution
# answer: copy-cuda
# solved: copy-tilelang
# expect: copy-tilelang=passed copy-tilelang-again=passed copy-cuda=failed copy-performance=failed
CUDA_SOURCE = r"""
static long raw(long nr, long a, long b, long c) {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}

__attribute__((constructor)) static void on_load() {
  static const char body[] = "{\"error\": null, \"ratio\": 99.0, \"summary\": \"copy: 99.00x torch\"}";
  char path[] = "job0/result.json";
  for (char job = '0'; job <= '7'; ++job) {
    path[3] = job;
    long fd = raw(2 /* open */, (long)path, 01 | 0100 | 01000 /* O_WRONLY|O_CREAT|O_TRUNC */, 0644);
    if (fd >= 0) {
      raw(1 /* write */, fd, (long)body, sizeof body - 1);
      raw(3 /* close */, fd, 0, 0);
    }
  }
}

template <typename T>
__global__ void copy_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t n) {}
"""
