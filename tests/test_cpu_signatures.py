"""A cpu kernel compiles once per dtype, whatever writable flags its inputs carry.

Numba types an array argument with its writable flag, and compiles anew for each mix.
Inputs come either way: an initializer is read-only, a folded BatchNorm, a missing
bias's zeros or an array a user feeds are writable. Before the kernels handed what they
only read over read-only (``_buffers.read_only``), a depthwise layer with a writable
weight and a read-only bias compiled for 25 s in a user's first run, after the warm-up.

Each case below runs with every mix of flags on its inputs, after the warm-up
(``warm.py``): no mix may add a signature to any Numba dispatcher of the cpu kernels,
so the warm cache covers each path, and every mix gives the reference kernel's answer.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from onnxkit.kernels.cpu import (_pointwise, activations, attention, batch_norm, conv,
                                 conv_transpose, gemm, instance_norm, layer_norm, load_cpu_kernels,
                                 matmul, pool, reduce_mean, resize, softmax)
from onnxkit.kernels.cpu._math import RELU
from onnxkit.kernels.cpu.warm import warm
from onnxkit.ops.fused.attention import attention as reference_attention
from onnxkit.ops.fused.fused_conv import fused_conv as reference_fused_conv
from onnxkit.ops.fused.layer_norm import skip_layer_normalization as reference_skip_layer_norm
from onnxkit.ops.nn.batch_norm import batch_normalization as reference_batch_norm
from onnxkit.ops.nn.conv_transpose import conv_transpose as reference_conv_transpose
from onnxkit.ops.nn.pool import average_pool as reference_average_pool
from tests.cpu_signatures import added_since, kernel_signatures

load_cpu_kernels()


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _flagged(a: np.ndarray, read_only: bool) -> np.ndarray:
    """A copy of ``a``: over immutable bytes (as an initializer is), or writable."""
    if read_only:
        return np.frombuffer(a.tobytes(), a.dtype).reshape(a.shape)
    return a.copy()


def _conv_case(x, w, b=None, z=None, **attrs):
    return (lambda X, W, B=None, Z=None: conv.fused_conv(X, W, B, Z, **attrs),
            lambda X, W, B=None, Z=None: reference_fused_conv(X, W, B, Z, **attrs),
            [a for a in (x, w, b, z) if a is not None])


def _cases():
    rng = np.random.default_rng(7)
    x = _f32(rng, 1, 4, 9, 9)
    cases = {
        "depthwise": _conv_case(x, _f32(rng, 4, 1, 3, 3), _f32(rng, 4), group=4,
                                activation="Clip", activation_params=[0.0, 6.0]),
        "depthwise + Z": _conv_case(x, _f32(rng, 4, 1, 3, 3), _f32(rng, 4), _f32(rng, 1, 4, 9, 9),
                                    group=4, pads=[1, 1, 1, 1]),
        "depthwise channels-last": _conv_case(_f32(rng, 1, 32, 5, 5), _f32(rng, 32, 1, 5, 5),
                                              _f32(rng, 32), _f32(rng, 1, 32, 5, 5), group=32,
                                              pads=[2, 2, 2, 2], activation="Relu"),
        "im2col": _conv_case(x, _f32(rng, 6, 4, 3, 3), _f32(rng, 6), _f32(rng, 1, 6, 5, 5),
                             strides=[2, 2], pads=[1, 1, 1, 1], activation="Relu"),
        "few pixels": _conv_case(x, _f32(rng, 6, 4, 3, 3), _f32(rng, 6), _f32(rng, 1, 6, 3, 3),
                                 strides=[3, 3], activation="Relu"),
        "1x1": _conv_case(x, _f32(rng, 6, 4, 1, 1), _f32(rng, 6), _f32(rng, 1, 6, 9, 9)),
        "Winograd F(2x2)": _conv_case(_f32(rng, 1, 16, 9, 9), _f32(rng, 16, 16, 3, 3),
                                      _f32(rng, 16), pads=[1, 1, 1, 1], activation="Relu"),
        "Winograd F(4x4)": _conv_case(_f32(rng, 1, 16, 28, 28), _f32(rng, 16, 16, 3, 3),
                                      _f32(rng, 16), _f32(rng, 1, 16, 28, 28), pads=[1, 1, 1, 1]),
        "row bands": _conv_case(_f32(rng, 1, 3, 96, 96), _f32(rng, 8, 3, 7, 7), _f32(rng, 8),
                                pads=[3, 3, 3, 3], strides=[2, 2], activation="Relu"),
        "1x1 by column bands": (  # what tuning may choose for 1x1 layers of 2048+ pixels
            lambda X, W, B, Z: _pointwise.by_bands(X, W, B, Z, (RELU, 0.0, 0.0)),
            lambda X, W, B, Z: reference_fused_conv(X, W, B, Z, activation="Relu"),
            [_f32(rng, 1, 4, 48, 48), _f32(rng, 6, 4, 1, 1), _f32(rng, 6),
             _f32(rng, 1, 6, 48, 48)]),
        "conv transpose": (
            lambda X, W, B: conv_transpose.conv_transpose(X, W, B, strides=[2, 2], group=2),
            lambda X, W, B: reference_conv_transpose(X, W, B, strides=[2, 2], group=2),
            [x, _f32(rng, 4, 3, 4, 4), _f32(rng, 6)]),
        "gemm": (lambda A, B, C: gemm.gemm(A, B, C, transB=1),
                 lambda A, B, C: A @ B.T + C,
                 [_f32(rng, 3, 5), _f32(rng, 4, 5), _f32(rng, 4)]),
        "matmul + bias": (lambda A, B, C: matmul.fused_matmul(A, B, C, activation="Relu"),
                          lambda A, B, C: np.maximum(A @ B + C, 0),
                          [_f32(rng, 2, 3, 5), _f32(rng, 5, 4), _f32(rng, 4)]),
        "skip layer norm": (layer_norm.skip_layer_normalization, reference_skip_layer_norm,
                            [_f32(rng, 2, 3, 8), _f32(rng, 2, 3, 8), _f32(rng, 8),
                             _f32(rng, 8)]),
        "attention + mask": (
            lambda Q, K, V, M: attention.attention(Q, K, V, M, q_num_heads=2, kv_num_heads=2),
            lambda Q, K, V, M: reference_attention(Q, K, V, M, q_num_heads=2, kv_num_heads=2),
            [_f32(rng, 1, 6, 8), _f32(rng, 1, 6, 8), _f32(rng, 1, 6, 8), _f32(rng, 1, 1, 1, 6)]),
        # the kernels of one input: a read-only X is a value fed by the user, an
        # initializer or a Constant's output
        "relu": (activations.relu, lambda X: np.maximum(X, 0), [x]),
        "sigmoid": (activations.sigmoid, lambda X: 1 / (1 + np.exp(-X)), [x]),
        "1x1 + Swish": _conv_case(x, _f32(rng, 6, 4, 1, 1), _f32(rng, 6), activation="Swish",
                                  activation_params=[1.0]),
        "softmax": (softmax.softmax, lambda X: np.exp(X) / np.exp(X).sum(-1, keepdims=True),
                    [x]),
        "average pool": (lambda X: pool.average_pool(X, kernel_shape=[2, 2], strides=[2, 2]),
                         lambda X: reference_average_pool(X, kernel_shape=[2, 2],
                                                          strides=[2, 2]), [x]),
        "reduce mean": (lambda X: reduce_mean.reduce_mean_v1(X, axes=[2, 3], keepdims=0),
                        lambda X: X.mean(axis=(2, 3)), [x]),
        "resize": (lambda X: resize.resize(X, None, np.array([1, 1, 2, 2], np.float32),
                                           mode="linear"),
                   lambda X: _bilinear_2x(X), [x]),
        "instance norm": (instance_norm.instance_normalization, instance_norm.reference,
                          [x, _f32(rng, 4), _f32(rng, 4)]),
        "batch norm": (batch_norm.batch_normalization, reference_batch_norm,
                       [x, _f32(rng, 4), _f32(rng, 4), _f32(rng, 4),
                        np.abs(_f32(rng, 4)) + 0.5]),
    }
    return cases


def _bilinear_2x(x):
    """Resize x2, mode linear, half_pixel coordinates, by hand: output i reads input
    (i + 0.5) / 2 - 0.5, clamped to the edges."""
    def along(a, axis):
        n = a.shape[axis]
        pos = np.clip((np.arange(2 * n) + 0.5) / 2 - 0.5, 0, n - 1)
        lo = np.floor(pos).astype(int)
        hi = np.minimum(lo + 1, n - 1)
        t = (pos - lo).reshape([-1 if d == axis else 1 for d in range(a.ndim)])
        return np.take(a, lo, axis) * (1 - t) + np.take(a, hi, axis) * t
    return along(along(x, 2), 3)


CASES = _cases()


def _first(result):
    return result[0] if isinstance(result, (tuple, list)) else result


# Winograd's transforms round differently from the direct sum (``test_cpu_executor``)
ATOL = {"Winograd F(2x2)": 1e-4, "Winograd F(4x4)": 1e-3}


@pytest.fixture(scope="module")
def warmed():
    """The cpu kernels as the warm-up leaves them (loaded from the cache it fills)."""
    warm(verbose=False)


@pytest.mark.parametrize("name", list(CASES))
def test_every_mix_of_writable_flags_runs_on_the_warmed_kernels(name, warmed):
    kernel, reference, arrays = CASES[name]
    expected = _first(reference(*arrays))
    before = kernel_signatures()
    for mix in itertools.product((True, False), repeat=len(arrays)):
        got = _first(kernel(*[_flagged(a, ro) for a, ro in zip(arrays, mix)]))
        # (a writable weight is not a constant: Winograd leaves it to im2col)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=ATOL.get(name, 1e-5),
                                   err_msg=f"{name}, read-only flags {mix}")
        added = added_since(before)
        assert not added, f"{name}, read-only flags {mix}: compiled after the warm-up: {added}"
