"""Building a lab's CUDA kernel: nvcc with the source checks, or the CPU emulator."""
