"""Every Hypothesis strategy of the hostile-model fuzzers (one module, as STYLE.md asks).

Each strategy draws a ``sandbox.Case``: a model (bytes or text), feeds and limits,
with a ``label`` that says how it was made (seed + mutations), so a failure reads
like a reproduction recipe.

    byte_cases()    seed or real-model bytes: bit flips, truncation, insertion, duplication
    text_cases()    ONNX text syntax with tokens deleted, duplicated, inserted
    field_cases()   protobuf fields: attribute values and types, initializer dims/types/data,
                    declared shapes and elem types, op_type/domain swaps, opsets, rewiring,
                    removal of nodes and inputs, external data paths (read through a folder)
    feed_cases()    valid models, hostile feeds: dtypes, ranks, shapes, NaN/inf, empty
                    tensors, extreme values, wrong kinds of value
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import onnx
import onnx.defs
from hypothesis import strategies as st
from onnx import AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto

from tests.hostile.sandbox import FUZZ_LIMITS, Case
from tests.hostile.seeds import LIGHT_NETS, SEEDS, light_net_bytes

A = AttributeProto

# ---------------------------------------------------------------- interesting values

INTERESTING_INTS = [0, 1, -1, 2, 3, -2, 4, 7, 8, 16, 255, 256, 1000, 2**15, 2**31 - 1, -(2**31), 2**31,
                    2**32, 2**40, 2**62, 2**63 - 1, -(2**63), 10**6, 10**9]
INTERESTING_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, math.nan, math.inf, -math.inf, 1e30, -1e30,
                      1e-40, 3.4e38, 1e308, 65504.0, 1e-8]
INTERESTING_STRINGS = [
    "", "linear", "nearest", "cubic", "UPPER", "LOWER", "NONE", "<script>alert('x')</script>", "\x00",
    "é\u202e", "a" * 300, "(a+)+$", "((a|a)*)*b", "(x+x+)+y", "[", "ii->i", "...,...->...",
    "ij,jk->ik", "abcdefghijklmnopqrstuvwxyz", "i" * 30 + "->", "RGB", "BGR", "Grayscale", "Tanh",
    "Relu", "Sigmoid", "HardSigmoid", "Affine", "constant", "reflect", "edge", "wrap", "add", "mul",
    "max", "min", "none", "half_pixel", "align_corners", "tf_crop_and_resize", "round_prefer_ceil",
    "L1", "L2", "MAX", "SOFTMAX", "PROBIT", "BRANCH_LT", "LEAF", "forward", "reverse",
    "bidirectional", "LEFT", "RIGHT", "SUM", "AVERAGE", "TF", "IDF", "TFIDF", "DCR", "CRD",
    "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "tanh", "zeros", "border", "reflection",
]

ints = st.sampled_from(INTERESTING_INTS) | st.integers(-4, 12)
small_ints = st.integers(-3, 8)
floats = st.sampled_from(INTERESTING_FLOATS) | st.floats(-10, 10, allow_nan=False, width=32)
strings = st.sampled_from(INTERESTING_STRINGS) | st.text(max_size=12)
elem_types = st.sampled_from(list(TensorProto.DataType.values())) | st.integers(-1, 40)
dims = st.lists(st.sampled_from([0, 1, 2, 3, 5, -1, -7, 2**20, 2**31, 2**40, 2**62, 2**63 - 1]) | small_ints,
                max_size=6)

OP_TYPES = sorted({s.name for s in onnx.defs.get_all_schemas_with_history()})
DOMAINS = ["", "ai.onnx", "ai.onnx.ml", "ai.onnx.preview.training", "ai.onnx.preview", "onnxkit",
           "com.microsoft", "local", "evil", "ai.onnx.ml.evil"]
EXTERNAL_LOCATIONS = ["data.bin", "link.bin", "../secret.bin", "/etc/passwd", "sub/../../secret.bin",
                      "C:\\Windows\\win.ini", "", "missing.bin", ".", "model.onnx", "\\\\server\\share",
                      "data.bin\x00.txt", "~/.ssh/id_rsa", "file:///etc/passwd", "loop.bin", "x" * 300,
                      "sub/" * 40 + "data.bin"]
EXTERNAL_NUMBERS = ["0", "16", "4096", "4097", "-1", "abc", "99999999999999999999", " 8", "1e3", ""]


# ---------------------------------------------------------------- model walking

def all_graphs(model: ModelProto) -> list[GraphProto]:
    """The main graph and every subgraph, depth first."""
    out: list[GraphProto] = []

    def visit(graph: GraphProto) -> None:
        out.append(graph)
        for node in graph.node:
            for attr in node.attribute:
                if attr.type == A.GRAPH:
                    visit(attr.g)
                for g in attr.graphs:
                    visit(g)

    visit(model.graph)
    return out


def all_nodes(model: ModelProto) -> list[NodeProto]:
    nodes = [n for g in all_graphs(model) for n in g.node]
    nodes += [n for f in model.functions for n in f.node]
    return nodes


def value_names(model: ModelProto) -> list[str]:
    names = set()
    for g in all_graphs(model):
        names.update(i.name for i in g.input)
        names.update(t.name for t in g.initializer)
        for n in g.node:
            names.update(n.input)
            names.update(n.output)
    return sorted(names)


def _pick(draw, items, what: str):
    """One element of ``items`` (None when there is none)."""
    if not items:
        return None
    return items[draw(st.integers(0, len(items) - 1), label=what)]


# ---------------------------------------------------------------- attribute values

@st.composite
def tensor_protos(draw) -> TensorProto:
    """A small TensorProto, often inconsistent (dims vs data, odd data types)."""
    if draw(st.booleans()):
        dtype = draw(st.sampled_from([np.float32, np.int64, np.int32, np.uint8, np.bool_, np.float16,
                                      np.float64, np.int8]))
        shape = draw(st.lists(st.integers(0, 3), max_size=3))
        array = np.zeros(shape, dtype)
        if array.size:
            array.reshape(-1)[0] = draw(st.sampled_from([1, 0, 7]))
        return onnx.numpy_helper.from_array(array, name=draw(strings))
    tensor = TensorProto(name=draw(strings), data_type=draw(elem_types), dims=draw(dims))
    choice = draw(st.integers(0, 3))
    if choice == 0:
        tensor.raw_data = draw(st.binary(max_size=64))
    elif choice == 1:
        tensor.float_data.extend(draw(st.lists(floats, max_size=8)))
    elif choice == 2:
        tensor.int64_data.extend(draw(st.lists(ints, max_size=8)))
    else:
        tensor.string_data.extend(s.encode("utf-8", "surrogatepass") for s in draw(st.lists(strings, max_size=3)))
    return tensor


def _clear(attr: AttributeProto) -> None:
    for name in ("f", "i", "s", "t", "g", "sparse_tensor", "tp"):
        attr.ClearField(name)
    for name in ("floats", "ints", "strings", "tensors", "graphs", "sparse_tensors", "type_protos"):
        attr.ClearField(name)


def _encode(s: str) -> bytes:
    return s.encode("utf-8", "surrogatepass")


def set_attribute(draw, attr: AttributeProto, kind: int) -> str:
    """Give ``attr`` a drawn value of type ``kind``; returns a description."""
    _clear(attr)
    attr.type = kind
    if kind == A.INT:
        attr.i = v = draw(ints)
    elif kind == A.FLOAT:
        attr.f = v = draw(floats)
    elif kind == A.STRING:
        v = draw(strings)
        attr.s = _encode(v)
    elif kind == A.INTS:
        v = draw(st.lists(ints, max_size=8))
        attr.ints.extend(v)
    elif kind == A.FLOATS:
        v = draw(st.lists(floats, max_size=8))
        attr.floats.extend(v)
    elif kind == A.STRINGS:
        v = draw(st.lists(strings, max_size=4))
        attr.strings.extend(_encode(s) for s in v)
    elif kind == A.TENSOR:
        attr.t.CopyFrom(draw(tensor_protos()))
        v = f"tensor(type={attr.t.data_type}, dims={list(attr.t.dims)})"
    elif kind == A.TENSORS:
        attr.tensors.extend(draw(st.lists(tensor_protos(), max_size=2)))
        v = f"{len(attr.tensors)} tensors"
    elif kind == A.GRAPH:
        attr.g.CopyFrom(draw(graphs()))
        v = f"graph {attr.g.name!r}"
    elif kind == A.TYPE_PROTO:
        attr.tp.tensor_type.elem_type = draw(elem_types)
        v = f"type proto elem_type={attr.tp.tensor_type.elem_type}"
    else:  # UNDEFINED
        v = "no value"
    return f"{A.AttributeType.Name(kind) if kind in A.AttributeType.values() else kind}={v!r}"


@st.composite
def graphs(draw) -> GraphProto:
    """A subgraph taken from a seed (bodies of If/Loop/Scan/SequenceMap) or an empty one."""
    bodies = _seed_subgraphs()
    if not bodies or draw(st.booleans()):
        return GraphProto(name="empty")
    graph = GraphProto()
    graph.ParseFromString(_pick(draw, bodies, "subgraph"))
    return graph


@lru_cache(maxsize=None)
def _seed_subgraphs() -> tuple[bytes, ...]:
    out = []
    for seed in SEEDS.values():
        for g in all_graphs(seed.model())[1:]:
            out.append(g.SerializeToString())
    return tuple(out)


ATTR_KINDS = [A.INT, A.FLOAT, A.STRING, A.INTS, A.FLOATS, A.STRINGS, A.TENSOR, A.TENSORS, A.GRAPH,
              A.UNDEFINED, A.TYPE_PROTO]


# ---------------------------------------------------------------- field mutators
# each takes (draw, model) and returns a description ("" when it found nothing to change)

def _attr_site(draw, model):
    nodes = [n for n in all_nodes(model) if n.attribute]
    node = _pick(draw, nodes, "node")
    if node is None:
        return None, None
    return node, _pick(draw, list(node.attribute), "attribute")


def mutate_attr_value(draw, model) -> str:
    node, attr = _attr_site(draw, model)
    if attr is None:
        return ""
    kind = attr.type if attr.type != A.GRAPH else A.GRAPH
    return f"{node.op_type}.{attr.name} := {set_attribute(draw, attr, kind)}"


def mutate_attr_type(draw, model) -> str:
    node, attr = _attr_site(draw, model)
    if attr is None:
        return ""
    return f"{node.op_type}.{attr.name} retyped := {set_attribute(draw, attr, draw(st.sampled_from(ATTR_KINDS)))}"


def mutate_attr_add(draw, model) -> str:
    node = _pick(draw, all_nodes(model), "node")
    if node is None:
        return ""
    schema = _schema(node.op_type, node.domain)
    names = sorted(schema.attributes) if schema is not None else []
    name = draw(st.sampled_from(names) if names and draw(st.booleans()) else strings)
    kind = draw(st.sampled_from(ATTR_KINDS))
    if names and name in names and draw(st.booleans()):
        kind = int(schema.attributes[name].type)
    for existing in list(node.attribute):
        if existing.name == name and draw(st.booleans()):
            node.attribute.remove(existing)
    attr = node.attribute.add()
    attr.name = name
    return f"{node.op_type} += {name!r} {set_attribute(draw, attr, kind)}"


def mutate_attr_remove(draw, model) -> str:
    node, attr = _attr_site(draw, model)
    if attr is None:
        return ""
    node.attribute.remove(attr)
    return f"{node.op_type} -= {attr.name!r}"


def mutate_attr_ref(draw, model) -> str:
    """Turn an attribute into a reference to a caller attribute (valid only inside functions)."""
    node, attr = _attr_site(draw, model)
    if attr is None:
        return ""
    attr.ref_attr_name = draw(st.sampled_from(["alpha", "missing", ""]))
    return f"{node.op_type}.{attr.name} -> @{attr.ref_attr_name}"


@lru_cache(maxsize=None)
def _schema(op_type: str, domain: str):
    try:
        return onnx.defs.get_schema(op_type, 10**4, "" if domain == "ai.onnx" else domain)
    except Exception:
        return None


def _initializers(model):
    return [t for g in all_graphs(model) for t in g.initializer]


def mutate_init_dims(draw, model) -> str:
    tensor = _pick(draw, _initializers(model), "initializer")
    if tensor is None:
        return ""
    del tensor.dims[:]
    tensor.dims.extend(draw(dims))
    return f"initializer {tensor.name!r} dims := {list(tensor.dims)}"


def mutate_init_type(draw, model) -> str:
    tensor = _pick(draw, _initializers(model), "initializer")
    if tensor is None:
        return ""
    tensor.data_type = draw(elem_types)
    return f"initializer {tensor.name!r} data_type := {tensor.data_type}"


def mutate_init_data(draw, model) -> str:
    tensor = _pick(draw, _initializers(model), "initializer")
    if tensor is None:
        return ""
    for name in ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data"):
        tensor.ClearField(name)
    tensor.raw_data = draw(st.binary(max_size=80))
    return f"initializer {tensor.name!r} raw_data := {len(tensor.raw_data)} bytes"


def mutate_init_external(draw, model) -> str:
    """Point an initializer at external data (the case is then loaded from a folder)."""
    tensor = _pick(draw, _initializers(model), "initializer")
    if tensor is None:
        return ""
    tensor.data_location = TensorProto.EXTERNAL
    tensor.ClearField("raw_data")
    del tensor.external_data[:]
    entries = {"location": draw(st.sampled_from(EXTERNAL_LOCATIONS))}
    for key in ("offset", "length"):
        if draw(st.booleans()):
            entries[key] = draw(st.sampled_from(EXTERNAL_NUMBERS))
    for key, value in entries.items():
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return f"initializer {tensor.name!r} external {entries}"


def _value_infos(model):
    out = []
    for g in all_graphs(model):
        out += list(g.input) + list(g.output) + list(g.value_info)
    return out


def mutate_declared_type(draw, model) -> str:
    vi = _pick(draw, _value_infos(model), "value_info")
    if vi is None:
        return ""
    choice = draw(st.integers(0, 3))
    if choice == 0:
        vi.type.tensor_type.elem_type = draw(elem_types)
        return f"{vi.name!r} elem_type := {vi.type.tensor_type.elem_type}"
    if choice == 1:
        shape = vi.type.tensor_type.shape
        del shape.dim[:]
        for d in draw(st.lists(st.sampled_from([0, 1, 2, 3, 2**31, 2**62, 2**63 - 1]) | small_ints
                               | st.sampled_from(["N", "", "<b>"]), max_size=5)):
            dim = shape.dim.add()
            if isinstance(d, str):
                dim.dim_param = d
            else:
                dim.dim_value = d
        return f"{vi.name!r} shape := {[d.dim_value or d.dim_param for d in shape.dim]}"
    if choice == 2:
        inner = onnx.TypeProto()
        inner.CopyFrom(vi.type)
        wrapper = draw(st.sampled_from(["sequence_type", "optional_type"]))
        getattr(vi.type, wrapper).elem_type.CopyFrom(inner)
        return f"{vi.name!r} wrapped in {wrapper}"
    vi.type.Clear()
    return f"{vi.name!r} type cleared"


def mutate_op(draw, model) -> str:
    node = _pick(draw, all_nodes(model), "node")
    if node is None:
        return ""
    if draw(st.booleans()):
        node.op_type = draw(st.sampled_from(OP_TYPES) | strings)
        return f"op_type := {node.op_type!r}"
    node.domain = draw(st.sampled_from(DOMAINS))
    return f"{node.op_type}.domain := {node.domain!r}"


def mutate_opset(draw, model) -> str:
    imports = list(model.opset_import) + [o for f in model.functions for o in f.opset_import]
    choice = draw(st.integers(0, 2))
    if choice == 0 and imports:
        entry = _pick(draw, imports, "opset")
        entry.version = draw(st.sampled_from([0, 1, 5, 6, 7, 9, 11, 13, 17, 18, 20, 22, 23, 25, 28, 29,
                                              100, -1, 2**62]))
        return f"opset {entry.domain!r} := {entry.version}"
    if choice == 1 and imports:
        entry = _pick(draw, imports, "opset")
        entry.domain = draw(st.sampled_from(DOMAINS))
        return f"opset domain := {entry.domain!r}"
    model.ir_version = draw(st.sampled_from([0, 1, 3, 4, 7, 8, 9, 10, 11, 12, 13, 99, -1]))
    return f"ir_version := {model.ir_version}"


def mutate_rewire(draw, model) -> str:
    node = _pick(draw, all_nodes(model), "node")
    if node is None:
        return ""
    names = value_names(model) + ["", "ghost"]
    field = node.input if (draw(st.booleans()) or not node.output) and node.input else node.output
    if not field:
        return ""
    idx = draw(st.integers(0, len(field) - 1))
    field[idx] = draw(st.sampled_from(names))
    return f"{node.op_type} {'input' if field is node.input else 'output'}[{idx}] := {field[idx]!r}"


def mutate_structure(draw, model) -> str:
    graph = _pick(draw, all_graphs(model), "graph")
    choice = draw(st.integers(0, 6))
    if choice == 0 and graph.node:
        idx = draw(st.integers(0, len(graph.node) - 1))
        op_type = graph.node[idx].op_type
        del graph.node[idx]
        return f"removed node {idx} ({op_type})"
    if choice == 1 and graph.node:
        node = _pick(draw, list(graph.node), "node")
        graph.node.add().CopyFrom(node)
        return f"duplicated a {node.op_type} node"
    if choice == 2:
        node = _pick(draw, [n for n in graph.node if n.input], "node")
        if node is None:
            return ""
        idx = draw(st.integers(0, len(node.input) - 1))
        del node.input[idx]
        return f"{node.op_type} input {idx} removed"
    if choice == 3:
        node = _pick(draw, list(graph.node), "node")
        if node is None:
            return ""
        node.input.append(draw(st.sampled_from(value_names(model) + [""])))
        return f"{node.op_type} got an extra input {node.input[-1]!r}"
    if choice == 4 and graph.input:
        idx = draw(st.integers(0, len(graph.input) - 1))
        del graph.input[idx]
        return f"graph input {idx} removed"
    if choice == 5 and graph.output:
        idx = draw(st.integers(0, len(graph.output) - 1))
        del graph.output[idx]
        return f"graph output {idx} removed"
    if len(graph.node) > 1:
        i, j = draw(st.integers(0, len(graph.node) - 1)), draw(st.integers(0, len(graph.node) - 1))
        a, b = NodeProto(), NodeProto()
        a.CopyFrom(graph.node[i])
        b.CopyFrom(graph.node[j])
        graph.node[i].CopyFrom(b)
        graph.node[j].CopyFrom(a)
        return f"swapped nodes {i} and {j}"
    return ""


def mutate_names(draw, model) -> str:
    """Hostile strings in names and doc strings (they end up in messages and reports)."""
    node = _pick(draw, all_nodes(model), "node")
    if node is None:
        return ""
    node.name = draw(strings)
    node.doc_string = draw(strings)
    model.graph.name = draw(strings)
    return f"node name := {node.name!r}"


FIELD_MUTATORS = {
    "attr_value": mutate_attr_value, "attr_type": mutate_attr_type, "attr_add": mutate_attr_add,
    "attr_remove": mutate_attr_remove, "attr_ref": mutate_attr_ref, "init_dims": mutate_init_dims,
    "init_type": mutate_init_type, "init_data": mutate_init_data, "init_external": mutate_init_external,
    "declared_type": mutate_declared_type, "op": mutate_op, "opset": mutate_opset,
    "rewire": mutate_rewire, "structure": mutate_structure, "names": mutate_names,
}


# ---------------------------------------------------------------- feeds

FLOAT_SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e38, -1e38, 1e-45, 65504.0, -1.0]
STRING_SPECIALS = ["", "a" * 10_000, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", "\x00", "é\u202e\U0001F600",
                   "<script>", "nan", "-inf", "1e999", "  ", "\ud800"]
FEED_DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint8, np.uint64,
               np.bool_, np.complex64, object]


def _extremes(dtype: np.dtype) -> list:
    if dtype.kind == "f":
        return FLOAT_SPECIALS
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return sorted({int(info.min), int(info.max), 0, 1, -1 if dtype.kind == "i" else 2,
                       min(int(info.max), 2**31), min(int(info.max), 10**6)})
    if dtype.kind == "b":
        return [True, False]
    return STRING_SPECIALS


FEED_CHANGES = ["values"] * 6 + ["shape"] * 3 + ["long_axis", "empty", "dtype", "rank"]


@st.composite
def array_like(draw, template: np.ndarray) -> tuple[np.ndarray, str]:
    """An array shaped and typed like ``template`` or deliberately not, with hostile values."""
    dtype = template.dtype
    shape = list(template.shape)
    change = draw(st.sampled_from(FEED_CHANGES))
    if change == "dtype":
        target = draw(st.sampled_from(FEED_DTYPES))
        if target is object:
            return np.array(draw(st.lists(st.sampled_from(STRING_SPECIALS), min_size=1, max_size=3)),
                            dtype=object), change
        with np.errstate(all="ignore"):
            return (template.astype(target) if dtype != object else np.zeros(shape, target)), change
    if change == "shape":  # same rank: symbolic dims accept it
        shape = [draw(st.sampled_from([0, 1, 2, 3, 5, 17])) for _ in shape]
    elif change == "long_axis" and shape:  # one long axis: broadcasting against it grows fast
        shape = [1] * len(shape)
        shape[draw(st.integers(0, len(shape) - 1))] = 3000
    elif change == "empty" and shape:
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    elif change == "rank":
        shape = draw(st.lists(st.integers(0, 4), max_size=5))
    array = _fill(template, shape, draw)
    if array.size and change == "values":  # hostile values at a few places
        specials = _extremes(dtype)
        for _ in range(draw(st.integers(1, 3))):
            idx = draw(st.integers(0, array.size - 1))
            value = draw(st.sampled_from(specials) | (small_ints if dtype.kind in "iu" else st.just(specials[0])))
            with np.errstate(all="ignore"):
                try:
                    array.reshape(-1)[idx] = value
                except (OverflowError, ValueError):
                    pass
    return array, change


def _fill(template: np.ndarray, shape: list, draw) -> np.ndarray:
    size = int(np.prod(shape)) if shape else 1
    if template.dtype == object:
        pool = [str(v) for v in template.reshape(-1)] or ["a"]
        return np.array([pool[i % len(pool)] for i in range(size)], dtype=object).reshape(shape)
    flat = template.reshape(-1)
    if flat.size == 0:
        return np.zeros(shape, template.dtype)
    return np.resize(flat, size).reshape(shape).copy()


@st.composite
def hostile_feeds(draw, feeds: dict) -> tuple[dict, str]:
    """Feeds derived from valid ``feeds``: one or two values replaced, rarely dropped or added."""
    out, changes = dict(feeds), []
    names = sorted(feeds)
    for name in draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True)):
        # Hypothesis favours the first choice of sampled_from: keep the rare ones last
        kind = draw(st.sampled_from(["array"] * 18 + ["missing", "not an array"]))
        if kind == "missing":
            del out[name]
            changes.append(f"{name}: missing")
        elif kind == "not an array":
            out[name] = draw(st.sampled_from([None, [1, 2], 3, "x", {"a": 1}, np.float32(1.5)]))
            changes.append(f"{name}: {out[name]!r}")
        else:
            out[name], change = draw(array_like(feeds[name]))
            changes.append(f"{name} {change}: {out[name].dtype}{list(out[name].shape)}")
    if draw(st.sampled_from([False] * 19 + [True])):
        out["not_an_input"] = np.zeros(2, np.float32)
        changes.append("extra input")
    return out, ", ".join(changes)


def adapted_feeds(model: ModelProto, feeds: dict) -> dict:
    """Feeds that match the (mutated) declared inputs where that is cheap, else the seed's."""
    from onnxkit.runtime.values import np_dtype

    init = {t.name for t in model.graph.initializer}
    out = {}
    for vi in model.graph.input:
        if vi.name in init:
            continue
        given = feeds.get(vi.name)
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None:
            if given is not None:
                out[vi.name] = given
            continue
        try:
            dtype = np_dtype(tt.elem_type)
        except Exception:
            dtype = None
        shape = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        if given is not None and (dtype is None or given.dtype == dtype) and given.ndim == len(shape) \
                and all(s is None or s == g for s, g in zip(shape, given.shape)):
            out[vi.name] = given
            continue
        concrete = [2 if s is None else s for s in shape]
        if dtype is None or any(s < 0 or s > 64 for s in concrete) or int(np.prod(concrete)) > 4096:
            if given is not None:
                out[vi.name] = given
            continue
        try:
            out[vi.name] = np.ones(concrete, dtype) if dtype != object else np.full(concrete, "a", object)
        except Exception:
            if given is not None:
                out[vi.name] = given
    return out


