"""Repeated blocks of a big graph (a transformer's layers, ResNet's blocks), to fold and unfold.

    blocks = find_blocks(gd)                  # scopes whose structure occurs twice or more
    shown = fold(gd, blocks, opened=set())    # each closed block drawn as one box

A node's scope is the path its name (or the exporter's metadata) gives it:
``/layers/layers.3/attn/MatMul`` is in ``layers``, ``layers/layers.3``, ``layers/layers.3/attn``;
PyTorch's dynamo exporter writes the same path into ``pkg.torch.onnx.name_scopes``. A scope
is a *block* when it holds at least ``min_nodes`` nodes and its structure (op types and how
its nodes feed each other, shapes and names left out) is also the structure of another scope,
or when its data-path ops (``data_nodes``) are those of such a block. A graph whose names
give no scopes gets them from repeated op sequences (``repeats.py``). Blocks nest: opening
one shows the blocks inside it folded. Ties are broken by graph order.
"""

from __future__ import annotations

import ast
import hashlib
from collections import Counter
from dataclasses import dataclass, field

from onnxkit.widgets.graphdata import Box, Edge, GraphData
from onnxkit.widgets.repeats import structural_scopes

SCOPE_KEY = "pkg.torch.onnx.name_scopes"
PREFIX = "block:"


@dataclass
class Block:
    """A scope drawn as one box while closed."""

    id: str  # "block:" + scope
    scope: str  # "layers/layers.3"
    members: list[str]  # node box ids, in graph order
    signature: str  # structural hash, equal for blocks built alike ("lone:" + scope: none is)
    alike: int = 1  # how many blocks share the signature
    ops: Counter = field(default_factory=Counter)
    data_ops: Counter = field(default_factory=Counter)  # ops on the data path (its box shows these)

    @property
    def name(self) -> str:
        return self.scope.rsplit("/", 1)[-1]

    @property
    def parent(self) -> str:
        return self.scope.rsplit("/", 1)[0] if "/" in self.scope else ""


def node_scopes(box: Box, cache: dict | None = None) -> list[str]:
    """The scopes a node box is in, outermost first (``[]`` when its name gives none).

    ``cache``: a dict kept across the nodes of one graph; nodes of one module share their
    scope path, which is then split once."""
    cache = {} if cache is None else cache
    node = box.node
    for prop in node.metadata_props:
        if prop.key == SCOPE_KEY:
            # ['', 'layers', 'layers.3', 'layers.3.attn', 'matmul_7']: the last is the node
            key = ("meta", prop.value.rsplit(",", 1)[0])
            if key not in cache:
                cache[key] = _meta_scopes(prop.value)
            return cache[key]
    name = node.name
    key = ("/", name.rsplit("/", 1)[0]) if "/" in name else (".", name.rsplit(".", 1)[0])
    if key not in cache:
        cache[key] = _name_scopes(name)
    return cache[key]


def _meta_scopes(value: str) -> list[str]:
    head = value.rsplit(",", 1)[0]
    try:  # without its last item, which may hold a comma: then the head does not parse
        parts = [p for p in ast.literal_eval(head + "]") if p] if head != value else []
    except (ValueError, SyntaxError, TypeError):
        try:
            parts = [p for p in ast.literal_eval(value)[:-1] if p]
        except (ValueError, SyntaxError, TypeError):
            parts = []
    if not all(isinstance(p, str) for p in parts):
        parts = []
    return ["/".join(parts[: k + 1]) for k in range(len(parts))]


def _name_scopes(name: str) -> list[str]:
    if "/" in name:
        parts = [p for p in name.split("/")[:-1] if p]
        return ["/".join(parts[: k + 1]) for k in range(len(parts))]
    if "." in name:  # "layers.0.attn.q_proj": every dotted prefix
        parts = name.split(".")[:-1]
        return ["/".join(".".join(parts[: j + 1]) for j in range(k + 1)) for k in range(len(parts))]
    return []


