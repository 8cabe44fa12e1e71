"""What each node of a model means: its operator version under the model's opsets.

    node_versions(model):
        for each node (nested If / Loop / Scan bodies too, with their path):
            opset   = model.opset_import[node.domain]
            schema  = onnx.defs.get_schema(op_type, opset, domain)   # newest since_version <= opset
            since   = schema.since_version                         # the version the node means
            latest  = newest since_version onnx defines             # is there a newer definition?
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import onnx
from onnx import GraphProto, NodeProto

from onnxkit.loading import ModelLike, load
from onnxkit.ops.registry import normalize_domain, schema_since_version
from onnxkit.versioning.history import since_versions


@dataclass(frozen=True)
class NodeVersion:
    """One node and the operator version its model's opset selects."""

    path: str                 # "" for the main graph, "loop/body" for a Loop's body
    node: str                 # node name (or "<unnamed>")
    op_type: str
    domain: str               # "" is ai.onnx
    opset: int | None         # the opset the model imports for this domain
    since_version: int | None  # None: no onnx schema (model-local function, custom domain)
    latest: int | None        # the newest since_version onnx defines for the operator
    note: str = ""

    @property
    def qualified(self) -> str:
        version = "?" if self.since_version is None else self.since_version
        return f"{self.domain or 'ai.onnx'}::{self.op_type}-{version}"


def iter_nodes(graph: GraphProto, path: str = "") -> Iterator[tuple[str, NodeProto]]:
    """Every node of ``graph`` and of the graphs nested in its attributes, with a path."""
    for node in graph.node:
        yield path, node
        for attr in node.attribute:
            subgraphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
            for g in subgraphs:
                where = f"{node.name or node.op_type}/{attr.name}"
                yield from iter_nodes(g, f"{path}/{where}" if path else where)


def node_versions(model: ModelLike) -> list[NodeVersion]:
    proto = load(model)
    opsets = {normalize_domain(o.domain): int(o.version) for o in proto.opset_import}
    local = {(normalize_domain(f.domain), f.name) for f in proto.functions}
    rows = []
    for path, node in iter_nodes(proto.graph):
        domain = normalize_domain(node.domain)
        opset = opsets.get(domain)
        name = node.name or "<unnamed>"
        if (domain, node.op_type) in local:
            rows.append(NodeVersion(path, name, node.op_type, domain, opset, None, None,
                                    "model-local function"))
            continue
        if opset is None:
            rows.append(NodeVersion(path, name, node.op_type, domain, None, None, None,
                                    f"the model does not import domain {domain or 'ai.onnx'!r}"))
            continue
        since = schema_since_version(domain, node.op_type, opset)
        known = since_versions(node.op_type, domain)
        latest = known[-1] if known else None
        if since is None:
            note = (f"{node.op_type} appears in opset {known[0]}" if known else
                    "no onnx schema (custom operator)")
        elif latest != since:
            note = f"newer versions: {', '.join(str(v) for v in known if v > since)}"
        else:
            note = "latest"
        rows.append(NodeVersion(path, name, node.op_type, domain, opset, since, latest, note))
    return rows


def format_node_versions(rows: list[NodeVersion]) -> str:
    lines = [f"{'node':<16} {'operator':<22} {'opset':>5}  {'means':<26} note"]
    for r in rows:
        where = f"{r.path}/{r.node}" if r.path else r.node
        lines.append(f"{where:<16} {r.op_type:<22} {r.opset if r.opset is not None else '-':>5}  "
                     f"{r.qualified:<26} {r.note}")
    return "\n".join(lines)
