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
