"""Compile every ``cpu`` kernel once, so that sessions start from Numba's cache.

    python -m onnxkit.kernels.cpu.warm          # (make warm) minutes the first time

Numba compiles a kernel for each combination of argument types on its first call and,
with ``cache=True``, writes the machine code under ``NUMBA_CACHE_DIR`` (the Makefile
points it at ``.cache/numba``); later processes load it from there. This module calls
each kernel on small float32 inputs along each of its code paths (the same argument
types real models produce; the compiled kernels take float32 only, ``_dtypes.COMPILED``).
A kernel with a fused activation is compiled once per activation it is called with
(``_math``: the code's class is its type):
the calls here cover none, Relu, Clip, Gelu and Swish; a model fusing another activation
compiles that one variant on first use.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

from onnxkit.kernels.cpu._math import NONE, RELU
from onnxkit.kernels.cpu._threads import DEFAULT_MIN_PARALLEL, min_parallel, set_min_parallel


def _constant(a: np.ndarray) -> np.ndarray:
    """A read-only copy of ``a``, as a session's initializers are (read from the model's
    bytes): the kernels compile for read-only weights."""
    return np.frombuffer(a.tobytes(), a.dtype).reshape(a.shape)


def _planned(kernel, *inputs, **attrs):
    """``kernel(*inputs, **attrs)`` as a plan's step calls it: prepared by its ``prepare``
    hook, with W and B (inputs 1 and 2) as the plan's initializers (Winograd needs them)."""
    from onnx import helper

    names = [f"in{i}" if v is not None else "" for i, v in enumerate(inputs)]
    node = helper.make_node("Conv", names, ["out"])
    constants = {i: inputs[i] for i in (1, 2) if i < len(inputs) and inputs[i] is not None}
    return kernel.prepare(node, attrs, constants, {})(*inputs)


class _Ctx:
    """Just enough of a KernelContext for MaxPool (one output wanted)."""

    n_outputs = 1

    class node:  # noqa: N801 - mimics NodeProto's attribute
        output = ["Y"]


