"""The runtime's own broadcasting rule (checks.broadcast_shape) agrees with torch's on every
pair of shapes, including empty dims and shapes that do not broadcast."""

import torch
from hypothesis import given, settings, strategies as st

from operator_runtime._internal.checks import broadcast_shape

shapes = st.lists(st.sampled_from([0, 1, 2, 3, 5]), max_size=5).map(tuple)


@settings(deadline=None)  # torch's first broadcast_shapes imports sympy (~1 s)
@given(shapes, shapes)
def test_matches_torch_broadcast_shapes(a, b):
    try:
        expected = tuple(torch.broadcast_shapes(a, b))
    except RuntimeError:
        expected = None
    assert broadcast_shape(a, b) == expected
