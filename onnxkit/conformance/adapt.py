"""Adapt a case a runtime refused only for its version: lower the IR version and the opset.

A runtime may refuse a model for the numbers it carries, not for what it computes
(onnxruntime 1.31 reads IR version 13 at most; onnx 1.23 writes 14). ``adapt(model)``
returns the same computation stamped as old as it can honestly be:

1. each domain's opset is lowered to the newest ``since_version`` among the operators the
   model uses from it (nodes of every subgraph and local function included): every node
   then resolves to the very same operator version, so no semantics change. The default
   domain goes through onnx's version converter (``convert_version``), which must leave the
   model equivalent; where the converter refuses, the import is rewritten directly (safe
   for the reason above);
2. the IR version is lowered to the oldest that knows those opsets and every element type
   the model uses (float8 needs IR 9, int4 10, float4 11, float8e8m0 12, int2 13, float6 14).

``is_version_refusal(message)`` tells a refusal of the numbers from any other error.
"""

from __future__ import annotations

import re

import onnx
from onnx import ModelProto, helper

# what runtimes say when they refuse a model's IR or opset version
_REFUSAL = re.compile(
    r"ir[ _]?version|max supported ir|unsupported model ir|opset (?:version )?\d+ is (?:not|under)"
    r"|unsupported opset|opset_import|onnx opset \d+ is not supported|opset version",
    re.IGNORECASE)

# element types newer than IR 8, and the IR version that introduced each
_TYPE_IR = {17: 9, 18: 9, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11, 24: 12, 25: 13, 26: 13, 27: 14, 28: 14}


def is_version_refusal(message: str) -> bool:
    """True when an error message says the model's IR or opset version is refused."""
    return bool(_REFUSAL.search(message or ""))


def _graphs(model: ModelProto):
    stack = [model.graph]
    stack += [f for f in model.functions]
    while stack:
        g = stack.pop()
        yield g
        for node in g.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    stack.append(attr.g)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    stack.extend(attr.graphs)


def _opsets_needed(model: ModelProto) -> dict[str, int]:
    """domain -> the newest since_version among the operators used from it."""
    imported = {o.domain: o.version for o in model.opset_import}
    local = {(f.domain, f.name) for f in model.functions}
    need: dict[str, int] = {}
    for g in _graphs(model):
        for node in g.node:
            domain = "" if node.domain == "ai.onnx" else node.domain
            if (node.domain, node.op_type) in local or domain not in imported:
                need[domain] = imported.get(domain, need.get(domain, 1))
                continue
            try:
                since = onnx.defs.get_schema(node.op_type, imported[domain], domain).since_version
            except onnx.defs.SchemaError:
                since = imported[domain]  # unknown to onnx: keep the version as it is
            need[domain] = max(need.get(domain, 1), since)
    return {d: need.get(d, v if d not in ("", "ai.onnx.ml") else 1) for d, v in imported.items()}


def _types_used(model: ModelProto) -> set[int]:
    types = set()

    def visit_type(t):
        for field in ("tensor_type", "sparse_tensor_type"):
            if t.HasField(field):
                types.add(getattr(t, field).elem_type)
        if t.HasField("sequence_type"):
            visit_type(t.sequence_type.elem_type)
        if t.HasField("optional_type"):
            visit_type(t.optional_type.elem_type)
        if t.HasField("map_type"):
            types.add(t.map_type.key_type)
            visit_type(t.map_type.value_type)

    for g in _graphs(model):
        for vi in list(g.input) + list(g.output) + list(g.value_info):
            visit_type(vi.type)
        types.update(t.data_type for t in g.initializer)
        for node in g.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.TENSOR:
                    types.add(attr.t.data_type)
                elif attr.type == onnx.AttributeProto.INT and attr.name in ("to", "dtype", "output_dtype"):
                    types.add(attr.i)
    return types


def ir_needed(model: ModelProto, opsets: dict[str, int]) -> int:
    """The oldest IR version that knows ``opsets`` and every element type the model uses."""
    ids = [helper.make_opsetid(d, v) for d, v in opsets.items()]
    ir = helper.find_min_ir_version_for(ids, ignore_unknown=True)
    if model.functions:
        ir = max(ir, 8)  # model-local functions arrived with IR 8
    for t in _types_used(model):
        ir = max(ir, _TYPE_IR.get(t, 3))
    return ir


def _previous_opset(model: ModelProto) -> int | None:
    """The default-domain opset just before the newest operator version the model uses."""
    imported = {o.domain: o.version for o in model.opset_import}
    if "" not in imported:
        return None
    newest = _opsets_needed(model)[""]
    older = []
    for g in _graphs(model):
        for node in g.node:
            if node.domain in ("", "ai.onnx"):
                try:
                    older.append(onnx.defs.get_schema(node.op_type, newest - 1, "").since_version)
                except onnx.defs.SchemaError:
                    return None  # the operator did not exist before: nothing older to say it in
    return max(older) if older else None


def adapt(model: ModelProto) -> tuple[ModelProto | None, str]:
    """(the model with IR and opsets lowered, what was changed) or (None, why not).

    Where the model already uses nothing older than it says (step 1 changes nothing), onnx's
    version converter is asked to say it one operator version older; it has adapters only
    for changes that keep the semantics and refuses the others, and the result must pass
    the checker."""
    out, note = _lower(model)
    if out is not None:
        return out, note
    target = _previous_opset(model)
    if target is None:
        return None, note
    try:
        older = onnx.version_converter.convert_version(model, target)
        onnx.checker.check_model(older)
    except Exception as exc:  # the converter knows no semantics-keeping way down
        return None, f"{note}; onnx's version converter cannot go to opset {target}: {str(exc)[:200]}"
    lowered, more = _lower(older)
    imported = {o.domain: o.version for o in model.opset_import}
    step = f"opset {imported['']} -> {target} (onnx version converter, one operator version down)"
    if lowered is None:
        older.ir_version = model.ir_version
        return older, step
    lowered.ir_version = min(lowered.ir_version, model.ir_version)
    return lowered, f"{step}; {more}"


def _lower(model: ModelProto) -> tuple[ModelProto | None, str]:
    imported = {o.domain: o.version for o in model.opset_import}
    opsets = _opsets_needed(model)
    out = ModelProto()
    out.CopyFrom(model)
    notes = []
    if opsets != imported:
        target = opsets.get("", imported.get(""))
        if "" in imported and target != imported[""]:
            try:
                out = onnx.version_converter.convert_version(out, target)
                notes.append(f"opset {imported['']} -> {target} (onnx version converter)")
            except Exception:  # the converter refuses some graphs: the rewrite is still exact
                notes.append(f"opset {imported['']} -> {target} (import rewritten)")
        for o in out.opset_import:
            if o.domain in opsets and o.domain != "":
                if o.version != opsets[o.domain]:
                    notes.append(f"{o.domain} opset {o.version} -> {opsets[o.domain]}")
                o.version = opsets[o.domain]
            elif o.domain == "":
                o.version = target
    ir = ir_needed(out, {o.domain: o.version for o in out.opset_import})
    if ir < model.ir_version:
        notes.append(f"IR version {model.ir_version} -> {ir}")
        out.ir_version = ir
    else:
        out.ir_version = model.ir_version
    if not notes:
        return None, (f"nothing to lower: IR version {model.ir_version} and opsets "
                      f"{sorted(imported.items())} are already the oldest this model allows")
    return out, "; ".join(notes)


__all__ = ["adapt", "is_version_refusal", "ir_needed"]
