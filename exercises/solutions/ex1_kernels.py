"""Reference solutions of exercise 1 (see exercises/ex1_kernels.py for the tasks)."""

from __future__ import annotations

import numpy as np

from onnxkit.ops.registry import Registry, op

KERNELS = Registry("exercise-solutions")


@op("LeakyRelu", 6, 16, registry=KERNELS)
def leaky_relu(X, *, alpha=0.01):
    """y = x where x >= 0, alpha * x elsewhere. https://onnx.ai/onnx/operators/onnx__LeakyRelu.html"""
    return np.where(X >= 0, X, X * X.dtype.type(alpha)).astype(X.dtype)


@op("Softmax", 13, registry=KERNELS)
def softmax(x, *, axis=-1):
    """exp(x - max) / sum(exp(x - max)) along ``axis``. https://onnx.ai/onnx/operators/onnx__Softmax.html"""
    shifted = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return (shifted / np.sum(shifted, axis=axis, keepdims=True)).astype(x.dtype)


@op("Transpose", 1, 13, 21, 23, 24, 25, registry=KERNELS)
def transpose(data, *, perm=None):
    """Output axis i is input axis perm[i] (reversed without perm).
    https://onnx.ai/onnx/operators/onnx__Transpose.html"""
    return np.transpose(data, None if perm is None else tuple(perm))


@op("Gemm", 7, 9, 11, 13, registry=KERNELS)
def gemm(A, B, C=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    """alpha * A' @ B' + beta * C. https://onnx.ai/onnx/operators/onnx__Gemm.html"""
    a = A.T if transA else A
    b = B.T if transB else B
    y = alpha * (a @ b)
    if C is not None:
        y = y + beta * C
    return np.asarray(y).astype(A.dtype)


@op("LayerNormalization", 17, registry=KERNELS)
def layer_normalization(X, Scale, B=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    """Normalize over the axes from ``axis`` on.
    https://onnx.ai/onnx/operators/onnx__LayerNormalization.html"""
    axes = tuple(range(axis % X.ndim, X.ndim))
    x = X.astype(np.float32)
    mean = x.mean(axis=axes, keepdims=True)
    inv_std = 1 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + epsilon)
    y = (x - mean) * inv_std * Scale
    if B is not None:
        y = y + B
    return y.astype(X.dtype), mean, inv_std.astype(np.float32)
