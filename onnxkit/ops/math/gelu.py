"""Gelu: y = 0.5 * x * (1 + erf(x / sqrt(2)))   (approximate="none")
      or y = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))   ("tanh").

https://onnx.ai/onnx/operators/onnx__Gelu.html
"""

import math

import numpy as np

from onnxkit.errors import AttributeValueError
from onnxkit.ops.math._common import as_dtype, erf, precise
from onnxkit.ops.registry import op


@op("Gelu", 20)
def gelu(X, *, approximate="none"):
    x = precise(X)
    if approximate == "none":
        inner = erf(x / np.sqrt(x.dtype.type(2)))
    elif approximate == "tanh":
        inner = np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))
    else:
        raise AttributeValueError("Gelu: attribute approximate must be 'none' or 'tanh', got "
                                  f"{approximate!r}")
    return as_dtype(0.5 * x * (1 + inner), X.dtype)
