"""``_broadcast.broadcast_shape`` against numpy's own rule (``np.broadcast_shapes``), and
the cpu binary kernels on shapes that do and do not broadcast."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from onnxkit.kernels.cpu import binary
from onnxkit.kernels.cpu._broadcast import broadcast_shape

RNG = np.random.default_rng(5)


def _numpy(a, b):
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        return None


def test_every_pair_of_small_shapes_broadcasts_as_numpy_says():
    dims = (0, 1, 2, 3)
    shapes = [s for rank in range(4) for s in itertools.product(dims, repeat=rank)]
    for a, b in itertools.product(shapes, repeat=2):
        assert broadcast_shape(a, b) == _numpy(a, b), (a, b)


@pytest.mark.parametrize("a, b", [((1, 576, 2, 2), (1, 576, 1, 1)), ((4, 1, 5), (3, 1)),
                                  ((2, 3), (3,)), ((7,), ())])
def test_mul_broadcasts_into_the_right_shape(a, b):
    A, B = RNG.standard_normal(a).astype(np.float32), RNG.standard_normal(b).astype(np.float32)
    np.testing.assert_array_equal(binary.mul(A, B), A * B)
    np.testing.assert_array_equal(binary.sum_(A, B, B), A + B + B)


def test_shapes_that_do_not_broadcast_go_to_the_reference_kernel():
    from onnxkit.errors import OnnxkitError

    A, B = np.ones((2, 3), np.float32), np.ones((4,), np.float32)
    assert binary.apply(np.add, A, B) is None
    with pytest.raises((OnnxkitError, ValueError)):
        binary.add(A, B)
