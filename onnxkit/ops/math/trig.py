"""Trigonometric and hyperbolic functions, elementwise: Y = f(X) in X's dtype.

Sin, Cos, Tan, Asin, Acos, Atan (opset 7, 22); Sinh, Cosh, Asinh, Acosh, Atanh (9, 22);
Tanh (1, 6, 13; opset 1 carries the ignored ``consumed_inputs``).
https://onnx.ai/onnx/operators/onnx__Sin.html (and onnx__Cos.html, onnx__Tanh.html, ...)
"""

import numpy as np

from onnxkit.ops.math._common import unary_float
from onnxkit.ops.registry import op


@op("Sin", 7, 22)
def sin(X):
    return unary_float(np.sin, X)


@op("Cos", 7, 22)
def cos(X):
    return unary_float(np.cos, X)


@op("Tan", 7, 22)
def tan(X):
    return unary_float(np.tan, X)


@op("Asin", 7, 22)
def asin(X):
    return unary_float(np.arcsin, X)


@op("Acos", 7, 22)
def acos(X):
    return unary_float(np.arccos, X)


@op("Atan", 7, 22)
def atan(X):
    return unary_float(np.arctan, X)


@op("Sinh", 9, 22)
def sinh(X):
    return unary_float(np.sinh, X)


@op("Cosh", 9, 22)
def cosh(X):
    return unary_float(np.cosh, X)


@op("Asinh", 9, 22)
def asinh(X):
    return unary_float(np.arcsinh, X)


@op("Acosh", 9, 22)
def acosh(X):
    return unary_float(np.arccosh, X)


@op("Atanh", 9, 22)
def atanh(X):
    return unary_float(np.arctanh, X)


@op("Tanh", 1, 6, 13)
def tanh(X, *, consumed_inputs=None):
    return unary_float(np.tanh, X)
