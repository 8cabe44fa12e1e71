"""Optional, OptionalHasElement, OptionalGetElement: wrap, test and unwrap optionals.

An optional holding a value is the value itself; an empty one is ``None``.
Optional(input) wraps input (empty when absent; ``type`` types it). From opset 18,
HasElement and GetElement also accept plain tensors and sequences, and HasElement
may be given no input at all (then it is false).
https://onnx.ai/onnx/operators/onnx__Optional.html
https://onnx.ai/onnx/operators/onnx__OptionalHasElement.html
https://onnx.ai/onnx/operators/onnx__OptionalGetElement.html
"""

import numpy as np

from onnxkit.errors import InputError, describe_node
from onnxkit.ops.registry import op


@op("Optional", 15, 28)
def optional(value=None, **attrs):
    """``attrs`` may hold ``type`` (a TypeProto), which only types an empty optional."""
    return value


@op("OptionalHasElement", 15, 18, 28)
def optional_has_element(value=None):
    return np.array(value is not None)


@op("OptionalGetElement", 15, 18, 28, context=True)
def optional_get_element(value, *, ctx):
    if value is None:
        raise InputError(f"{describe_node(ctx.node)}: the optional input is empty")
    return value
