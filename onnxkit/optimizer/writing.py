"""The optimized graph written back as a ModelProto: a new one, or the source rewritten.

    model = write_model(graph)                     # a new ModelProto; the source as it was
    model = write_model(graph, reuse_source=True)  # the source itself, rewritten in place,
                                                   # when 3/4 of its weight bytes survive

``reuse_source`` is for a source nobody else holds (a Session's own loaded model):
protobuf copies messages, so a new model holds every weight twice (or more) at its
peak. Rewritten in place, the surviving
initializers stay where they are; the bytes of dropped ones stay with the source's
memory until it is freed, hence the 3/4.
"""

from __future__ import annotations

import numpy as np
from onnx import ModelProto, TensorProto, helper

from onnxkit.optimizer.nodes import node_reads


def tensor_bytes(t: TensorProto) -> int:
    """The bytes of a tensor's values (8 per string), from its type and dims."""
    try:
        itemsize = helper.tensor_dtype_to_np_dtype(t.data_type).itemsize
    except (KeyError, TypeError, ValueError):
        itemsize = 1
    return int(np.prod(t.dims, dtype=np.int64)) * itemsize


def write_model(g, reuse_source: bool = False) -> ModelProto:
    """``g`` (an ``onnxkit.optimizer.graph.Graph``) as a model; see the module doc."""
    used = {n for node in g.nodes for n in node_reads(node)} | g.output_names
    kept = {name: t for name, t in g.initializers.items()
            if name in used or name in g.input_names}
    if reuse_source and _mostly_kept(g, kept):
        return _rewrite_source(g, kept)
    m = ModelProto()
    for fname in ("producer_name", "producer_version", "domain", "model_version",
                  "doc_string"):
        setattr(m, fname, getattr(g.model, fname))
    m.functions.extend(g.model.functions)
    _write_header(g, m)
    graph = m.graph
    graph.name = g.name
    graph.doc_string = g.model.graph.doc_string
    graph.node.extend(g.nodes)
    graph.initializer.extend(kept.values())
    graph.input.extend(g.inputs)
    graph.output.extend(g.outputs)
    graph.value_info.extend(_value_infos(g))
    graph.sparse_initializer.extend(g.model.graph.sparse_initializer)
    return m


def _write_header(g, m: ModelProto) -> None:
    """IR version, the opsets the nodes need, metadata (the level-3 plans) into ``m``."""
    m.ir_version = g.ir_version
    del m.opset_import[:]
    m.opset_import.extend(g.opset_imports())
    props = [(p.key, p.value) for p in g.model.metadata_props if p.key not in g.metadata]
    del m.metadata_props[:]
    for key, value in props + list(g.metadata.items()):
        m.metadata_props.add(key=key, value=value)


def _value_infos(g) -> list:
    alive = {o for node in g.nodes for o in node.output}
    return [vi for name, vi in g.value_info.items()
            if name in alive and name not in g.output_names]


def _mostly_kept(g, kept: dict) -> bool:
    total = dropped = 0
    for t in g.model.graph.initializer:
        size = tensor_bytes(t)
        total += size
        if kept.get(t.name) is not t:
            dropped += size
    return 4 * dropped <= total


def _rewrite_source(g, kept: dict) -> ModelProto:
    m = g.model
    _write_header(g, m)
    graph = m.graph
    graph.name = g.name
    for i in reversed(range(len(graph.initializer))):
        if kept.get(graph.initializer[i].name) is not graph.initializer[i]:
            del graph.initializer[i]
    present = {t.name for t in graph.initializer}
    graph.initializer.extend(t for name, t in kept.items() if name not in present)
    for field, items in ((graph.node, g.nodes), (graph.input, g.inputs),
                         (graph.output, g.outputs), (graph.value_info, _value_infos(g))):
        n = len(field)
        field.extend(items)  # copies (some items are field's own elements) ...
        del field[:n]        # ... then the old elements go
    return m
