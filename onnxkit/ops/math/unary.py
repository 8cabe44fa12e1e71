"""Elementwise unary arithmetic: Abs, Neg, Sign, Reciprocal, Sqrt, Exp, Log, Erf.

Y = f(X), same shape and dtype as X (bfloat16 computed in float32).
Opset 1 versions also carry the ignored ``consumed_inputs`` attribute.
https://onnx.ai/onnx/operators/onnx__Abs.html  https://onnx.ai/onnx/operators/onnx__Neg.html
https://onnx.ai/onnx/operators/onnx__Sign.html  https://onnx.ai/onnx/operators/onnx__Reciprocal.html
https://onnx.ai/onnx/operators/onnx__Sqrt.html  https://onnx.ai/onnx/operators/onnx__Exp.html
https://onnx.ai/onnx/operators/onnx__Log.html  https://onnx.ai/onnx/operators/onnx__Erf.html
"""

import numpy as np

from onnxkit.ops.math._common import erf as _erf
from onnxkit.ops.math._common import unary_float
from onnxkit.ops.registry import op


@op("Abs", 1, 6, 13)
def abs_(X, *, consumed_inputs=None):
    return unary_float(np.abs, X)


@op("Neg", 1, 6, 13)
def neg(X, *, consumed_inputs=None):
    return unary_float(np.negative, X)


@op("Sign", 9, 13)
def sign(X):
    return unary_float(np.sign, X)


@op("Reciprocal", 1, 6, 13)
def reciprocal(X, *, consumed_inputs=None):
    return unary_float(np.reciprocal, X)


@op("Sqrt", 1, 6, 13)
def sqrt(X, *, consumed_inputs=None):
    return unary_float(np.sqrt, X)


@op("Exp", 1, 6, 13)
def exp(X, *, consumed_inputs=None):
    return unary_float(np.exp, X)


@op("Log", 1, 6, 13)
def log(X, *, consumed_inputs=None):
    return unary_float(np.log, X)


@op("Erf", 9, 13)
def erf(X):
    if np.issubdtype(X.dtype, np.integer):  # as onnx's reference: float32, then truncate
        return _erf(X.astype(np.float32)).astype(X.dtype)
    return unary_float(_erf, X)
