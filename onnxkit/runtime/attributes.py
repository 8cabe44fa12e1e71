"""Node attributes -> the keyword arguments a kernel receives.

INT -> int, FLOAT -> float, STRING -> str, TENSOR -> ndarray, GRAPH -> a compiled
``GraphPlan``, SPARSE_TENSOR -> dense ndarray, TYPE_PROTO -> TypeProto, lists alike.
Attributes are checked against the operator's schema (type, known name) and the
kernel's signature (required attributes present, no attribute it cannot take).
"""

from __future__ import annotations

from typing import Callable

from onnx import AttributeProto, NodeProto

from onnxkit.errors import AttributeMismatchError, describe_node, quoted
from onnxkit.core.registry import Kernel
from onnxkit.runtime.values import sparse_to_dense, tensor_to_array

A = AttributeProto


def _decode(s: bytes) -> str:
    return s.decode("utf-8", errors="surrogateescape")


def attribute_value(attr: AttributeProto, compile_graph: Callable, base_dir: str | None = None):
    """The Python value of one attribute; subgraphs are compiled with ``compile_graph``."""
    t = attr.type
    if t == A.FLOAT:
        return float(attr.f)
    if t == A.INT:
        return int(attr.i)
    if t == A.STRING:
        return _decode(attr.s)
    if t == A.TENSOR:
        return tensor_to_array(attr.t, base_dir)
    if t == A.GRAPH:
        return compile_graph(attr.name, attr.g)
    if t == A.SPARSE_TENSOR:
        return sparse_to_dense(attr.sparse_tensor)
    if t == A.TYPE_PROTO:
        return attr.tp
    if t == A.FLOATS:
        return [float(v) for v in attr.floats]
    if t == A.INTS:
        return [int(v) for v in attr.ints]
    if t == A.STRINGS:
        return [_decode(v) for v in attr.strings]
    if t == A.TENSORS:
        return [tensor_to_array(v, base_dir) for v in attr.tensors]
    if t == A.GRAPHS:
        return [compile_graph(f"{attr.name}[{i}]", g) for i, g in enumerate(attr.graphs)]
    if t == A.SPARSE_TENSORS:
        return [sparse_to_dense(v) for v in attr.sparse_tensors]
    if t == A.TYPE_PROTOS:
        return list(attr.type_protos)
    raise AttributeMismatchError(f"attribute {quoted(attr.name)} has no usable type (type={t})")


def resolve_references(node: NodeProto, caller_attrs: dict[str, AttributeProto] | None):
    """Inside a function body, ``ref_attr_name`` points at the caller's attribute.

    Returns the node's attributes with references replaced; a reference to an attribute
    the caller did not set is dropped, so the kernel's default applies.
    """
    out = []
    for attr in node.attribute:
        if not attr.ref_attr_name:
            out.append(attr)
            continue
        if caller_attrs is None:
            raise AttributeMismatchError(
                f"{describe_node(node)}: attribute {quoted(attr.name)} refers to "
                f"{quoted(attr.ref_attr_name)}, but the node is not inside a function"
            )
        given = caller_attrs.get(attr.ref_attr_name)
        if given is not None:
            copy = AttributeProto()
            copy.CopyFrom(given)
            copy.name = attr.name
            out.append(copy)
    return out


def kernel_attributes(node: NodeProto, attrs: list[AttributeProto], kernel: Kernel, schema,
                      compile_graph: Callable, base_dir: str | None = None) -> dict:
    """Check the attributes against schema and kernel, then convert them."""
    result = {}
    for attr in attrs:
        if schema is not None and attr.name in schema.attributes:
            expected = schema.attributes[attr.name].type
            if int(expected) != int(attr.type):
                raise AttributeMismatchError(
                    f"{describe_node(node)}: attribute {quoted(attr.name)} must be "
                    f"{A.AttributeType.Name(int(expected))}, got {A.AttributeType.Name(attr.type)}"
                )
        elif schema is not None and not kernel.accepts_any_attribute:
            known = ", ".join(sorted(schema.attributes)) or "none"
            raise AttributeMismatchError(
                f"{describe_node(node)}: unknown attribute {quoted(attr.name)} "
                f"(the operator accepts: {known})"
            )
        if attr.name not in kernel.attributes and not kernel.accepts_any_attribute:
            raise AttributeMismatchError(
                f"{describe_node(node)}: attribute {quoted(attr.name)} is not supported by "
                f"kernel {kernel.qualified_name} (it takes: "
                f"{', '.join(sorted(kernel.attributes)) or 'no attributes'})"
            )
        result[attr.name] = attribute_value(attr, compile_graph, base_dir)
    missing = kernel.required - set(result)
    if missing:
        raise AttributeMismatchError(
            f"{describe_node(node)}: required attribute(s) {', '.join(sorted(missing))} missing"
        )
    return result
