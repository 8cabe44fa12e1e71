"""A model's graph as boxes and edges, ready to lay out and draw.

    ModelProto --graph_data--> GraphData
        boxes: one per node; one per graph input, graph output, outer-scope value read by a
               subgraph; one per initializer only when initializers are not drawn inline
        edges: one per (value, reader): producer box -> consumer box, with the value's type
               when shape inference knows it; a node that owns a subgraph also gets a dashed
               ``implicit`` edge for each outer value its subgraph reads

Nothing here draws or escapes: ``svg.py`` does, from these plain records.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import onnx
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TypeProto

from onnxkit.shape_inference import infer_shapes


@dataclass(slots=True)  # thousands per big graph: no per-object dict
class Box:
    """Something drawn as a rectangle: a node, or a value at the border of a graph."""

    id: str
    kind: str  # node | input | output | initializer | outer | missing | block
    label: str  # op type (with domain) for nodes, value name otherwise
    sublabel: str = ""  # node name when it says more than the op type; value type otherwise
    params: list[tuple[str, str]] = field(default_factory=list)  # inline initializers (name, type)
    node: NodeProto | None = None
    subgraphs: list[tuple[str, "GraphData"]] = field(default_factory=list)
    trace_key: tuple | None = None  # (trace path, node outputs): matches TraceEvent
    members: int = 0  # a folded block (kind "block"): how many nodes it hides
    inputs: tuple[str, ...] = ()  # a node's input and output names, read once from the proto
    outputs: tuple[str, ...] = ()


@dataclass(slots=True)
class Edge:
    source: str
    target: str
    value: str
    type: str = ""
    implicit: bool = False  # an outer value read inside the target's subgraph
    port: int = 0  # which output of the source carries the value
    faint: bool = False  # between folded blocks, carrying only shape values: drawn light


@dataclass
class GraphData:
    name: str
    id_prefix: str
    trace_path: str
    boxes: list[Box]
    edges: list[Edge]
    types: dict[str, str]

    @property
    def nodes(self) -> list[Box]:
        return [b for b in self.boxes if b.kind == "node"]

    def box(self, box_id: str) -> Box:
        for b in self.boxes:
            if b.id == box_id:
                return b
        raise KeyError(box_id)

    def walk(self):
        """Every node box of this graph and of its subgraphs, depth first."""
        for b in self.boxes:
            if b.kind == "node":
                yield b
                for _, sub in b.subgraphs:
                    yield from sub.walk()


def type_text(tp: TypeProto) -> str:
    """``float[1,3,224,224]``, ``int64[N]``, ``seq(float[?])``; ``""`` when unknown."""
    kind = tp.WhichOneof("value")
    if kind == "tensor_type" or kind == "sparse_tensor_type":
        tt = getattr(tp, kind)
        elem = _elem(tt.elem_type)
        if not tt.HasField("shape"):
            return elem
        dims = []
        for d in tt.shape.dim:
            if d.HasField("dim_value"):
                dims.append(str(d.dim_value))
            elif d.HasField("dim_param"):
                dims.append(d.dim_param)
            else:
                dims.append("?")
        prefix = "sparse " if kind == "sparse_tensor_type" else ""
        return f"{prefix}{elem}[{','.join(dims)}]"
    if kind == "sequence_type":
        return f"seq({type_text(tp.sequence_type.elem_type) or '?'})"
    if kind == "optional_type":
        return f"optional({type_text(tp.optional_type.elem_type) or '?'})"
    if kind == "map_type":
        return f"map({_elem(tp.map_type.key_type)},{type_text(tp.map_type.value_type) or '?'})"
    return ""


def _elem(elem_type: int) -> str:
    if elem_type == 0:
        return "?"
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"type{elem_type}"


def tensor_type_text(t: onnx.TensorProto) -> str:
    return f"{_elem(t.data_type)}[{','.join(str(d) for d in t.dims)}]"


def infer_types(model: ModelProto) -> ModelProto:
    """The model with shape inference applied, or the model itself when inference fails.

    Inference sees the weights' names, types and shapes but not their bytes: copying and
    serializing a model's weights costs more than inferring a 6,000-node graph.
    """
    try:
        return infer_shapes(_without_weight_bytes(model), check_type=False, strict_mode=False)
    except Exception:  # an invalid model is still worth drawing
        return model


def _without_weight_bytes(model: ModelProto, keep_below: int = 4096) -> ModelProto:
    """A model for inference only: initializers over ``keep_below`` bytes (at 8 per element)
    keep no data; integer ones always keep theirs (inference may read shapes and indices)."""
    src = model.graph
    light = ModelProto(ir_version=model.ir_version)
    light.opset_import.extend(model.opset_import)
    light.functions.extend(model.functions)
    g = light.graph
    g.name = src.name
    g.node.extend(src.node)
    g.input.extend(src.input)
    g.output.extend(src.output)
    g.value_info.extend(src.value_info)
    g.sparse_initializer.extend(src.sparse_initializer)
    integer = (onnx.TensorProto.INT64, onnx.TensorProto.INT32)
    for t in src.initializer:
        if t.data_type in integer or math.prod(t.dims) * 8 <= keep_below:
            g.initializer.append(t)
        else:
            g.initializer.add(name=t.name, data_type=t.data_type, dims=t.dims)
    return light


def graph_types(graph: GraphProto, outer: dict[str, str] | None = None) -> dict[str, str]:
    types = dict(outer or {})
    for t in graph.initializer:
        types[t.name] = tensor_type_text(t)
    for s in graph.sparse_initializer:
        types[s.values.name] = "sparse " + tensor_type_text(s.values)
    texts: dict[bytes, str] = {}  # a big graph repeats few types: each is written once
    for part in (graph.input, graph.value_info, graph.output):
        for vi in part:
            key = vi.type.SerializeToString()
            text = texts.get(key)
            if text is None:
                text = texts[key] = type_text(vi.type)
            if text or vi.name not in types:
                types[vi.name] = text
    return types


def subgraphs_of(node: NodeProto) -> list[tuple[str, GraphProto]]:
    out = []
    for attr in node.attribute:
        if attr.type == AttributeProto.GRAPH:
            out.append((attr.name, attr.g))
        elif attr.type == AttributeProto.GRAPHS:
            out.extend((f"{attr.name}[{i}]", g) for i, g in enumerate(attr.graphs))
    return out


def graph_reads(graph: GraphProto) -> list[str]:
    """Names read inside ``graph`` (nested graphs included) that it does not define, in order."""
    return _reads(graph, [(n, tuple(n.input), tuple(n.output), subgraphs_of(n) if n.attribute else [])
                          for n in graph.node])


def _reads(graph: GraphProto, nodes: list[tuple]) -> list[str]:
    """``graph_reads``, given ``(node, inputs, outputs, subgraphs)`` of each of its nodes."""
    defined = {i.name for i in graph.input}
    defined.update(t.name for t in graph.initializer)
    defined.update(s.values.name for s in graph.sparse_initializer)
    reads: dict[str, None] = {}
    for _node, inputs, outputs, subs in nodes:
        for name in inputs:
            if name and name not in defined:
                reads[name] = None
        for _, g in subs:
            for name in graph_reads(g):
                if name not in defined:
                    reads[name] = None
        defined.update(outputs)
    defined.discard("")
    for o in graph.output:
        if o.name not in defined:
            reads[o.name] = None
    return list(reads)


def id_part(name: str, index: int) -> str:
    """``name`` as part of a box id when an HTML attribute carries it unchanged, else ``#index``.

    Ids go to the browser in ``data-id`` attributes and come back on a click; the escapers
    show invisible and control characters as escapes, so names holding them would not
    come back as they went."""
    return name if name.isprintable() else f"#{index}"


def retype(gd: GraphData, graph: GraphProto, outer_types: dict[str, str] | None = None) -> None:
    """Give ``gd`` (made from ``graph`` before shape inference) the types of ``graph`` after
    it: the same nodes in the same order, with ``value_info`` added."""
    types = graph_types(graph, outer_types)
    gd.types.clear()
    gd.types.update(types)
    typed_nodes = iter(graph.node)
    for box in gd.boxes:
        if box.kind != "node":
            box.sublabel = types.get(box.label, "")
            continue
        node = next(typed_nodes)
        box.params = [(n, types.get(n, "")) for n, _ in box.params]
        for (_, sub), (_, g) in zip(box.subgraphs, subgraphs_of(node) if box.subgraphs else []):
            retype(sub, g, types)
    for e in gd.edges:
        e.type = types.get(e.value, "")


def model_graph_data(model: ModelProto, *, inline_initializers: bool = True,
                     infer: bool = True) -> GraphData:
    """The main graph of ``model`` (shape inference first, unless ``infer=False``)."""
    source = infer_types(model) if infer else model
    return graph_data(source.graph, inline_initializers=inline_initializers)


def graph_data(graph: GraphProto, *, inline_initializers: bool = True, id_prefix: str = "",
               trace_path: str = "", outer_types: dict[str, str] | None = None,
               outer_names: frozenset = frozenset()) -> GraphData:
    types = graph_types(graph, outer_types)
    initialized = [t.name for t in graph.initializer] + [s.values.name for s in graph.sparse_initializer]
    init_set = set(initialized)
    boxes: list[Box] = []
    producer: dict[str, tuple[str, int]] = {}
    used_ids: set[str] = set()

    def unique(box_id: str) -> str:
        base, k = box_id, 1
        while box_id in used_ids:  # only an invalid model repeats a name
            k += 1
            box_id = f"{base}#{k}"
        used_ids.add(box_id)
        return box_id

    def value_box(kind: str, name: str, key: str) -> str:
        box_id = unique(f"{id_prefix}{key}:{id_part(name, len(boxes))}")
        boxes.append(Box(box_id, kind, name, types.get(name, "")))
        producer[name] = (box_id, 0)
        return box_id

    for vi in graph.input:
        if vi.name not in init_set:
            value_box("input", vi.name, "in")
    drawn_inits: set[str] = set()
    output_names = {o.name for o in graph.output}
    for name in dict.fromkeys(initialized):
        if not inline_initializers or name in output_names:
            value_box("initializer", name, "init")
            drawn_inits.add(name)

    # each node's fields read from the proto once (reading a proto field costs more than a tuple's)
    nodes = [(n, tuple(n.input), tuple(n.output), subgraphs_of(n) if n.attribute else [])
             for n in graph.node]
    local = {i.name for i in graph.input} | init_set
    for _node, _inputs, outputs, _subs in nodes:
        local.update(outputs)
    local.discard("")
    outer_reads = [n for n in _reads(graph, nodes) if n not in local]
    for name in outer_reads:
        value_box("outer" if name in outer_names else "missing", name, "outer")

    visible = frozenset(outer_names | local)
    node_boxes = []
    for idx, (node, inputs, outputs, sub_graphs) in enumerate(nodes):
        box_id = f"{id_prefix}n{idx}"
        op_type, domain, name = node.op_type, node.domain, node.name
        op = op_type if domain in ("", "ai.onnx") else f"{domain}::{op_type}"
        sublabel = name if name and name != op_type else ""
        params = []
        if inline_initializers:
            params = [(n, types.get(n, "")) for n in dict.fromkeys(inputs)
                      if n in init_set and n not in drawn_inits]
        node_path = f"{trace_path}/{name or op_type}" if trace_path else (name or op_type)
        subs = [(attr, graph_data(g, inline_initializers=inline_initializers,
                                  id_prefix=f"{box_id}/{id_part(attr, k)}/", trace_path=f"{node_path}/{attr}",
                                  outer_types=types, outer_names=visible))
                for k, (attr, g) in enumerate(sub_graphs)]
        box = Box(box_id, "node", op, sublabel, params, node, subs, (trace_path, outputs),
                  inputs=inputs, outputs=outputs)
        boxes.append(box)
        node_boxes.append(box)
        for port, out in enumerate(outputs):
            if out and out not in producer:
                producer[out] = (box_id, port)

    edges: list[Edge] = []
    seen: set[tuple] = set()

    def connect(name: str, target: str, implicit: bool = False) -> None:
        if not name or (name in init_set and name not in drawn_inits):
            return
        if name not in producer:  # invalid model: draw the dangling read
            value_box("missing", name, "outer")
        source, port = producer[name]
        key = (source, target, name)
        if key not in seen:
            seen.add(key)
            edges.append(Edge(source, target, name, types.get(name, ""), implicit, port))

    for box in node_boxes:
        for name in box.inputs:
            connect(name, box.id)
        if not box.subgraphs:  # the same test as subgraphs_of, already made
            continue
        explicit = set(box.inputs)
        for _, g in subgraphs_of(box.node):
            for name in graph_reads(g):
                if name not in explicit and name in producer:
                    connect(name, box.id, implicit=True)
    for out in graph.output:
        box_id = unique(f"{id_prefix}out:{id_part(out.name, len(boxes))}")
        boxes.append(Box(box_id, "output", out.name, types.get(out.name, "")))
        connect(out.name, box_id)
    return GraphData(graph.name, id_prefix, trace_path, boxes, edges, types)
