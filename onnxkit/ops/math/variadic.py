"""Sum, Mean, Max, Min over any number of inputs, with numpy broadcasting.

    result = data_0; for x in data_1..: result = op(result, x)   (Mean: Sum / n)

NaN propagates through Max and Min. Opset 1 carries the ignored ``consumed_inputs``.
https://onnx.ai/onnx/operators/onnx__Sum.html  https://onnx.ai/onnx/operators/onnx__Mean.html
https://onnx.ai/onnx/operators/onnx__Max.html  https://onnx.ai/onnx/operators/onnx__Min.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.math._common import as_dtype, check_broadcast, working
from onnxkit.ops.registry import op


def _fold(fn, inputs):
    if not inputs:
        raise KernelInputError("needs at least one input")
    check_broadcast(*inputs)
    result = working(inputs[0])
    for x in inputs[1:]:
        result = fn(result, working(x))
    return result


@op("Sum", 1, 6, 8, 13)
def sum_(*data, consumed_inputs=None):
    return as_dtype(_fold(np.add, data), data[0].dtype)


@op("Mean", 1, 6, 8, 13)
def mean(*data, consumed_inputs=None):
    total = _fold(np.add, data)
    return as_dtype(total / len(data), data[0].dtype)


@op("Max", 1, 6, 8, 12, 13)
def max_(*data, consumed_inputs=None):
    return as_dtype(_fold(np.maximum, data), data[0].dtype)


@op("Min", 1, 6, 8, 12, 13)
def min_(*data, consumed_inputs=None):
    return as_dtype(_fold(np.minimum, data), data[0].dtype)
