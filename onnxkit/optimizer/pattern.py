"""Declarative rewrites: a pattern, a check that says why not, and a rewrite.

    def pattern(op, x, w):                       # parameters after ``op`` are variables
        return op.Relu(op.Conv(x, w, _allow_other_inputs=True, _name="conv"))

    def check(g, x, w, conv):                    # None: go ahead; a string: the reason not to
        return None if g.is_constant(w) else "W is not a constant"

    def rewrite(op, x, w, conv):                 # build the replacement; return its output
        return op.FusedConv(*conv.input, activation="Relu", _domain="onnxkit")

    RULE = RewriteRule("Conv+Relu", pattern, rewrite, check)
    PASS = RulePass("activation_fusion", (RULE,))

Matching starts from each node of the graph (the pattern's output node) and walks the
inputs: a variable binds any value (the same variable must bind the same value twice),
a Python number matches a constant whose elements all equal it, a nested ``op.X(...)``
matches the node producing that value. ``Add`` and ``Mul`` match either input order.
Attributes given in the pattern must be equal (an absent attribute takes the schema's
default); a callable attribute is a predicate. Every matched node but the last must have
no reader outside the match, and the check sees all bindings: variables as value names,
``_name``'d pattern nodes as the matched ``NodeProto``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np
from onnx import NodeProto

from onnxkit.ops.registry import normalize_domain
from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Edit, Graph
from onnxkit.optimizer.nodes import attr, make_node, schema_default

COMMUTATIVE = frozenset({"Add", "Mul"})


# --- the pattern side ------------------------------------------------------------------

@dataclass(eq=False)
class Var:
    name: str


@dataclass(eq=False)
class Literal:
    value: float


@dataclass(eq=False)
class PNode:
    op_type: str
    domain: str
    inputs: list
    attrs: dict
    name: str | None
    allow_other_inputs: bool


class _PatternBuilder:
    def __getattr__(self, op_type: str) -> Callable:
        def build(*inputs, _domain: str = "", _name: str | None = None,
                  _allow_other_inputs: bool = False, **attrs):
            ins = [i if isinstance(i, (Var, PNode)) else Literal(float(i)) for i in inputs]
            return PNode(op_type, normalize_domain(_domain), ins, attrs, _name, _allow_other_inputs)
        return build


def trace_pattern(fn: Callable, variables=None) -> tuple[PNode, list[str]]:
    """Call ``fn(op, *vars)`` (or ``fn(op, **vars)`` for the given names) to get the graph."""
    if variables is None:
        names = list(inspect.signature(fn).parameters)[1:]
        root = fn(_PatternBuilder(), *(Var(n) for n in names))
    else:
        names = list(variables)
        root = fn(_PatternBuilder(), **{n: Var(n) for n in names})
    if not isinstance(root, PNode):
        raise TypeError(f"pattern {fn.__name__} must return an op.X(...) node")
    return root, names


# --- matching --------------------------------------------------------------------------

class _Matcher:
    def __init__(self, g: Graph):
        self.g = g

    def node(self, pn: PNode, node: NodeProto, b: dict) -> Iterator[dict]:
        if node.op_type != pn.op_type or normalize_domain(node.domain) != pn.domain:
            return
        already = b["#nodes"].get(id(pn))
        if already is not None:
            if already is node:
                yield b
            return
        if any(m is node for m in b["#nodes"].values()):
            return
        n_in = len(node.input)
        if n_in < len(pn.inputs) or (n_in > len(pn.inputs) and not pn.allow_other_inputs and
                                     any(node.input[len(pn.inputs):])):
            return
        if not self._attrs_match(pn, node):
            return
        b = dict(b, **{"#nodes": {**b["#nodes"], id(pn): node}})
        if pn.name:
            b[pn.name] = node
        orders = [list(node.input[:len(pn.inputs)])]
        if pn.op_type in COMMUTATIVE and len(pn.inputs) == 2 and orders[0][0] != orders[0][1]:
            orders.append(orders[0][::-1])
        for values in orders:
            yield from self.inputs(pn.inputs, values, b)

    def inputs(self, pats: list, values: list[str], b: dict) -> Iterator[dict]:
        if not pats:
            yield b
            return
        for b2 in self.value(pats[0], values[0], b):
            yield from self.inputs(pats[1:], values[1:], b2)

    def value(self, pat, value: str, b: dict) -> Iterator[dict]:
        if not value:
            return
        if isinstance(pat, Var):
            bound = b.get(pat.name)
            if bound is None:
                yield dict(b, **{pat.name: value})
            elif bound == value:
                yield b
        elif isinstance(pat, Literal):
            arr = self.g.constant(value)
            if arr is not None and arr.size and arr.dtype.kind in "fiub" and np.allclose(
                    arr.astype(np.float64), pat.value, rtol=1e-6, atol=0.0):
                yield b
        else:
            node = self.g.producer(value)
            if node is not None and node.output[0] == value:
                yield from self.node(pat, node, b)

    def _attrs_match(self, pn: PNode, node: NodeProto) -> bool:
        opset = self.g.opsets.get(pn.domain, 0)
        for name, want in pn.attrs.items():
            have = attr(node, name)
            if have is None:
                have = schema_default(node, name, opset)
            if callable(want):
                if not want(have):
                    return False
            elif have != want:
                return False
        return True


@dataclass
class Match:
    root: NodeProto
    nodes: list[NodeProto]
    bindings: dict  # variable -> value name, _name -> NodeProto


def find_matches(g: Graph, root_pattern: PNode, node: NodeProto) -> Iterator[Match]:
    for b in _Matcher(g).node(root_pattern, node, {"#nodes": {}}):
        nodes = list(b.pop("#nodes").values())
        yield Match(node, nodes, b)


def private_values_reason(g: Graph, match: Match) -> str | None:
    """Why the match cannot be removed: an inner value read outside it (or a graph output)."""
    inside = {id(n) for n in match.nodes}
    outputs = g.output_names
    for n in match.nodes:
        for i, o in enumerate(n.output):
            if not o:
                continue
            if n is match.root and i == 0:
                continue
            if o in outputs:
                return f"{o!r} (of {n.op_type} {n.name!r}) is a graph output"
            readers = [c for c in g.consumers(o) if id(c) not in inside]
            if readers:
                return (f"{o!r} (of {n.op_type} {n.name!r}) is also read by "
                        f"{readers[0].op_type} {readers[0].name!r}")
    return None


# --- the rewrite side ------------------------------------------------------------------

class RewriteBuilder:
    """``op.X(*inputs, _domain=..., _outputs=n, **attrs)`` adds a node, returns its output(s);
    ``op.constant(array)`` adds an initializer. ``op.graph`` reads the graph."""

    def __init__(self, g: Graph, base: str):
        self.graph = g
        self.base = base.split(":")[0]
        self.nodes: list[NodeProto] = []

    def constant(self, array, base: str = "const") -> str:
        return self.graph.add_initializer(f"{self.base}:{base}", np.asarray(array))

    def __getattr__(self, op_type: str) -> Callable:
        if op_type.startswith("_"):
            raise AttributeError(op_type)

        def build(*inputs, _domain: str = "", _outputs: int = 1, **attrs):
            domain = normalize_domain(_domain)
            if domain not in self.graph.opsets:
                self.graph.opsets[domain] = 1
            name = self.graph.node_name(f"{self.base}:{op_type}")
            outs = [self.graph.value_name(f"{name}_out{i}" if _outputs > 1 else f"{name}_out")
                    for i in range(_outputs)]
            self.nodes.append(make_node(op_type, [i or "" for i in inputs], outs, name, domain, **attrs))
            return outs[0] if _outputs == 1 else tuple(outs)
        return build


@dataclass
class RewriteRule:
    """``pattern`` and ``rewrite`` as above; ``check(g, **bindings)`` returns a reason or None;
    ``detail(g, **bindings)`` an optional sentence for the report; ``variables`` names the
    pattern's variables when they are keyword parameters (default: its positional ones)."""

    name: str
    pattern: Callable
    rewrite: Callable
    check: Callable | None = None
    detail: Callable | None = None
    variables: tuple[str, ...] | None = None

    def __post_init__(self):
        self.root, self.variables = trace_pattern(self.pattern, self.variables)

    def attempt(self, g: Graph, node: NodeProto, claimed: set) -> tuple[Match | None, str | None]:
        """The first match at ``node`` that passes every check, or the last reason not."""
        reason = None
        for m in find_matches(g, self.root, node):
            if any(id(n) in claimed for n in m.nodes):
                continue
            reason = private_values_reason(g, m)
            if reason is None and self.check is not None:
                reason = self.check(g, **m.bindings)
            if reason is None:
                return m, None
        return None, reason

    def build(self, g: Graph, m: Match) -> Edit | str:
        """The edit that replaces the match, or a reason it cannot be done."""
        first = min(m.nodes, key=g.position)
        op = RewriteBuilder(g, first.name)
        result = self.rewrite(op, **m.bindings)
        new_nodes = op.nodes
        target = m.root.output[0]
        made = {o: n for n in new_nodes for o in n.output}
        if result in made:  # the new node takes over the root's output name
            for n in new_nodes:
                for i, name in enumerate(n.input):
                    if name == result:
                        n.input[i] = target
            out = made[result].output
            out[list(out).index(result)] = target
            return Edit(m.nodes, new_nodes, {}, m.root)
        if result == target:
            return "the rewrite gave back the pattern's own output"
        if target in g.output_names and (result in g.input_names or result in g.initializers
                                         or result in g.output_names or g.is_constant(result)):
            return f"{target!r} is a graph output and would become a copy of {result!r}"
        return Edit(m.nodes, new_nodes, {target: result}, m.root)


