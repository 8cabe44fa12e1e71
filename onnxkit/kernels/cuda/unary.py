"""Unary elementwise operators on the GPU: one thread per element, y[i] = f(x[i]).

The formulas are in ``_scalar``, the kernel template in ``_elementwise.map_kernel``.
Float formulas take float32 and float64 (float16 and the ml_dtypes floats stay on the
host); Relu, Abs, Neg and Clip take integers too.
https://onnx.ai/onnx/operators/onnx__Relu.html (and each operator's page)
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda import _scalar as s
from onnxkit.kernels.cuda._device import DEVICE_DTYPES, FLOAT_DTYPES, device, host, need_dtype
from onnxkit.kernels.cuda._elementwise import unary
from onnxkit.ops.registry import op

SIGNED = frozenset(d for d in DEVICE_DTYPES if d.kind in "if")
NUMERIC = frozenset(d for d in DEVICE_DTYPES if d.kind in "iuf")
_FLT_MAX = float(np.finfo(np.float32).max)


def _float(X, formula, p0=0.0, p1=0.0):
    X = device(X)
    need_dtype(X, FLOAT_DTYPES, "X")
    return unary(X, formula, p0, p1)


@op("Relu", 6, 13, 14, registry=CUDA)
def relu(X):
    X = device(X)
    need_dtype(X, SIGNED, "X")
    return unary(X, s.relu)


@op("LeakyRelu", 6, 16, registry=CUDA)
def leaky_relu(X, *, alpha=0.01):
    return _float(X, s.leaky_relu, alpha)


@op("Elu", 6, 22, registry=CUDA)
def elu(X, *, alpha=1.0):
    return _float(X, s.elu, alpha)


@op("HardSigmoid", 6, 22, registry=CUDA)
def hard_sigmoid(X, *, alpha=0.2, beta=0.5):
    return _float(X, s.hard_sigmoid, alpha, beta)


@op("HardSwish", 14, 22, registry=CUDA)
def hard_swish(X):
    return _float(X, s.hard_swish)


@op("Sigmoid", 6, 13, registry=CUDA)
def sigmoid(X):
    return _float(X, s.sigmoid)


@op("Tanh", 6, 13, registry=CUDA)
def tanh(X):
    return _float(X, s.tanh)


@op("Softplus", 1, 22, registry=CUDA)
def softplus(X):
    return _float(X, s.softplus)


@op("Gelu", 20, registry=CUDA)
def gelu(X, *, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise KernelInputError(f"Gelu: attribute approximate must be 'none' or 'tanh', got {approximate!r}")
    return _float(X, s.gelu if approximate == "none" else s.gelu_tanh)


@op("Gelu", 1, domain="onnxkit", registry=CUDA)
def onnxkit_gelu(X, *, approximate="none"):
    return gelu(X, approximate=approximate)


@op("Exp", 6, 13, registry=CUDA)
def exp(X):
    return _float(X, s.exp)


@op("Log", 6, 13, registry=CUDA)
def log(X):
    return _float(X, s.log)


@op("Sqrt", 6, 13, registry=CUDA)
def sqrt(X):
    return _float(X, s.sqrt)


@op("Reciprocal", 6, 13, registry=CUDA)
def reciprocal(X):
    return _float(X, s.reciprocal)


@op("Erf", 9, 13, registry=CUDA)
def erf(X):
    return _float(X, s.erf)


@op("Floor", 6, 13, registry=CUDA)
def floor(X):
    return _float(X, s.floor)


@op("Ceil", 6, 13, registry=CUDA)
def ceil(X):
    return _float(X, s.ceil)


@op("Sin", 7, 22, registry=CUDA)
def sin(X):
    return _float(X, s.sin)


@op("Cos", 7, 22, registry=CUDA)
def cos(X):
    return _float(X, s.cos)


@op("Neg", 6, 13, registry=CUDA)
def neg(X):
    X = device(X)
    need_dtype(X, SIGNED, "X")
    return unary(X, s.neg)


@op("Abs", 6, 13, registry=CUDA)
def abs_(X):
    X = device(X)
    need_dtype(X, NUMERIC, "X")
    return unary(X, s.abs_)


@op("Selu", 1, 6, 22, registry=CUDA)
def selu(X, *, alpha=1.67326319217681884765625, gamma=1.05070102214813232421875,
         consumed_inputs=None):
    return _float(X, s.selu, alpha, gamma)


@op("Sign", 9, 13, registry=CUDA)
def sign(X):
    X = device(X)
    need_dtype(X, NUMERIC, "X")
    return unary(X, s.sign)


@op("Shrink", 9, registry=CUDA)
def shrink(input_, *, bias=0.0, lambd=0.5):
    return _float(input_, s.shrink, lambd, bias)


@op("Clip", 11, 12, 13, registry=CUDA)
def clip(input_, min_=None, max_=None):
    """Bounds are scalars: read on the host (a counted copy if a node made them on the GPU)."""
    X = device(input_)
    need_dtype(X, NUMERIC, "input")
    low = -np.inf if min_ is None else _bound(host(min_, "min"), X.dtype)
    high = np.inf if max_ is None else _bound(host(max_, "max"), X.dtype)
    return unary(X, s.clip, low, high)


@op("Clip", 6, registry=CUDA)
def clip_attributes(input_, *, min=-_FLT_MAX, max=_FLT_MAX):  # noqa: A002 (spec names)
    X = device(input_)
    need_dtype(X, FLOAT_DTYPES, "input")
    return unary(X, s.clip, float(min), float(max))


def _bound(value, dtype) -> float:
    """A bound as the float the kernel compares with, after rounding it to X's dtype."""
    bound = np.asarray(value).astype(dtype).reshape(())
    if dtype.kind in "iu" and abs(int(bound)) >= 2**53:
        from onnxkit.kernels.cuda._device import HostFallback

        raise HostFallback("an integer bound beyond 2**53 is not exact as a float parameter")
    return float(bound)