# ---------------------------------------------------------------- byte and text mutation

@lru_cache(maxsize=None)
def _light_feeds(name: str) -> dict:
    model = onnx.load_from_string(light_net_bytes(name))
    init = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name not in init:
            shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
            feeds[vi.name] = np.zeros(shape, np.float32)
    return feeds


@st.composite
def byte_mutations(draw, data: bytes) -> tuple[bytes, list[str]]:
    buf, done = bytearray(data), []
    for _ in range(draw(st.integers(1, 3))):
        n = len(buf)
        # flips and byte sets keep protobuf's length prefixes intact: more cases decode
        choice = draw(st.sampled_from([0, 0, 0, 0, 5, 5, 1, 2, 3, 4, 6]))
        if n == 0:
            break
        pos = draw(st.integers(0, n - 1))
        if choice == 0:
            bit = draw(st.integers(0, 7))
            buf[pos] ^= 1 << bit
            done.append(f"flip bit {bit} at {pos}")
        elif choice == 1:
            del buf[pos:]
            done.append(f"truncate at {pos}")
        elif choice == 2:
            chunk = draw(st.binary(min_size=1, max_size=16))
            buf[pos:pos] = chunk
            done.append(f"insert {chunk!r} at {pos}")
        elif choice == 3:
            length = draw(st.integers(1, 64))
            chunk = bytes(buf[pos:pos + length])
            dest = draw(st.integers(0, n))
            buf[dest:dest] = chunk * draw(st.integers(1, 3))
            done.append(f"duplicate {len(chunk)} bytes from {pos} at {dest}")
        elif choice == 4:
            length = draw(st.integers(1, 32))
            del buf[pos:pos + length]
            done.append(f"delete {length} at {pos}")
        elif choice == 5:
            value = draw(st.sampled_from([0x00, 0xFF, 0x7F, 0x80, 0x01]))
            buf[pos] = value
            done.append(f"byte {pos} := {value:#x}")
        else:  # a huge varint, e.g. a length or a dim
            varint = draw(st.sampled_from([b"\xff\xff\xff\xff\x0f", b"\xff" * 9 + b"\x01", b"\x80" * 10]))
            buf[pos:pos + 1] = varint
            done.append(f"varint {varint!r} at {pos}")
    return bytes(buf), done


