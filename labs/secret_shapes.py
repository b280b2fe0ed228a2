"""The grader's own shapes: drawn per grading run from its secret seed, beyond every grid, loop or
row bound a student could hard-code from the public lab shapes (the operator records' lab_shapes).

They live here, beside the solutions, and not in the installed package: a student who could read
the ranges wrote kernels capped just past them (a fixed grid of 32 rounds covered every vector a
range below 2^23 drew, and scored 3/3). The hub and the grader's sandbox hide this folder from
students. A course that publishes its repository should keep its own copy elsewhere and grade with
``--secret-shapes FILE``, or widen the ranges here each term.

Each entry takes a ``random.Random`` and returns shapes (an operator record's shape convention). Keep
them cheap for the CPU grader: they run through the CUDA emulator on a laptop-class machine."""

SECRET_SHAPES = {
    # longer than 2^22: past the launcher's 1056 blocks x 256 threads x 15 rounds, odd (no vector width divides it)
    "copy": lambda rng: ((rng.randrange(1 << 22, 1 << 23) | 1,),),
    "vector_add": lambda rng: ((rng.randrange(1 << 22, 1 << 23) | 1,),),
    # rows longer than any public one, and more short rows than a fixed grid would hold
    "reduce_sum": lambda rng: ((rng.randrange(2, 6), rng.randrange(70_003, 200_000) | 1),
                               (rng.randrange(300, 1500), rng.randrange(2, 64))),
    "softmax": lambda rng: ((rng.randrange(2, 6), rng.randrange(70_003, 200_000) | 1),
                            (rng.randrange(300, 1500), rng.randrange(2, 64))),
    # every dimension past two 64-wide tiles and none a multiple of 8; and a thin product over a K
    # longer than any public one (a kernel that stopped after 32 tiles of K = 1024 scored full marks
    # when no K passed 1000), cheap for the CPU grader with M and N small
    "matmul": lambda rng: (tuple(rng.randrange(lo, hi) // 8 * 8 + rng.randrange(1, 8)
                                 for lo, hi in ((130, 200), (130, 200), (260, 520))),
                           (rng.randrange(9, 40) | 1, rng.randrange(9, 40) | 1, rng.randrange(1500, 5000) | 1)),
    # (B, H, S, D): an S past the keys a kernel could cap at (a submission that stopped at key 608
    # passed when every S was under 600), with a small D to keep the CPU grader's check short, and a
    # wide one with more batches and heads than a fixed grid would cover, both with odd head dims (one
    # that used whole chunks of 16 features passed when every D was a multiple of 16)
    "scaled_dot_product_attention": lambda rng: (
        (rng.randrange(1, 3), rng.randrange(3, 6), rng.randrange(300, 600) | 1, 64),
        (1, 1, rng.randrange(640, 900) | 1, rng.randrange(9, 33) | 1),
        # past 1024 keys (a cap at a round 1024 passed when no S reached 900: a red-team review), D small
        (1, 1, rng.randrange(1040, 1300) | 1, rng.randrange(5, 17) | 1),
        (rng.randrange(3, 5), rng.randrange(6, 10), rng.randrange(5, 40), rng.randrange(65, 128) | 1)),
}
