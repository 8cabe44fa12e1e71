"""onnx's shape inference, guarded against inputs known to hang it.

onnx 1.23's inference never returns on an Einsum whose equation holds characters outside
the Einsum grammar (found by fuzzing). ``infer_shapes`` refuses such models instead.
"""

from __future__ import annotations

import re

import onnx
from onnx import ModelProto

_EINSUM = re.compile(r"[A-Za-z.,\->\s]*")


class InferenceSkipped(Exception):
    """Shape inference was not attempted (the reason is the message)."""


def infer_shapes(model: ModelProto, **options) -> ModelProto:
    """``onnx.shape_inference.infer_shapes`` unless the model could hang it."""
    bad = _unsafe_einsum(model)
    if bad is not None:
        raise InferenceSkipped(f"Einsum equation {bad!r} is outside the Einsum grammar")
    return onnx.shape_inference.infer_shapes(model, **options)


def _unsafe_einsum(model: ModelProto) -> str | None:
    graphs = [model.graph]
    nodes = [n for f in model.functions for n in f.node]
    while graphs or nodes:
        if graphs:
            nodes.extend(graphs.pop().node)
            continue
        node = nodes.pop()
        for attr in node.attribute:
            if node.op_type == "Einsum" and attr.name == "equation":
                text = attr.s.decode("utf-8", errors="replace")
                if not _EINSUM.fullmatch(text):
                    return text
            if attr.HasField("g"):
                graphs.append(attr.g)
            graphs.extend(attr.graphs)
    return None
