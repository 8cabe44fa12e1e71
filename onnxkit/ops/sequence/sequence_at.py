"""SequenceAt, SequenceInsert, SequenceErase: read, add or remove the tensor at a position.

Positions may be negative (counted from the back); Insert's default is the end,
Erase's default the last tensor. The input sequence is never changed in place.
https://onnx.ai/onnx/operators/onnx__SequenceAt.html
https://onnx.ai/onnx/operators/onnx__SequenceInsert.html
https://onnx.ai/onnx/operators/onnx__SequenceErase.html
"""

from onnxkit.ops.registry import op
from onnxkit.ops.sequence._position import position_index


@op("SequenceAt", 11, context=True)
def sequence_at(input_sequence, position, *, ctx):
    return input_sequence[position_index(position, len(input_sequence), False, ctx.node)]


@op("SequenceInsert", 11, context=True)
def sequence_insert(input_sequence, tensor, position=None, *, ctx):
    n = len(input_sequence)
    at = n if position is None else position_index(position, n, True, ctx.node)
    return input_sequence[:at] + [tensor] + input_sequence[at:]


@op("SequenceErase", 11, context=True)
def sequence_erase(input_sequence, position=None, *, ctx):
    n = len(input_sequence)
    at = n - 1 if position is None else position_index(position, n, False, ctx.node)
    return input_sequence[:at] + input_sequence[at + 1:]
