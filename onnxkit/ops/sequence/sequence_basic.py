"""SequenceEmpty, SequenceConstruct, SequenceLength: make a sequence, count its tensors.

https://onnx.ai/onnx/operators/onnx__SequenceEmpty.html
https://onnx.ai/onnx/operators/onnx__SequenceConstruct.html
https://onnx.ai/onnx/operators/onnx__SequenceLength.html
"""

import numpy as np

from onnxkit.ops.registry import op


@op("SequenceEmpty", 11)
def sequence_empty(*, dtype=1):
    """An empty sequence (``dtype`` only types it; a list has no element type)."""
    return []


@op("SequenceConstruct", 11)
def sequence_construct(*inputs):
    return list(inputs)


@op("SequenceLength", 11)
def sequence_length(input_sequence):
    return np.array(len(input_sequence), dtype=np.int64)