@st.composite
def byte_cases(draw) -> Case:
    source = draw(st.sampled_from(sorted(SEEDS) + list(LIGHT_NETS)), label="source")
    if source in SEEDS:
        data, feeds = SEEDS[source].bytes(), SEEDS[source].feeds()
    else:
        data, feeds = light_net_bytes(source), _light_feeds(source)
    mutated, done = draw(byte_mutations(data))
    return Case(mutated, feeds, via_path=draw(st.integers(0, 3)) == 0, label=f"{source}: {'; '.join(done)}")


TEXT_TOKENS = ["<", ">", "{", "}", "(", ")", ",", "=", "[", "]", '"', ":", "float", "int64", "string",
               "1e999", "-1", "99999999999999999999", "@alpha", "\\", "\x00", "é", "seq(", "optional(",
               "map(int64,", "If", "Loop", "<body = g () => () {}>", "\n", "=>", "ir_version", "\"\" : 99"]


@st.composite
def text_cases(draw) -> Case:
    seed = SEEDS[draw(st.sampled_from(sorted(SEEDS)), label="seed")]
    text, done = seed.text, []
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(text)))
        choice = draw(st.integers(0, 3))
        if choice == 0:
            length = draw(st.integers(1, 40))
            text = text[:pos] + text[pos + length:]
            done.append(f"delete {length} at {pos}")
        elif choice == 1:
            token = draw(st.sampled_from(TEXT_TOKENS))
            text = text[:pos] + token + text[pos:]
            done.append(f"insert {token!r} at {pos}")
        elif choice == 2:
            length = draw(st.integers(1, 80))
            text = text[:pos] + text[pos:pos + length] * 2 + text[pos + length:]
            done.append(f"duplicate {length} at {pos}")
        else:
            text = text[:pos]
            done.append(f"truncate at {pos}")
    if "\n" not in text and not text.lstrip().startswith("<"):
        text = "\n" + text  # keep it text syntax: a bare string would be read as a file path
    return Case(text, seed.feeds(), label=f"{seed.name} text: {'; '.join(done)}")