def _calls():
    """(what, thunk) pairs covering the kernels' code paths."""
    from onnxkit.kernels.cpu import (_pointwise, activations, attention, batch_norm, binary,
                                     conv, conv_transpose, einsum, gemm, instance_norm,
                                     layer_norm, matmul, pool, reduce_mean, resize, rms_norm,
                                     softmax)

    rng = np.random.default_rng(0)
    dtype = np.float32

    def r(*shape):
        return rng.standard_normal(shape).astype(dtype)

    def c(*shape):  # weights and biases: initializers, read-only in a session
        return _constant(r(*shape))

    x, x1 = r(1, 4, 9, 9), r(1, 4, 12)
    calls = [
        ("conv im2col", lambda: conv.conv(x, c(6, 4, 3, 3), c(6), pads=[1, 1, 1, 1])),
        ("conv no bias", lambda: conv.conv(x, c(6, 4, 3, 3), pads=[1, 1, 1, 1], strides=[2, 2])),
        ("conv no bias + relu", lambda: conv.fused_conv(x, c(6, 4, 3, 3), pads=[1, 1, 1, 1],
                                                        activation="Relu")),
        ("conv 1x1", lambda: conv.fused_conv(x, c(6, 4, 1, 1), c(6), r(1, 6, 9, 9),
                                             activation="Relu")),
        ("conv 1-D", lambda: conv.conv(x1, c(5, 4, 3), pads=[1, 1])),
        ("conv few pixels", lambda: conv.fused_conv(r(1, 8, 3, 3), c(6, 8, 3, 3), c(6),
                                                    pads=[1, 1, 1, 1], activation="Relu")),
        ("conv few pixels + Z", lambda: conv.fused_conv(r(1, 8, 3, 3), c(6, 4, 1, 1), None,
                                                        r(1, 6, 3, 3), group=2)),
        ("conv by bands", lambda: conv.fused_conv(r(1, 3, 96, 96), c(8, 3, 7, 7), c(8),
                                                  pads=[3, 3, 3, 3], strides=[2, 2],
                                                  activation="Relu")),
        ("conv by bands + Z", lambda: conv.fused_conv(r(1, 3, 96, 96), c(8, 3, 7, 7), c(8),
                                                      r(1, 8, 48, 48), pads=[3, 3, 3, 3],
                                                      strides=[2, 2])),
        # two bands of columns (``_banded.pointwise_width``): the bands split
        ("conv 1x1 by bands", lambda: _pointwise.by_bands(
            r(1, 4, 112, 112), c(6, 4, 1, 1), c(6), None, (RELU, 0.0, 0.0))),
        ("conv 1x1 by bands + Z", lambda: _pointwise.by_bands(
            r(1, 4, 112, 112), c(6, 4, 1, 1), c(6), r(1, 6, 112, 112), (NONE, 0.0, 0.0))),
        # Clip(0, 6) (ReLU6, MobileNets' activation) through the paths those models take:
        # the stem by bands, the direct 3x3 depthwise, the 1x1 product's epilogue
        ("conv by bands, ReLU6", lambda: conv.fused_conv(  # 27 x 100^2 columns: by bands
            r(1, 3, 200, 200), c(8, 3, 3, 3), c(8), pads=[1, 1, 1, 1], strides=[2, 2],
            activation="Clip", activation_params=[0.0, 6.0])),
        ("depthwise 3x3, ReLU6", lambda: conv.fused_conv(
            r(1, 32, 16, 16), c(32, 1, 3, 3), c(32), pads=[1, 1, 1, 1], group=32,
            activation="Clip", activation_params=[0.0, 6.0])),
        ("conv 1x1, ReLU6", lambda: conv.fused_conv(x, c(6, 4, 1, 1), c(6), activation="Clip",
                                                    activation_params=[0.0, 6.0])),
        ("depthwise", lambda: conv.fused_conv(x, c(4, 1, 3, 3), c(4), activation="Clip", group=4,
                                              activation_params=[0.0, 6.0])),
        ("depthwise no bias", lambda: conv.fused_conv(x, c(4, 1, 3, 3), group=4,
                                                      activation="Relu")),
        ("depthwise + Z", lambda: conv.fused_conv(x, c(4, 1, 3, 3), c(4), r(1, 4, 9, 9), group=4,
                                                  pads=[1, 1, 1, 1])),
        # channels-last: small planes (64 output pixels at most), 32+ channels
        ("depthwise NHWC", lambda: conv.fused_conv(r(1, 32, 5, 5), c(32, 1, 5, 5), c(32), group=32,
                                                   pads=[2, 2, 2, 2], activation="Relu")),
        ("depthwise NHWC + Z", lambda: conv.fused_conv(r(1, 32, 5, 5), c(32, 1, 5, 5), c(32),
                                                       r(1, 32, 5, 5), group=32,
                                                       pads=[2, 2, 2, 2])),
        ("conv transpose", lambda: conv_transpose.conv_transpose(x, c(4, 3, 4, 4), c(6),
                                                                 strides=[2, 2], group=2)),
        ("conv transpose no bias", lambda: conv_transpose.conv_transpose(x, c(4, 3, 2, 2))),
        ("gemm", lambda: gemm.fused_gemm(r(3, 5), c(4, 5), c(4), transB=1, activation="Relu")),
        ("gemm C matrix", lambda: gemm.gemm(r(3, 5), r(5, 4), r(3, 4))),
        ("matmul", lambda: matmul.fused_matmul(r(2, 3, 5), c(5, 4), c(4), activation="Gelu")),
        ("matmul batched", lambda: matmul.matmul(r(2, 3, 5), r(2, 5, 4))),
        ("matmul 4-D", lambda: matmul.matmul(r(2, 2, 3, 5), r(2, 2, 5, 4))),
        ("einsum", lambda: einsum.einsum(r(2, 3, 4), r(2, 5, 4), equation="bqd,bkd->bqk")),
        ("max pool", lambda: pool.max_pool(x, kernel_shape=[3, 3], pads=[1, 1, 1, 1], ctx=_Ctx)),
        ("max pool s2", lambda: pool.max_pool(x, kernel_shape=[3, 3], strides=[2, 2], ctx=_Ctx)),
        ("average pool", lambda: pool.average_pool(x, kernel_shape=[2, 2])),
        ("average pool s2", lambda: pool.average_pool(x, kernel_shape=[2, 2], strides=[2, 2])),
        ("batch norm", lambda: batch_norm.fused_batch_normalization(
            x, c(4), c(4), c(4), _constant(np.abs(r(4))), activation="Relu")),
        ("batch norm plain", lambda: batch_norm.fused_batch_normalization(
            x, c(4), c(4), c(4), _constant(np.abs(r(4))))),
        ("instance norm", lambda: instance_norm.instance_normalization(x, c(4), c(4))),
        # 4096 values: tiny tensors take numpy's maximum (``activations.TINY``), not a kernel
        ("relu", lambda: activations.relu(r(1, 4, 32, 32))),
        ("clip", lambda: activations.clip(x, np.array(0, dtype), np.array(6, dtype))),
        ("leaky relu", lambda: activations.leaky_relu(x)),
        ("sigmoid", lambda: activations.sigmoid(x)),
        ("tanh", lambda: activations.tanh(x)),
        ("conv 1x1 + swish", lambda: conv.fused_conv(x, c(6, 4, 1, 1), c(6), activation="Swish",
                                                     activation_params=[1.0])),
        ("add", lambda: binary.add(x, r(4, 1, 1))),
        ("add constant", lambda: binary.add(x, c(4, 1, 1))),
        ("softmax", lambda: softmax.softmax(x)),
        ("reduce mean", lambda: reduce_mean.reduce_mean_v1(x, axes=[2, 3], keepdims=0)),
        ("global avg pool", lambda: reduce_mean.global_average_pool(x)),
        ("resize linear", lambda: resize.resize(x, None, np.array([1, 1, 2, 2], np.float32),
                                                mode="linear")),
        ("attention", lambda: attention.attention(r(1, 6, 8), r(1, 6, 8), r(1, 6, 8),
                                                  r(1, 1, 1, 6), q_num_heads=2,
                                                  kv_num_heads=2)),
        ("attention by BLAS", lambda: attention.attention(r(1, 64, 64), r(1, 64, 64),
                                                          r(1, 64, 64), r(1, 1, 1, 64),
                                                          q_num_heads=2, kv_num_heads=2)),
        ("matrix addresses", lambda: _addresses(dtype)),
        ("small products", lambda: _small_products(dtype)),
        ("tree walk", _tree_walk),
        ("thread pool, products", _pool_and_products),
        ("conv Winograd", lambda: _planned(conv.conv, r(1, 16, 9, 9), c(16, 16, 3, 3),
                                           c(16), pads=[1, 1, 1, 1])),
        ("conv Winograd no bias", lambda: _planned(conv.conv, r(1, 16, 9, 9),
                                                   c(16, 16, 3, 3), pads=[1, 1, 1, 1])),
        ("conv Winograd + Z", lambda: _planned(
            conv.fused_conv, r(1, 16, 9, 9), c(16, 16, 3, 3), c(16), r(1, 16, 9, 9),
            pads=[1, 1, 1, 1], activation="Relu")),
        ("conv Winograd F4x4", lambda: _planned(conv.conv, r(1, 16, 28, 28),
                                                c(16, 16, 3, 3), c(16), pads=[1, 1, 1, 1])),
        ("conv Winograd F4x4 -B", lambda: _planned(conv.conv, r(1, 16, 28, 28),
                                                   c(16, 16, 3, 3), pads=[1, 1, 1, 1])),
        ("conv Winograd F4x4 + Z", lambda: _planned(
            conv.fused_conv, r(1, 16, 28, 28), c(16, 16, 3, 3), c(16), r(1, 16, 28, 28),
            pads=[1, 1, 1, 1], activation="Relu")),
        ("gelu", lambda: activations.gelu(x)),
        ("erf", lambda: activations.erf(x)),
        ("hard swish", lambda: activations.hard_swish(x)),
        ("layer norm", lambda: layer_norm.layer_normalization(r(2, 3, 8), c(8), c(8))),
        ("skip layer norm", lambda: layer_norm.skip_layer_normalization(
            r(2, 3, 8), r(2, 3, 8), c(8), c(8))),
        ("rms norm", lambda: rms_norm.onnxkit_rms_normalization(r(2, 3, 8), c(8))),
        ("skip layer norm const", lambda: layer_norm.skip_layer_normalization(
            r(2, 3, 8), c(2, 3, 8), c(8), c(8))),
        ("float16 casts", _half_casts),
    ]
    return calls


