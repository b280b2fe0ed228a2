"""copy: y = x, element by element (lab 1, the first chapter)."""

import torch

from .record import CudaLab, Operator

RECORD = Operator(
    name="copy",
    kind="elementwise",
    contract_attrs=(),
    contract_shapes=lambda s: (s, [s]),
    lab_shapes=((1,), (7,), (1023,), (4097,), (1_048_579,), (0,)),
    bench_shape=(1 << 26,),
    input_shapes=lambda s: [s],
    output_shape=lambda s: s,
    # dtype: copy's conversion (out already has it); the answer is the converted input, no arithmetic
    torch_call=lambda out, input, dtype=None: out.copy_(input),
    reference_call=lambda input, dtype=None: torch.empty(input.shape, dtype=dtype or input.dtype,
                                                          device=input.device).copy_(input),
    exact=True,  # no arithmetic: bit-equal
    # a grid smaller than the data for large inputs, so the kernel must loop (grid-stride)
    cuda=CudaLab(pointers=("x", "y"), sizes=("n",), empty="n == 0",
                 grid_cap=1056, launch="int64_t blocks = (n + 255) / 256; if (blocks > GRID_CAP) blocks = GRID_CAP;\n"
                        "  copy_kernel<T><<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>((const T*)x, (T*)y, n);"),
    cuda_sizes=lambda inputs: (inputs[0].numel(),),
    production={"cuda": "production: cudaMemcpyAsync (same dtype), else a 16-byte packed walk",
                "tilelang": "production: 4 elements per thread, T.Parallel"},
    step_bench_shapes=((1 << 26,),),
)
