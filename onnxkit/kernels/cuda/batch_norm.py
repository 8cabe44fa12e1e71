"""BatchNormalization (inference) on the GPU: one thread per element.

    c = channel of element i = (i // spatial_size) % C
    Y[i] = act((X[i] - mean[c]) * scale[c] / sqrt(var[c] + epsilon) + B[c])

``act`` is the activation of onnxkit::FusedBatchNormalization (the identity for
BatchNormalization), the formulas of ``_scalar`` that the fused Conv / Gemm kernels use.

Training mode (batch statistics, running averages) runs on the host.
https://onnx.ai/onnx/operators/onnx__BatchNormalization.html
"""

import math
from functools import lru_cache

import numpy as np
from numba import cuda

from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import (FLOAT_DTYPES, HostFallback, device, empty, launch_1d,
                                          need_dtype)
from onnxkit.kernels.cuda._scalar import activation as activation_formula, identity
from onnxkit.kernels.indexing import for_cuda
from onnxkit.ops.nn._windows import compute_dtype
from onnxkit.ops.registry import op


@lru_cache(maxsize=None)
def batch_norm_kernel(work, formula=identity):
    cast = np.dtype(work).type
    act = for_cuda(formula)

    @cuda.jit
    def kernel(x, scale, bias, mean, var, channels, inner, epsilon, p0, p1, out):
        i = cuda.grid(1)
        if i < out.size:
            c = (i // inner) % channels
            inv = cast(scale[c]) / cast(math.sqrt(cast(var[c]) + cast(epsilon)))
            out[i] = act((cast(x[i]) - cast(mean[c])) * inv + cast(bias[c]), cast(p0), cast(p1))

    return kernel


def batch_norm(X, scale, B, mean, var, epsilon, formula=identity, p0=0.0, p1=0.0):
    X = device(X, "X")
    need_dtype(X, FLOAT_DTYPES, "X")
    params = [device(p, what) for p, what in
              ((scale, "scale"), (B, "B"), (mean, "mean"), (var, "var"))]
    channels = X.shape[1] if X.ndim > 1 else 1
    for p, what in zip(params, ("scale", "B", "mean", "var")):
        if p.size != channels or p.dtype not in FLOAT_DTYPES:
            raise HostFallback(f"{what} is {p.dtype}{list(p.shape)} for {channels} channels")
    out = empty(X.shape, X.dtype)
    inner = int(np.prod(X.shape[2:], dtype=np.int64))
    launch_1d(batch_norm_kernel(compute_dtype(X.dtype), formula), out.size, X.flat,
              *(p.flat for p in params), channels, inner, float(epsilon), float(p0), float(p1),
              out.flat)
    return out


@op("BatchNormalization", 1, 6, 7, 9, context=True, registry=CUDA)
def batch_normalization_legacy(X, scale, B, mean, var, *, consumed_inputs=None, epsilon=1e-5,
                               is_test=0, momentum=0.9, spatial=1, ctx):
    """Versions 1-9 (``consumed_inputs`` of version 1 and ``is_test`` of 1 and 6 only say
    how training outputs alias the inputs): inference on the device, like the cpu kernel."""
    if ctx.n_outputs > 1 or not spatial:
        raise HostFallback("training outputs or spatial=0 run on the host")
    return batch_norm(X, scale, B, mean, var, epsilon)


@op("BatchNormalization", 14, 15, registry=CUDA)
def batch_normalization(X, scale, B, input_mean, input_var, *, epsilon=1e-5, momentum=0.9,
                        training_mode=0):
    if training_mode:
        raise HostFallback("training_mode=1 runs on the host")
    return batch_norm(X, scale, B, input_mean, input_var, epsilon)


@op("FusedBatchNormalization", 1, domain="onnxkit", registry=CUDA)
def fused_batch_normalization(X, scale, B, mean, var, *, epsilon=1e-5, activation="",
                              activation_params=None):
    formula, p0, p1 = activation_formula(activation, activation_params)
    return batch_norm(X, scale, B, mean, var, epsilon, formula, p0, p1)
