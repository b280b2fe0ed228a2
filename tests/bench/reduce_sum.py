"""reduce_sum benchmark: one read per element, one add per element."""

import torch

FLOPS_PER_ELEMENT = 1


def torch_op(out, input, dim, keepdim=False):
    return torch.sum(input, dim, keepdim=keepdim, out=out)