def signature(members: list[Box], producer: dict[str, tuple[str, int]],
              shapes: dict[str, tuple]) -> str:
    """A hash of the nodes' op types and of which member output feeds which input.

    ``shapes``: per node box id, (``domain:op``, input names, ``[attribute names]outputs``).
    """
    local = {b.id: k for k, b in enumerate(members)}
    outside: dict[str, int] = {}
    parts = []
    for box in members:
        head, inputs, tail = shapes[box.id]
        ins = []
        for name in inputs:
            if not name:
                ins.append("-")
                continue
            src = producer.get(name)
            k = local.get(src[0]) if src is not None else None
            if k is not None:
                ins.append(f"n{k}.{src[1]}")
            else:
                ins.append(f"x{outside.setdefault(name, len(outside))}")
        parts.append(f"{head}({' '.join(ins)}){tail}")
    return hashlib.sha1(";".join(parts).encode()).hexdigest()[:12]


def find_blocks(gd: GraphData, min_nodes: int = 3, data: set[str] | None = None) -> list[Block]:
    """The repeated blocks of the main graph, outer before inner, then in graph order.
    ``data``: ``data_nodes(gd)``, when the caller keeps it."""
    nodes = gd.nodes
    cache: dict = {}
    named = {box.id: node_scopes(box, cache) for box in nodes}
    if not any(named.values()):  # no names to go by: repeated op sequences instead
        named = structural_scopes([b.label for b in nodes], [b.id for b in nodes])
    scopes: dict[str, list[Box]] = {}
    for box in nodes:
        for scope in named.get(box.id, ()):
            scopes.setdefault(scope, []).append(box)
    by_value: dict[str, tuple[str, int]] = {}
    shapes: dict[str, tuple] = {}
    for box in nodes:
        node = box.node
        for port, out in enumerate(box.outputs):
            if out and out not in by_value:
                by_value[out] = (box.id, port)
        attrs = ",".join(sorted(a.name for a in node.attribute)) if node.attribute else ""
        shapes[box.id] = (f"{node.domain}:{node.op_type}", box.inputs, f"[{attrs}]{len(box.outputs)}")
    seen_sets: dict[tuple, str] = {}  # a member set reached by several scope names: the outermost
    picked = []
    for scope, members in scopes.items():
        if len(members) < min_nodes or len(members) == len(nodes):
            continue
        key = tuple(b.id for b in members)
        if key in seen_sets:
            continue
        seen_sets[key] = scope
        picked.append((scope, members, key, tuple(b.label for b in members)))
    # equal structures have equal op sequences: a scope whose sequence no other scope has
    # needs no hash of its wiring (a large share of the nodes, in the outer scopes)
    sequences = Counter(labels for _, _, _, labels in picked)
    candidates = [Block(PREFIX + scope, scope, list(key),
                        signature(members, by_value, shapes) if sequences[labels] > 1 else f"lone:{scope}",
                        ops=Counter(labels))
                  for scope, members, key, labels in picked]
    counts = Counter(b.signature for b in candidates)
    # a scope whose data ops are those of a repeated block is one more of them, though an
    # exporter wrote its shape arithmetic differently (the first layer often reuses earlier shapes)
    data = data_nodes(gd) if data is None else data
    loose = {b.scope: tuple(sorted(Counter(m.label for m in scopes[b.scope] if m.id in data).items()))
             for b in candidates}
    known = {loose[b.scope] for b in candidates if counts[b.signature] >= 2}
    blocks = [b for b in candidates
              if counts[b.signature] >= 2 or (loose[b.scope] and loose[b.scope] in known)]
    alike = Counter(loose[b.scope] for b in blocks)
    for b in blocks:
        b.alike = max(counts[b.signature], alike[loose[b.scope]])
        b.data_ops = Counter(dict(loose[b.scope]))
    order = {box.id: k for k, box in enumerate(nodes)}
    blocks.sort(key=lambda b: (b.scope.count("/"), order[b.members[0]]))
    return blocks


def data_nodes(gd: GraphData) -> set[str]:
    """Ids of the nodes on the data path: fed by a graph input through any nodes but Shape
    and Size. Constants, weight copies and shape arithmetic are off it."""
    data_values = {b.label for b in gd.boxes if b.kind in ("input", "outer")}
    out = set()
    for box in gd.nodes:
        if any(i in data_values for i in box.inputs) and box.node.op_type not in ("Shape", "Size"):
            out.add(box.id)
            data_values.update(o for o in box.outputs if o)
    return out