def _half_casts() -> None:
    """float16 nodes' casts (``half``, ``_half``): for initializers and for values."""
    from onnxkit.kernels.cpu._half import warm_up

    warm_up()


def _addresses(dtype) -> None:
    """``_blas._address`` compiles per array type: every layout a product's operand may
    have (C, F or strided; 2-D, 3-D batches), writable or read-only."""
    from onnxkit.kernels.cpu._blas import _address

    for shape in ((4, 6), (2, 4, 6)):
        base = np.zeros(shape, dtype)
        for a in (base, np.asfortranarray(base), base[..., ::2]):
            _address(a)
            _address(_constant(np.ascontiguousarray(a)) if a.flags.c_contiguous
                     else np.lib.stride_tricks.as_strided(a, writeable=False))


def _small_products(dtype) -> None:
    """``_blas.matmul``'s one-call path (``_blas._one_call``) compiles once per dtype and
    dimensions: 2-D, batches, a batch times one matrix, one matrix times a batch."""
    from onnxkit.kernels.cpu._blas import matmul

    for sa, sb in (((4, 6), (6, 5)), ((2, 4, 6), (2, 6, 5)), ((2, 4, 6), (6, 5)),
                   ((4, 6), (2, 6, 5))):
        out = np.empty(np.broadcast_shapes(sa[:-2], sb[:-2]) + (4, 5), dtype)
        matmul(np.ones(sa, dtype), _constant(np.ones(sb, dtype)), out)


