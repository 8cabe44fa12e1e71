"""The panel shown when a node is clicked: attributes, inputs and outputs, what a run saw.

All text comes from the model or from a run, so all of it is escaped here.
"""

from __future__ import annotations

import onnx
from onnx import AttributeProto

from onnxkit.widgets import _escape as esc
from onnxkit.widgets.graphdata import Box, tensor_type_text
from onnxkit.widgets.recorder import TraceRecorder

MAX_VALUE = 160


def attribute_value(attr: AttributeProto) -> tuple[str, str]:
    """(type name, short text of the value) for one attribute."""
    kind = AttributeProto.AttributeType.Name(attr.type)
    if attr.ref_attr_name:
        return kind, f"(refers to the function attribute {attr.ref_attr_name!r})"
    if attr.type == AttributeProto.TENSOR:
        return kind, tensor_text(attr.t)
    if attr.type == AttributeProto.SPARSE_TENSOR:
        return kind, "sparse " + tensor_type_text(attr.sparse_tensor.values)
    if attr.type == AttributeProto.GRAPH:
        return kind, f"graph {attr.g.name!r}: {len(attr.g.node)} nodes"
    if attr.type == AttributeProto.GRAPHS:
        return kind, f"{len(attr.graphs)} graphs"
    if attr.type == AttributeProto.TENSORS:
        return kind, "[" + ", ".join(tensor_type_text(t) for t in attr.tensors[:8]) + "]"
    if attr.type == AttributeProto.TYPE_PROTO:
        return kind, str(attr.tp).replace("\n", " ")
    try:
        value = onnx.helper.get_attribute_value(attr)
    except Exception:  # a malformed attribute is still shown
        return kind, "(unreadable)"
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    elif isinstance(value, list):
        value = [v.decode("utf-8", errors="replace") if isinstance(v, bytes) else v for v in value]
    return kind, esc.shorten(repr(value), MAX_VALUE)


def tensor_text(t: onnx.TensorProto) -> str:
    head = tensor_type_text(t)
    try:
        arr = onnx.numpy_helper.to_array(t)
    except Exception:  # external or malformed data: the type says enough
        return head
    flat = arr.reshape(-1)[:6]
    values = ", ".join(str(v) for v in flat.tolist())
    more = ", ..." if arr.size > 6 else ""
    return esc.shorten(f"{head} = [{values}{more}]", MAX_VALUE)


def op_version(box: Box, opsets: dict[str, int]) -> str:
    """``Conv-11 (opset 13)``: the operator version the model's opset selects."""
    node = box.node
    domain = "" if node.domain in ("", "ai.onnx") else node.domain
    opset = opsets.get(domain)
    if opset is None:
        return f"domain {domain or 'ai.onnx'!r} not imported"
    try:
        since = onnx.defs.get_schema(node.op_type, opset, domain).since_version
    except Exception:  # no onnx schema: custom domain or unknown op
        return f"opset {opset}"
    return f"{node.op_type}-{since} (opset {opset})"


def node_details(box: Box, opsets: dict[str, int], types: dict[str, str],
                 trace: TraceRecorder | None = None) -> str:
    node = box.node
    rows = [f'<div class="onnxkit-details" data-id="{esc.attr(box.id)}">',
            f"<h4>{esc.text(box.label)}"
            + (f" <code>{esc.text(node.name)}</code>" if node.name else "") + "</h4>",
            f"<p>{esc.text(op_version(box, opsets))}</p>"]
    if node.doc_string:
        rows.append(f'<p class="onnxkit-doc">{esc.text(esc.shorten(node.doc_string, 400))}</p>')
    if node.attribute:
        rows.append('<table class="onnxkit-attrs"><tr><th>attribute</th><th>type</th><th>value</th></tr>')
        for attr in node.attribute:
            kind, value = attribute_value(attr)
            rows.append(f"<tr><td>{esc.text(attr.name)}</td><td>{esc.text(kind)}</td>"
                        f"<td><code>{esc.text(value)}</code></td></tr>")
        rows.append("</table>")
    record = trace.last(box.trace_key) if trace is not None and box.trace_key else None
    rows.append('<table class="onnxkit-io"><tr><th></th><th>value</th><th>type</th>'
                + ("<th>last run</th>" if record else "") + "</tr>")
    for label, names, summaries in (("in", node.input, record.input_summaries if record else ()),
                                    ("out", node.output, record.output_summaries if record else ())):
        for k, name in enumerate(names):
            seen = f"<td>{esc.text(summaries[k])}</td>" if k < len(summaries) else (
                "<td></td>" if record else "")
            rows.append(f"<tr><td>{label}</td><td><code>{esc.text(name or '<absent>')}</code></td>"
                        f"<td>{esc.text(types.get(name, ''))}</td>{seen}</tr>")
    rows.append("</table>")
    for attr, sub in box.subgraphs:
        rows.append(f"<p>subgraph <code>{esc.text(attr)}</code>: {len(sub.nodes)} nodes</p>")
    if trace is not None:
        calls = trace.calls(box.trace_key)
        if record is None:
            rows.append("<p>not run in the attached trace</p>")
        else:
            rows.append(f'<p class="onnxkit-run">kernel <code>{esc.text(record.kernel)}</code>, '
                        f"ran {calls} time{'s' if calls != 1 else ''}, "
                        f"{trace.seconds(box.trace_key) * 1e3:.3f} ms in all</p>")
    rows.append("</div>")
    return "".join(rows)


def value_details(box: Box) -> str:
    return (f'<div class="onnxkit-details" data-id="{esc.attr(box.id)}"><h4>{esc.text(box.kind)} '
            f"<code>{esc.text(box.label)}</code></h4><p>{esc.text(box.sublabel or 'type unknown')}</p></div>")