@st.composite
def field_cases(draw, levels=(0,)) -> Case:
    """Field mutations of a seed; ``levels``: the optimizer levels the Session may use."""
    seed = SEEDS[draw(st.sampled_from(sorted(SEEDS)), label="seed")]
    model = ModelProto()
    model.ParseFromString(seed.bytes())
    done = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(sorted(FIELD_MUTATORS)), label="mutator")
        what = FIELD_MUTATORS[kind](draw, model)
        if what:
            done.append(f"{kind}: {what}")
    external = any(d.startswith("init_external") for d in done)
    feeds = seed.feeds() if draw(st.booleans()) else adapted_feeds(model, seed.feeds())
    level = draw(st.sampled_from(levels))
    try:
        data = model.SerializeToString()
    except Exception as exc:  # the mutation itself made an unserializable proto: skip
        data = seed.bytes()
        done.append(f"(unserializable, seed kept: {exc})")
    return Case(data, feeds, via_path=external or draw(st.integers(0, 7)) == 0, level=level,
                label=f"{seed.name}: {' | '.join(done) or 'unchanged'}")


def optimizer_cases():
    """Field mutations planned through the graph optimizer (levels 1-3)."""
    return field_cases(levels=(1, 2, 3))


@st.composite
def feed_cases(draw) -> Case:
    seed = SEEDS[draw(st.sampled_from(sorted(SEEDS)), label="seed")]
    feeds, what = draw(hostile_feeds(seed.feeds()))
    return Case(seed.bytes(), feeds, limits=FUZZ_LIMITS, label=f"{seed.name}: {what}")


