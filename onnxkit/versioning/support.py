"""Which operator versions an onnxkit executor implements, against what a model needs.

    support_table(model, executor="reference"):
        for each distinct (domain, op_type) of the model (nested bodies too):
            needed      = since_version the model's opset selects (onnx's schema)
            implemented = versions registered in the executor's registries
            ok          = needed in implemented       (custom domains: any version <= opset)

    coverage(executor="reference", domain=""):
        for each operator onnx defines: every since_version, and which are implemented
"""

from __future__ import annotations

from dataclasses import dataclass

from onnxkit.html import terminal_text
from onnxkit.loading import ModelLike, load
from onnxkit.ops.registry import normalize_domain, schema_since_version
from onnxkit.runtime.executors import get_executor
from onnxkit.versioning.history import operator_schemas
from onnxkit.versioning.resolve import iter_nodes


@dataclass(frozen=True)
class Support:
    """One operator of a model: the version it needs and what the executor has."""

    op_type: str
    domain: str
    opset: int | None
    needed: int | None
    implemented: tuple[int, ...]
    ok: bool
    note: str = ""


def implemented_versions(op_type: str, domain: str = "", executor: str = "reference") -> list[int]:
    """The since_versions the executor's registries implement for the operator."""
    registries = get_executor(executor).registries
    return sorted({v for r in registries for v in r.versions(normalize_domain(domain), op_type)})


def support_table(model: ModelLike, executor: str = "reference") -> list[Support]:
    proto = load(model)
    opsets = {normalize_domain(o.domain): int(o.version) for o in proto.opset_import}
    local = {(normalize_domain(f.domain), f.name) for f in proto.functions}
    seen, rows = set(), []
    for _, node in iter_nodes(proto.graph):
        key = (normalize_domain(node.domain), node.op_type)
        if key in seen:
            continue
        seen.add(key)
        domain, op_type = key
        opset = opsets.get(domain)
        have = tuple(implemented_versions(op_type, domain, executor))
        if key in local:
            rows.append(Support(op_type, domain, opset, None, have, True, "model-local function"))
            continue
        if opset is None:
            rows.append(Support(op_type, domain, None, None, have, False, "domain not imported"))
            continue
        needed = schema_since_version(domain, op_type, opset)
        if needed is None:
            fitting = [v for v in have if v <= opset]
            note = (f"no onnx schema: uses the newest kernel not above opset {opset}" if fitting else
                    f"no onnx schema and no onnxkit kernel at or below opset {opset}")
            rows.append(Support(op_type, domain, opset, None, have, bool(fitting), note))
            continue
        ok = needed in have
        note = "" if ok else (f"needs version {needed}; implemented: "
                              f"{', '.join(map(str, have)) if have else 'none'}")
        rows.append(Support(op_type, domain, opset, needed, have, ok, note))
    return sorted(rows, key=lambda r: (r.domain, r.op_type))


def format_support(rows: list[Support]) -> str:
    names = [terminal_text(f"{r.domain}::{r.op_type}" if r.domain else r.op_type) for r in rows]  # model strings
    haves = [", ".join(map(str, r.implemented)) or "-" for r in rows]
    w_name = max([len("operator")] + [len(n) for n in names])
    w_have = max([len("implemented")] + [len(h) for h in haves])
    lines = [f"{'operator':<{w_name}} {'opset':>5} {'needs':>5}  {'implemented':<{w_have}}  ok"]
    for r, name, have in zip(rows, names, haves):
        needed = "-" if r.needed is None else str(r.needed)
        opset = "-" if r.opset is None else str(r.opset)
        lines.append(f"{name:<{w_name}} {opset:>5} {needed:>5}  {have:<{w_have}}  "
                     f"{'yes' if r.ok else 'NO'}" + (f"  ({r.note})" if r.note and not r.ok else ""))
    return "\n".join(lines)


@dataclass(frozen=True)
class Coverage:
    """One operator onnx defines: its versions, and those the executor implements."""

    op_type: str
    domain: str
    versions: tuple[int, ...]
    implemented: tuple[int, ...]
    deprecated: bool

    @property
    def missing(self) -> tuple[int, ...]:
        return tuple(v for v in self.versions if v not in self.implemented)


def coverage(executor: str = "reference", domain: str = "") -> list[Coverage]:
    """Every operator of ``domain`` in onnx, with the versions the executor implements."""
    domain = normalize_domain(domain)
    registries = get_executor(executor).registries
    rows = []
    for (d, op_type), schemas in sorted(operator_schemas().items()):
        if d != domain:
            continue
        have = {v for r in registries for v in r.versions(d, op_type)}
        versions = tuple(s.since_version for s in schemas)
        rows.append(Coverage(op_type, d, versions, tuple(v for v in versions if v in have),
                             bool(schemas[-1].deprecated)))
    return rows
