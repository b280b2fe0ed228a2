"""vector_add: c = a + b, element by element (lab 2)."""

import torch

from .record import CudaLab, Operator

RECORD = Operator(
    name="vector_add",
    kind="elementwise",
    contract_attrs=(),
    contract_shapes=lambda s: (s, [s, s]),
    lab_shapes=((1,), (7,), (1023,), (4097,), (1_048_579,), (0,)),
    bench_shape=(1 << 26,),
    input_shapes=lambda s: [s, s],
    output_shape=lambda s: s,
    torch_call=lambda out, a, b: torch.add(a, b, out=out),
    reference_call=lambda a, b: a.double() + b.double(),
    flops_per_element=1,
    cuda=CudaLab(pointers=("a", "b", "c"), sizes=("n",), empty="n == 0",
                 grid_cap=1056, launch="int64_t blocks = (n + 255) / 256; if (blocks > GRID_CAP) blocks = GRID_CAP;\n"
                        "  vector_add_kernel<T><<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>("
                        "(const T*)a, (const T*)b, (T*)c, n);"),
    cuda_sizes=lambda inputs: (inputs[0].numel(),),
    production={"cuda": "production: 16-byte packed walk over a, b and c",
                "tilelang": "production: 4 elements per thread, T.Parallel"},
    step_bench_shapes=((1 << 26,),),
)
