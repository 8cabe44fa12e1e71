"""Small models for the widget tests, in ONNX text syntax, and an SVG reader."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import onnx
from onnx import numpy_helper

SVG_NS = "{http://www.w3.org/2000/svg}"

CHAIN = """
<ir_version: 8, opset_import: ["" : 18]>
chain (float[2, 3] x, float[3] b) => (float[2, 3] y, float[2, 3] z) {
  r = Relu(x)
  s = Add(r, b)
  y = Mul(s, s)
  z = Identity(r)
}
"""

# 3 nodes; edges: x->r, r->s, b->s, s->y (Mul reads s twice: one edge), r->z, y->out, z->out
CHAIN_NODES, CHAIN_EDGES = 4, 7

WITH_IF = """
<ir_version: 8, opset_import: ["" : 18]>
branchy (bool c, float[2] x) => (float[2] y) {
  t = Relu(x)
  y = If(c) <
    then_branch = then_g () => (float[2] a) { a = Neg(t) },
    else_branch = else_g () => (float[2] b) { u = Abs(t)  b = Sigmoid(u) }
  >
}
"""


def model(text: str, **initializers) -> onnx.ModelProto:
    m = onnx.parser.parse_model(text)
    for name, value in initializers.items():
        m.graph.initializer.append(numpy_helper.from_array(np.asarray(value), name))
    return m


def hostile_model() -> onnx.ModelProto:
    """Names, op type, doc string and attribute values that would run script if unescaped."""
    evil = "<script>alert(1)</script>"
    x = onnx.helper.make_tensor_value_info(evil + "_in", onnx.TensorProto.FLOAT, [2])
    y = onnx.helper.make_tensor_value_info('"><img src=x onerror=alert(2)>', onnx.TensorProto.FLOAT, [2])
    node = onnx.helper.make_node("Relu", [x.name], [y.name], name=evil, doc_string=evil)
    node2 = onnx.helper.make_node("Identity", [y.name], ["z"], name="ok")
    node2.attribute.append(onnx.helper.make_attribute("note", evil))
    z = onnx.helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [2])
    graph = onnx.helper.make_graph([node, node2], evil, [x], [y, z])
    return onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 18)])


def parse_svg(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def classes(el: ET.Element) -> set[str]:
    return set(el.get("class", "").split())


def find_class(root: ET.Element, tag: str, cls: str, depth: int | None = None) -> list[ET.Element]:
    out = []
    for el in root.iter(SVG_NS + tag):
        if cls in classes(el) and (depth is None or el.get("data-depth", "0") == str(depth)):
            out.append(el)
    return out


def edges_at_depth0(root: ET.Element) -> list[ET.Element]:
    """``path.onnxkit-edge`` of the main graph (not those inside an expanded subgraph)."""
    out = []

    def walk(el: ET.Element, nested: bool) -> None:
        for child in el:
            inner = nested or "onnxkit-subgraph" in classes(child)
            if child.tag == SVG_NS + "path" and "onnxkit-edge" in classes(child) and not inner:
                out.append(child)
            walk(child, inner)

    walk(root, False)
    return out
