"""Exercise 6: build models with onnx.helper, and move one across opset versions.

notebook 1 writes models in text syntax; here you build one with ``onnx.helper``
(https://onnx.ai/onnx/api/helper.html): ``make_node``, ``make_tensor_value_info``,
``make_graph`` (nodes, name, inputs, outputs, initializers), ``make_model`` with
``opset_imports=[make_opsetid("", 18)]``, and ``onnx.numpy_helper.from_array`` for the
weights. Then you convert an older model with onnx's version converter and find what the
new opset moved (notebook 6: ReduceMean's axes became an input at opset 18).

Check your work:   python -m exercises.check 6.1
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.helper  # noqa: F401  (for your model)
import onnx.numpy_helper  # noqa: F401
import onnx.version_converter  # noqa: F401


def mlp_model(w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, b2: np.ndarray) -> onnx.ModelProto:
    """A model ``y = Relu(x @ w1 + b1) @ w2 + b2`` importing opset 18:

        input  x: float[N, K]   (N a symbolic batch dimension named "N", K = w1.shape[0])
        output y: float[N, M]   (M = w2.shape[1])
        w1, b1, w2, b2 stored as initializers (not graph inputs); two Gemm and a Relu
        ir_version=8, the IR that came with opset 18 (make_model's default, the newest
        IR, is newer than onnxruntime reads)

    It must pass ``onnx.checker.check_model(model, full_check=True)`` (which runs shape
    inference too) and run on onnxruntime at any batch size.
    """
    # ## Task 6.1
    raise NotImplementedError("Need to implement for Task 6.1")


def to_opset_18(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` (default domain, an older opset) converted to opset 18."""
    # ## Task 6.2
    # Hint: onnx.version_converter does the work; read what it did with onnx.printer.to_text.
    raise NotImplementedError("Need to implement for Task 6.2")


def attributes_now_inputs(before: onnx.ModelProto, after: onnx.ModelProto) -> dict[str, list[str]]:
    """What the conversion moved: ``{op_type: [attribute names]}`` for each node of
    ``before`` whose node in ``after`` (the one with the same first output) lost those
    attributes and gained inputs, e.g. ``{"ReduceMean": ["axes"]}``. Nodes that did not
    change are left out."""
    # ## Task 6.2
    raise NotImplementedError("Need to implement for Task 6.2")
