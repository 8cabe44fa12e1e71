"""Identity: the output is the input (tensor, sequence or optional).
https://onnx.ai/onnx/operators/onnx__Identity.html"""

from onnxkit.ops.registry import op


@op("Identity", 1, 13, 14, 16, 19, 21, 23, 24, 25)
def identity(value):
    return value
