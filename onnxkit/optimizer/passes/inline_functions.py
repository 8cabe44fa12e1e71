"""A call of a model-local function (a FunctionProto in ``model.functions``) is replaced
by the function's body, so that the other passes see and fold its nodes.

    before:  y = local.gelu (x)                 # gelu (x) => (r) { c = Constant <...> ()
                                                #                   r = Mul (CastLike (c, x), x) }
    after:   call/c = Constant <...> ()
             y = Mul (CastLike (call/c, x), x)

The body's inputs read the call's inputs, its outputs become the call's outputs, every
other value and node gets a fresh name (prefixed by the call's), and attributes that
refer to the function's (``ref_attr_name``) take the call's value or the function's
default. Calls inside a body are inlined by the next iteration. Kept as calls: a function
that imports an opset at another version than the model does (its ops would change
meaning), one that calls itself (directly or not), and one whose full expansion would
exceed ``MAX_EXPANDED`` nodes.
The FunctionProtos themselves stay in the model. ONNX Script writes models this way;
onnxruntime inlines them when it loads a model.
"""

from __future__ import annotations

import onnx
from onnx import AttributeProto, FunctionProto, NodeProto

from onnxkit.ops.registry import normalize_domain
from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Edit, Graph
from onnxkit.optimizer.nodes import rename_reads, subgraphs


MAX_EXPANDED = 100_000  # nodes one call may expand to, nested calls included


def _key(domain: str, name: str, overload: str = "") -> tuple[str, str, str]:
    return normalize_domain(domain), name, overload


def _opset_conflict(g: Graph, f: FunctionProto) -> str | None:
    for o in f.opset_import:
        have = g.opsets.get(normalize_domain(o.domain))
        if have is not None and have != o.version:
            return (f"the function imports {o.domain or 'ai.onnx'} {o.version}, the model "
                    f"{have}")
    return None


def _expanded_sizes(functions: dict) -> dict:
    """Each function's node count with every nested local call expanded; None for a
    function that reaches itself, or whose expansion exceeds ``MAX_EXPANDED``."""
    sizes: dict = {}
    active: set = set()

    def size(key):
        if key in sizes:
            return sizes[key]
        if key in active:
            return None  # recursion
        active.add(key)
        total = 0
        for node in functions[key].node:
            inner = _key(node.domain, node.op_type, getattr(node, "overload", ""))
            n = size(inner) if inner in functions else 1
            total = None if n is None or total is None else total + n
        active.discard(key)
        sizes[key] = total if total is not None and total <= MAX_EXPANDED else None
        return sizes[key]

    for key in functions:
        size(key)
    return sizes


def _attributes(call: NodeProto, f: FunctionProto) -> dict[str, AttributeProto]:
    """The values of the function's attributes at this call: the call's, else defaults."""
    values = {a.name: a for a in f.attribute_proto}
    values.update({a.name: a for a in call.attribute})
    return values


def _bind_attributes(node: NodeProto, values: dict[str, AttributeProto]) -> None:
    """Replace ``ref_attr_name`` attributes (also inside subgraphs) by the bound values."""
    kept = []
    for a in node.attribute:
        if a.ref_attr_name:
            bound = values.get(a.ref_attr_name)
            if bound is None:
                continue  # neither given nor defaulted: the attribute is absent
            new = AttributeProto()
            new.CopyFrom(bound)
            new.name = a.name
            kept.append(new)
        else:
            kept.append(a)
    del node.attribute[:]
    node.attribute.extend(kept)
    for sub in subgraphs(node):
        for inner in sub.node:
            _bind_attributes(inner, values)


def inline_call(g: Graph, call: NodeProto, f: FunctionProto) -> list[NodeProto]:
    """The body of ``f`` as nodes of ``g`` that compute ``call``'s outputs."""
    renames = {formal: actual for formal, actual in zip(f.input, call.input)}
    renames.update({formal: "" for formal in list(f.input)[len(call.input):]})
    for formal, actual in zip(f.output, call.output):
        renames[formal] = actual
    for formal in list(f.output)[len(call.output):]:
        renames[formal] = ""
    values = _attributes(call, f)
    nodes = []
    for inner in f.node:
        node = NodeProto()
        node.CopyFrom(inner)
        node.name = g.node_name(f"{call.name}/{inner.name or inner.op_type}")
        for i, o in enumerate(node.output):
            if not o:
                continue
            if o not in renames:
                renames[o] = g.value_name(f"{call.name}/{o}")
            node.output[i] = renames[o]
        rename_reads(node, renames)
        _bind_attributes(node, values)
        nodes.append(node)
    return nodes


class InlineFunctions(Pass):
    """Replace calls of model-local functions by their bodies."""

    name = "inline_functions"

    def run(self, g: Graph, ctx: PassContext) -> int:
        functions = {_key(f.domain, f.name, getattr(f, "overload", "")): f for f in g.model.functions}
        if not functions:
            return 0
        sizes = _expanded_sizes(functions)
        edits = []
        for node in g.nodes:
            key = _key(node.domain, node.op_type, getattr(node, "overload", ""))
            f = functions.get(key)
            if f is None:
                continue
            reason = _opset_conflict(g, f)
            if reason is None and sizes[key] is None:
                reason = (f"the function calls itself or expands to over {MAX_EXPANDED} nodes")
            if reason is None and (len(node.input) > len(f.input) or len(node.output) > len(f.output)):
                reason = (f"the call has {len(node.input)} inputs and {len(node.output)} outputs, "
                          f"the function {len(f.input)} and {len(f.output)}")
            if reason is not None:
                ctx.reject(self.name, "inline", node, reason)
                continue
            if not ctx.may_rewrite():
                break
            body = inline_call(g, node, f)
            for o in f.opset_import:
                g.opsets.setdefault(normalize_domain(o.domain), o.version)
            edits.append(Edit([node], body, {}, node))
            ctx.record(self.name, "inline", [node], body,
                       f"{f.domain}.{f.name}: {len(body)} node(s)")
        g.apply(edits)
        return len(edits)


PASS = InlineFunctions()
