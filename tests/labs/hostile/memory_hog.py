# what: no kernel; allocates and touches 3 GiB (bytearray), then 1 GiB more at a time up to 12 GiB, until MemoryError
# answer: copy-tilelang
# expect: copy-tilelang=failed copy-tilelang-again=failed copy-cuda=failed copy-performance=failed
blocks = []
try:
    for size in [3 << 30] + [1 << 30] * 9:
        block = bytearray(size)
        block[::4096] = b"\1" * len(range(0, size, 4096))  # touch every page
        blocks.append(block)
        print(sum(map(len, blocks)) >> 30, "GiB held")
except MemoryError:
    print("MemoryError with", sum(map(len, blocks)) >> 30, "GiB held")