def _pool_and_products() -> None:
    """The pool's worker loop (``_launch.serve``, compiled when a process first splits
    work otherwise) and a split product of each kind (``_blas``: the products split by
    size, not by ``min_parallel``)."""
    from onnxkit.kernels.cpu import _blas
    from onnxkit.kernels.cpu._threads import _pool

    _pool()
    a, b = np.ones((64, 32), np.float32), np.ones((32, 96), np.float32)
    out = np.empty((64, 96), np.float32)
    for by_columns in (True, False):
        _blas.gemm_parts(a.ctypes.data, _blas.NO_TRANS, 32, b.ctypes.data, _blas.NO_TRANS, 96,
                         out.ctypes.data, 96, 64, 96, 32, 4, 2, by_columns, _blas.DEFAULT)


def _tree_walk() -> None:
    """The tree ensembles' kernel (``_forest_walk.forest_rows``: float32 inputs only)."""
    from onnxkit.kernels.cpu.trees import warm_up

    warm_up()


def warm(verbose: bool = True) -> float:
    """Compile (or load from the cache) every kernel; returns the seconds it took."""
    from onnxkit.kernels.cpu import load_cpu_kernels

    start = time.perf_counter()
    load_cpu_kernels()
    tune = os.environ.get("ONNXKIT_CPU_TUNE")
    notice = os.environ.get("ONNXKIT_CPU_NOTICE")
    os.environ["ONNXKIT_CPU_TUNE"] = "0"  # the static rule: each call takes its own path
    os.environ["ONNXKIT_CPU_NOTICE"] = "0"  # each call's line says it already
    least = min_parallel()
    try:
        # every call twice: split into parts (the hand-over of its parts compiles too),
        # then as small work is run, in one call (the few-pixel products' own kernel)
        for setting in (1, max(least, DEFAULT_MIN_PARALLEL)):
            set_min_parallel(setting)
            for what, thunk in _calls():
                t = time.perf_counter()
                thunk()
                if verbose:
                    print(f"  {what:22s} {time.perf_counter() - t:6.2f} s", flush=True)
    finally:
        set_min_parallel(least)
        for name, value in (("ONNXKIT_CPU_TUNE", tune), ("ONNXKIT_CPU_NOTICE", notice)):
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value
    return time.perf_counter() - start


def main() -> int:
    seconds = warm()
    print(f"cpu kernels ready in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
