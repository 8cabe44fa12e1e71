"""Small convolutions in one compiled call against the split path and the reference.

A Conv of few output pixels whose work is too small to share among the threads runs
every image in one compiled call (``_pixel_dots.dots_images``); with the small-work
threshold at 1 (``set_min_parallel``) the same layer is split among the threads
(``pixel_dots_conv``). Both must give the reference kernel's values and the same bits
as each other, whatever the batch, groups, residual and activation.
"""

from __future__ import annotations

import numpy as np
import pytest

from onnxkit.kernels.cpu import conv as cpu_conv
from onnxkit.kernels.cpu._threads import min_parallel, set_min_parallel
from onnxkit.ops.fused.fused_conv import fused_conv as reference_fused_conv

RNG = np.random.default_rng(11)

# (input N, C, H, W), (M, C/group, KH, KW), attributes, with a residual
CASES = [
    ((3, 6, 3, 3), (10, 6, 3, 3), dict(pads=[1, 1, 1, 1], activation="Relu"), False),
    ((2, 8, 2, 2), (6, 4, 1, 1), dict(group=2, activation="HardSwish"), True),
    ((1, 12, 4, 4), (9, 12, 1, 1), dict(activation="Clip", activation_params=[0.0, 6.0]),
     True),
    ((2, 5, 1, 1), (7, 5, 1, 1), dict(), False),
]


def _constant(a):
    """Read-only, as a session's initializers are."""
    a = a.copy()
    a.flags.writeable = False
    return a


@pytest.mark.parametrize("x_shape, w_shape, attrs, with_z", CASES)
def test_one_call_and_split_agree_with_reference(x_shape, w_shape, attrs, with_z):
    X = RNG.standard_normal(x_shape).astype(np.float32)
    W = _constant(RNG.standard_normal(w_shape).astype(np.float32))
    B = _constant(RNG.standard_normal(w_shape[0]).astype(np.float32))
    expected = reference_fused_conv(X, W, B, None, **attrs)
    Z = RNG.standard_normal(expected.shape).astype(np.float32) if with_z else None
    if with_z:
        expected = reference_fused_conv(X, W, B, Z, **attrs)
    before = min_parallel()
    try:
        one = cpu_conv.fused_conv(X, W, B, Z, **attrs)
        assert cpu_conv.ran() == "dots"
        set_min_parallel(1)  # every split runs (one part per thread)
        split = cpu_conv.fused_conv(X, W, B, Z, **attrs)
    finally:
        set_min_parallel(before)
    np.testing.assert_allclose(one, expected, rtol=1e-5, atol=1e-5 * np.abs(expected).max())
    np.testing.assert_array_equal(one, split)