# ---------------------------------------------------------------- one operator at a time

@lru_cache(maxsize=None)
def registered_ops() -> tuple[tuple[str, str, int], ...]:
    """(domain, op_type, since_version) of every reference kernel that has an onnx schema."""
    from onnxkit.ops import load_reference_kernels
    from onnxkit.ops.registry import schema_of

    kernels = load_reference_kernels()
    return tuple(sorted((k.domain, k.op_type, k.since_version) for k in kernels
                        if schema_of(k.domain, k.op_type, k.since_version) is not None))


TYPE_TO_DTYPE = {
    "float": np.float32, "double": np.float64, "float16": np.float16, "int8": np.int8,
    "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
    "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64, "bool": np.bool_,
    "string": object,
}
INDEX_VALUES = [0, 1, 2, -1, 3, 5, -2, -7, 2**31, 10**6, 2**62, -(2**63), 2**63 - 1]
SHAPE_DIMS = [1, 2, 3, 0, 4, 5, 3000]


@st.composite
def tensor_values(draw, dtype, shape=None) -> np.ndarray:
    if shape is None:
        rank = draw(st.sampled_from([1, 2, 0, 3, 4, 5]))
        shape = [draw(st.sampled_from(SHAPE_DIMS[:-1])) for _ in range(rank)]
        if draw(st.sampled_from([False] * 15 + [True])) and shape:  # rarely one long axis
            shape = [min(d, 3) for d in shape[:3]]
            shape[draw(st.integers(0, len(shape) - 1))] = 3000
    size = int(np.prod(shape)) if shape else 1
    if dtype is object:
        pool = draw(st.lists(st.sampled_from(["a", "b c", "the", "", "A1"] + STRING_SPECIALS),
                             min_size=1, max_size=4))
        return np.array([pool[i % len(pool)] for i in range(size)], dtype=object).reshape(shape)
    kind = np.dtype(dtype).kind
    if kind == "b":
        base = np.arange(size) % 2 == 0
    elif kind in "iu":
        pool = draw(st.lists(st.sampled_from(INDEX_VALUES) | st.integers(-3, 6), min_size=1, max_size=4))
        with np.errstate(all="ignore"):
            base = np.array([pool[i % len(pool)] for i in range(size)], dtype=object)
            info = np.iinfo(dtype)
            base = np.clip(base, int(info.min), int(info.max)).astype(dtype) if size else np.zeros(0, dtype)
    else:
        base = np.random.default_rng(draw(st.integers(0, 3))).standard_normal(size)
        if size and draw(st.sampled_from([False] * 5 + [True])):
            base[draw(st.integers(0, size - 1))] = draw(st.sampled_from(FLOAT_SPECIALS))
    with np.errstate(all="ignore"):
        return np.asarray(base).astype(dtype).reshape(shape)


