"""Exercise 1: write operator kernels against onnxkit's kernel contract.

The contract (docs/architecture.md, onnxkit/ops/registry.py):

- a kernel is a plain numpy function, registered with ``@op("OpType", v1, v2, ...)`` for
  every ``since_version`` it implements (here in the exercise's own registry, ``KERNELS``,
  so your kernels never mix with onnxkit's);
- inputs are positional numpy arrays; attributes are keyword-only parameters whose Python
  defaults are the spec's defaults;
- return an array of the dtype the spec says (numpy promotion can change it: cast back).

Check your work:   ONNXKIT_EXERCISES=learner python -m pytest exercises -m task1_1
The checks run the onnx backend test cases of each operator through onnxkit with only
your kernel registered, then a few values you can check by hand.
"""

from __future__ import annotations

import numpy as np

from onnxkit.ops.registry import Registry, op

KERNELS = Registry("exercise")


@op("LeakyRelu", 6, 16, registry=KERNELS)
def leaky_relu(X, *, alpha=0.01):
    """y = x where x >= 0, alpha * x elsewhere (same dtype as X).
    https://onnx.ai/onnx/operators/onnx__LeakyRelu.html
    """
    # ## Task 1.1
    # Hint: np.where; keep X's dtype (alpha is a Python float).
    raise NotImplementedError("Need to implement for Task 1.1")


@op("Softmax", 13, registry=KERNELS)
def softmax(x, *, axis=-1):
    """Softmax-13: exp(x) / sum(exp(x)) along ONE axis (not the 2-D coercion of Softmax-1/11).

        m = max(x, axis, keepdims)          # subtract the max: exp never overflows
        e = exp(x - m)
        y = e / sum(e, axis, keepdims)
    https://onnx.ai/onnx/operators/onnx__Softmax.html
    """
    # ## Task 1.2
    raise NotImplementedError("Need to implement for Task 1.2")


@op("Transpose", 1, 13, 21, 23, 24, 25, registry=KERNELS)
def transpose(data, *, perm=None):
    """Output axis i is input axis perm[i]; without perm, the axes are reversed.
    https://onnx.ai/onnx/operators/onnx__Transpose.html
    """
    # ## Task 1.3
    raise NotImplementedError("Need to implement for Task 1.3")


@op("Gemm", 7, 9, 11, 13, registry=KERNELS)
def gemm(A, B, C=None, *, alpha=1.0, beta=1.0, transA=0, transB=0):
    """Y = alpha * A' @ B' + beta * C, A' = A.T when transA, B' = B.T when transB.

        A' is [M, K], B' is [K, N];  C broadcasts to [M, N] (a scalar, a row, a column...)
        C is optional (None when the node leaves it out): then Y = alpha * A' @ B'
    https://onnx.ai/onnx/operators/onnx__Gemm.html
    """
    # ## Task 1.4
    # Hint: C may be None: compare with `is None`, never rely on its truthiness.
    raise NotImplementedError("Need to implement for Task 1.4")


@op("LayerNormalization", 17, registry=KERNELS)
def layer_normalization(X, Scale, B=None, *, axis=-1, epsilon=1e-5, stash_type=1):
    """Normalize over the trailing axes axis, axis+1, ..., rank-1 of X (axis may be negative):

        x = X as float32 (stash_type=1: the statistics are computed in float32)
        mean = mean of x over those axes (keepdims);  var = mean of (x - mean)^2 likewise
        inv_std = 1 / sqrt(var + epsilon)
        Y = (x - mean) * inv_std * Scale (+ B when given), cast back to X's dtype
        return Y, mean, inv_std       # three outputs: Mean and InvStdDev stay float32

    https://onnx.ai/onnx/operators/onnx__LayerNormalization.html
    """
    # ## Task 1.5
    raise NotImplementedError("Need to implement for Task 1.5")
