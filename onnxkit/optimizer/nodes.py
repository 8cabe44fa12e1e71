"""Helpers on single nodes: attributes, subgraph reads, renaming, Constant values."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import GraphProto, NodeProto, TensorProto, helper, numpy_helper

from onnxkit.errors import quoted


def copy_node(node: NodeProto) -> NodeProto:
    out = NodeProto()
    out.CopyFrom(node)
    return out


def subgraphs(node: NodeProto) -> list[GraphProto]:
    out = []
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            out.append(a.g)
        elif a.type == onnx.AttributeProto.GRAPHS:
            out.extend(a.graphs)
    return out


def _graph_outer_reads(g: GraphProto) -> set[str]:
    """Names a subgraph reads that it does not define itself."""
    defined = {i.name for i in g.input} | {t.name for t in g.initializer}
    reads: set[str] = set()
    for node in g.node:
        reads.update(node_reads(node))
        defined.update(node.output)
    reads.update(o.name for o in g.output)
    return reads - defined


_GRAPH_TYPES = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


def node_reads(node: NodeProto) -> list[str]:
    """The values a node reads: its inputs and what its subgraphs read from outside."""
    names = [i for i in node.input if i]
    if not any(a.type in _GRAPH_TYPES for a in node.attribute):
        return names
    for g in subgraphs(node):
        names.extend(sorted(_graph_outer_reads(g) - set(names)))
    return names


def rename_reads(node: NodeProto, renames: dict[str, str]) -> None:
    if not renames:
        return
    for i, name in enumerate(node.input):
        if name in renames:
            node.input[i] = renames[name]
    for g in subgraphs(node):
        local = {i.name for i in g.input} | {t.name for t in g.initializer} | {
            o for n in g.node for o in n.output}
        inner = {k: v for k, v in renames.items() if k not in local}
        for n in g.node:
            rename_reads(n, inner)
        for o in g.output:
            if o.name in inner:
                o.name = inner[o.name]


def constant_node_value(node: NodeProto) -> np.ndarray:
    """The value of a ``Constant`` node, whichever attribute holds it."""
    a = node.attribute[0]
    if a.name == "value":
        from onnxkit.runtime.values import tensor_to_array

        return tensor_to_array(a.t)
    if a.name == "sparse_value":
        from onnxkit.runtime.values import sparse_to_dense

        return sparse_to_dense(a.sparse_tensor)
    if a.name == "value_float":
        return np.array(a.f, dtype=np.float32)
    if a.name == "value_floats":
        return np.array(list(a.floats), dtype=np.float32)
    if a.name == "value_int":
        return np.array(a.i, dtype=np.int64)
    if a.name == "value_ints":
        return np.array(list(a.ints), dtype=np.int64)
    if a.name == "value_string":
        return np.array(a.s.decode(), dtype=object)
    if a.name == "value_strings":
        return np.array([s.decode() for s in a.strings], dtype=object)
    raise ValueError(f"Constant node {quoted(node.name)} has no value attribute")


def attr(node: NodeProto, name: str, default=None):
    """A node attribute's Python value (ints, floats, strings, lists, arrays), or default."""
    for a in node.attribute:
        if a.name == name:
            value = helper.get_attribute_value(a)
            if isinstance(value, bytes):
                return value.decode()
            if isinstance(value, TensorProto):
                return numpy_helper.to_array(value)
            if isinstance(value, list) and value and isinstance(value[0], bytes):
                return [v.decode() for v in value]
            return value
    return default


def schema_default(node: NodeProto, name: str, opset: int):
    """The schema's default for an attribute the node does not set (None if none)."""
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, node.domain)
    except onnx.defs.SchemaError:
        return None
    a = schema.attributes.get(name)
    if a is None or a.default_value is None or not a.default_value.name:
        return None
    value = helper.get_attribute_value(a.default_value)
    return value.decode() if isinstance(value, bytes) else value


def make_node(op_type: str, inputs, outputs, name: str, domain: str = "", **attrs) -> NodeProto:
    attrs = {k: v for k, v in attrs.items() if v is not None}
    return helper.make_node(op_type, list(inputs), list(outputs), name=name, domain=domain, **attrs)