@st.composite
def value_of_type(draw, type_str: str):
    """A value of an onnx type string: tensor(T), seq(tensor(T)), optional(...), map(K, V)."""
    if type_str.startswith("tensor("):
        name = type_str[len("tensor("):-1]
        dtype = TYPE_TO_DTYPE.get(name)
        if dtype is None:  # ml_dtypes floats, complex: a float32 tensor, which the op may refuse
            dtype = np.float32
        return draw(tensor_values(dtype))
    if type_str.startswith("seq("):
        inner = type_str[len("seq("):-1]
        return [draw(value_of_type(inner)) for _ in range(draw(st.integers(0, 3)))]
    if type_str.startswith("optional("):
        if draw(st.booleans()):
            return None
        return draw(value_of_type(type_str[len("optional("):-1]))
    if type_str.startswith("map("):
        key = type_str[len("map("):].split(",")[0].strip()
        keys = draw(st.lists(st.integers(0, 5) if key != "string" else st.sampled_from(["a", "b", "c"]),
                             max_size=3, unique=True))
        return {k: np.float32(1.0) for k in keys}
    return np.zeros(2, np.float32)


ATTR_VALUES = {
    A.INT: st.integers(-2, 5) | st.sampled_from(INTERESTING_INTS),
    A.FLOAT: st.sampled_from([1.0, 0.5, 0.0, 2.0, 1e-5]) | floats,
    A.STRING: strings,
    A.INTS: st.lists(st.integers(-2, 5) | st.sampled_from(INTERESTING_INTS), max_size=6),
    A.FLOATS: st.lists(floats, max_size=6),
    A.STRINGS: st.lists(strings, max_size=4),
}