class RulePass(Pass):
    """Apply each rule wherever it matches, in one sweep from the last node to the first (so
    a pattern ending further down wins over one inside it); no node is used by two
    rewrites of one sweep (the fixed-point loop comes back for the rest)."""

    def __init__(self, name: str, rules, doc: str = ""):
        self.name = name
        self.rules = tuple(rules)
        self.__doc__ = doc or self.__doc__
        self._by_root: dict[tuple[str, str], list[RewriteRule]] = {}
        for rule in self.rules:
            self._by_root.setdefault((rule.root.op_type, rule.root.domain), []).append(rule)

    def run(self, g: Graph, ctx: PassContext) -> int:
        claimed: set[int] = set()
        edits: list[Edit] = []
        for node in reversed(g.nodes):  # from the outputs back: longer patterns win
            if id(node) in claimed:
                continue
            for rule in self._by_root.get((node.op_type, normalize_domain(node.domain)), ()):
                m, reason = rule.attempt(g, node, claimed)
                if m is None:
                    if reason is not None:
                        ctx.reject(self.name, rule.name, node, reason)
                    continue
                if not ctx.may_rewrite():
                    g.apply(edits)
                    return len(edits)
                edit = rule.build(g, m)
                if isinstance(edit, str):
                    ctx.reject(self.name, rule.name, node, edit)
                    continue
                claimed.update(id(n) for n in m.nodes)
                edits.append(edit)
                detail = rule.detail(g, **m.bindings) if rule.detail is not None else ""
                ctx.record(self.name, rule.name, sorted(m.nodes, key=g.position), edit.insert, detail)
                break
        g.apply(edits)
        return len(edits)


def attrs_of(node: NodeProto, *names: str) -> dict:
    """The node's attributes (all, or just ``names``) as keyword arguments for ``op.X``."""
    out = {}
    for a in node.attribute:
        if not names or a.name in names:
            out[a.name] = attr(node, a.name)
    return out
