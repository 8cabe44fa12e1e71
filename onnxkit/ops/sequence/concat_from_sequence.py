"""ConcatFromSequence: join a sequence's tensors along ``axis``.

With new_axis = 1 the tensors are stacked along a new axis (``axis`` may then be in
``[-r-1, r]``); otherwise they are concatenated along an existing one.
https://onnx.ai/onnx/operators/onnx__ConcatFromSequence.html
"""

import numpy as np

from onnxkit.errors import InputError, describe_node
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


@op("ConcatFromSequence", 11, context=True)
def concat_from_sequence(input_sequence, *, axis, new_axis=0, ctx):
    if not input_sequence:
        raise InputError(f"{describe_node(ctx.node)}: cannot concatenate an empty sequence")
    check_allocation((sum(t.size for t in input_sequence),), input_sequence[0].dtype,
                     "ConcatFromSequence output (flattened)")
    if new_axis:
        return np.stack(input_sequence, axis=axis)
    return np.concatenate(input_sequence, axis=axis)