@lru_cache(maxsize=None)
def cpu_ops() -> tuple[tuple[str, str, int], ...]:
    """The operators the ``cpu`` executor has Numba kernels for (no bounds checks there)."""
    from onnxkit.kernels.cpu import load_cpu_kernels

    names = {(k.domain, k.op_type) for k in load_cpu_kernels()}
    return tuple(o for o in registered_ops() if (o[0], o[1]) in names)


@st.composite
def op_cases(draw, executor: str = "reference") -> Case:
    """One registered operator, schema-shaped inputs and attributes with hostile values.

    Inputs are graph inputs without declared types, so any value reaches the kernel.
    """
    from onnx import helper

    from onnxkit.ops.registry import schema_of

    ops = registered_ops() if executor == "reference" else cpu_ops()
    domain, op_type, since = ops[draw(st.integers(0, len(ops) - 1), label="operator")]
    schema = schema_of(domain, op_type, since)
    inputs, feeds = [], {}
    allowed = {c.type_param_str: sorted(c.allowed_type_strs) for c in schema.type_constraints}
    chosen: dict[str, str] = {}
    for i, param in enumerate(schema.inputs):
        option = param.option
        if option == onnx.defs.OpSchema.FormalParameterOption.Optional and not draw(st.booleans()):
            inputs.append("")
            continue
        count = draw(st.integers(1, 3)) if option == onnx.defs.OpSchema.FormalParameterOption.Variadic else 1
        for j in range(count):
            types = allowed.get(param.type_str, [param.type_str])
            if param.type_str not in chosen or not param.is_homogeneous:
                chosen[param.type_str] = draw(st.sampled_from(types))
            name = f"in{i}_{j}"
            inputs.append(name)
            feeds[name] = draw(value_of_type(chosen[param.type_str]))
    while inputs and inputs[-1] == "":
        inputs.pop()
    attrs, done = [], []
    for name, attr in sorted(schema.attributes.items()):
        if not attr.required and draw(st.sampled_from([False, False, True])):
            continue
        kind = int(attr.type)
        a = AttributeProto(name=name, type=kind)
        if kind in ATTR_VALUES:
            value = draw(ATTR_VALUES[kind])
            _assign(a, kind, value)
            done.append(f"{name}={value!r}"[:80])
        else:
            done.append(set_attribute(draw, a, kind)[:80])
            a.name = name
        attrs.append(a)
    n_out = max(1, len(schema.outputs)) if schema.max_output > 1 else 1
    outputs = [f"out{k}" for k in range(n_out)]
    node = helper.make_node(op_type, inputs, outputs, domain=domain, name="fuzzed")
    node.attribute.extend(attrs)
    graph = helper.make_graph([node], "one_op", [onnx.ValueInfoProto(name=n) for n in feeds],
                              [onnx.ValueInfoProto(name=n) for n in outputs])
    opsets = [helper.make_opsetid(domain, since)]
    if domain != "":
        opsets.append(helper.make_opsetid("", 21))
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 10
    shown = {k: f"{getattr(v, 'dtype', type(v).__name__)}{list(getattr(v, 'shape', ()))}" for k, v in feeds.items()}
    return Case(model.SerializeToString(), feeds, executor=executor,
                label=f"{domain or 'ai.onnx'}::{op_type}-{since} attrs[{', '.join(done)}] inputs{shown}")


def _assign(attr: AttributeProto, kind: int, value) -> None:
    if kind == A.INT:
        attr.i = value
    elif kind == A.FLOAT:
        attr.f = value
    elif kind == A.STRING:
        attr.s = _encode(value)
    elif kind == A.INTS:
        attr.ints.extend(value)
    elif kind == A.FLOATS:
        attr.floats.extend(value)
    else:
        attr.strings.extend(_encode(s) for s in value)


def cpu_op_cases():
    """``op_cases`` for the operators with Numba kernels, run by the ``cpu`` executor."""
    return op_cases(executor="cpu")