def owners(blocks: list[Block], opened: set[str]) -> dict[str, Block]:
    """Node box id -> the outermost closed block that hides it (only for hidden nodes).

    A block inside a closed block is hidden with it; a block is shown closed only when
    every block around it is open.
    """
    out: dict[str, Block] = {}
    for b in sorted(blocks, key=lambda b: b.scope.count("/")):  # outer first
        if b.id in opened:
            continue
        for m in b.members:
            out.setdefault(m, b)
    return out


def fold(gd: GraphData, blocks: list[Block], opened: set[str],
         data: set[str] | None = None) -> tuple[GraphData, dict[str, Block]]:
    """``gd`` with every closed (outermost) block drawn as one box of kind ``block``, and
    which block hides each hidden node box.

    A node off the data path whose readers are all in one closed block (the Constants and
    shape arithmetic an exporter writes outside the layer that uses them) folds into it; a
    Constant read only inside several closed blocks is not drawn. Values passed between a
    block and another box are drawn as one edge, a light one when only shapes pass there.
    ``data``: ``data_nodes(gd)``, when the caller keeps it.
    """
    hidden = owners(blocks, opened)
    if not hidden:
        return gd, hidden
    data = data_nodes(gd) if data is None else data
    readers: dict[str, set[str]] = {}
    for e in gd.edges:
        readers.setdefault(e.source, set()).add(e.target)
    for box in reversed(gd.nodes):  # readers come later in a valid graph
        if box.id in hidden or box.id in data or box.id not in readers:
            continue
        owner_ids = {hidden[t].id if t in hidden else t for t in readers[box.id]}
        if len(owner_ids) == 1:
            target = next(iter(readers[box.id]))
            if target in hidden:
                hidden[box.id] = hidden[target]
    dropped = {b.id for b in gd.nodes if b.id not in hidden and b.id not in data
               and not any(b.inputs) and b.id in readers
               and all(t in hidden for t in readers[b.id])}
    boxes: list[Box] = []
    placed: set[str] = set()
    for box in gd.boxes:
        owner = hidden.get(box.id)
        if box.id in dropped:
            continue
        if owner is None:
            boxes.append(box)
        elif owner.id not in placed:
            placed.add(owner.id)
            boxes.append(block_box(owner))
    def ends(e: Edge) -> tuple:
        src = hidden[e.source].id if e.source in hidden else e.source
        dst = hidden[e.target].id if e.target in hidden else e.target
        # between a block and another box one edge stands for every value passed
        return (src, dst) if src != e.source or dst != e.target else (src, dst, e.value)

    kept = [e for e in gd.edges if e.source not in dropped]
    carries_data = {ends(e) for e in kept if e.source in data or e.source not in hidden}
    edges: list[Edge] = []
    seen: set[tuple] = set()
    ports: dict[str, dict[str, int]] = {}
    for e in kept:
        key = ends(e)
        src, dst = key[0], key[1]
        if src == dst or key in seen:
            continue
        seen.add(key)
        port = e.port
        if src != e.source:  # a block's outputs: one port per distinct value leaving it
            values = ports.setdefault(src, {})
            port = values.setdefault(e.value, len(values))
        edges.append(Edge(src, dst, e.value, e.type, e.implicit, port, faint=key not in carries_data))
    return GraphData(gd.name, gd.id_prefix, gd.trace_path, boxes, edges, gd.types), hidden


def block_box(block: Block) -> Box:
    alike = f", {block.alike} alike" if block.alike > 1 else ""
    box = Box(block.id, "block", block.name, f"{len(block.members)} nodes{alike}",
              members=len(block.members))
    shown = block.data_ops or block.ops  # what it computes, not its shape arithmetic
    box.params = [(op, f"\u00d7{n}") for op, n in shown.most_common(3)]
    return box


def search(gd: GraphData, query: str) -> list[Box]:
    """Node boxes whose op type or node name contains ``query`` (case-insensitive)."""
    q = query.strip().lower()
    if not q:
        return []
    return [b for b in gd.nodes if q in b.label.lower() or q in b.node.name.lower()]
