"""What an optimization did: per pass, each rewrite with the nodes that went in and out.

    report = optimize(model, 2)[1]
    print(report)               # a table per pass, then the rewrites
    report.to_markdown()        # the same as Markdown
    report.to_dict()            # plain data (JSON-ready) for widgets: draw it as a diff
    report.diff()               # node names removed / added / kept across the whole run

Node names are kept traceable: a rewrite lists the names of the nodes it removed and of the
nodes it added (a fused node is named after the node whose output it keeps).

Names, op types, domains and notes come from the model: the text forms pass them through
``terminal_text`` and the Markdown form through ``markdown_cell`` (``onnxkit.html``), so no
markup, link, control byte or bidi override gets through.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from onnx import NodeProto

from onnxkit.html import markdown_cell, terminal_text


PLAN_PASSES: tuple = ()  # passes that plan and do not rewrite (none since level 3's went)


@dataclass(frozen=True)
class NodeRef:
    name: str
    op_type: str
    domain: str = ""

    @classmethod
    def of(cls, node: NodeProto) -> "NodeRef":
        return cls(node.name, node.op_type, "" if node.domain in ("", "ai.onnx") else node.domain)

    @property
    def qualified_op(self) -> str:
        return f"{self.domain}::{self.op_type}" if self.domain else self.op_type

    def __str__(self) -> str:
        return terminal_text(f"{self.name} ({self.qualified_op})")


@dataclass
class Rewrite:
    index: int  # order in the whole run, from 0
    pass_name: str
    rule: str
    iteration: int
    removed: tuple[NodeRef, ...]
    added: tuple[NodeRef, ...]
    detail: str = ""

    def __str__(self) -> str:
        out = ", ".join(map(str, self.added)) or "nothing"
        text = f"[{self.pass_name}/{self.rule}] {', '.join(map(str, self.removed)) or 'nothing'} -> {out}"
        return terminal_text(f"{text}: {self.detail}" if self.detail else text)


@dataclass
class Rejection:
    pass_name: str
    rule: str
    node: NodeRef
    reason: str

    def __str__(self) -> str:
        return terminal_text(f"[{self.pass_name}/{self.rule}] not at {self.node}: {self.reason}")


@dataclass
class PassRun:
    pass_name: str
    iteration: int
    nodes_before: int
    nodes_after: int
    rewrites: int
    seconds: float


@dataclass
class Report:
    level: int
    passes: list[str] = field(default_factory=list)
    nodes_before: int = 0
    nodes_after: int = 0
    ops_before: dict = field(default_factory=dict)
    ops_after: dict = field(default_factory=dict)
    runs: list[PassRun] = field(default_factory=list)
    rewrites: list[Rewrite] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    plans: dict = field(default_factory=dict)  # a planning pass's summary (none at present)
    iterations: int = 0
    seconds: float = 0.0
    stopped_early: bool = False  # a rewrite budget (bisect) ended the run

    # --- per pass ---------------------------------------------------------------------

    def by_pass(self) -> list[dict]:
        """One row per pass: rewrites, nodes removed and added, by rule."""
        rows = {name: {"pass": name, "rewrites": 0, "removed": 0, "added": 0, "rules": Counter(),
                       "seconds": 0.0} for name in self.passes}
        for run in self.runs:
            rows.setdefault(run.pass_name, {"pass": run.pass_name, "rewrites": 0, "removed": 0,
                                            "added": 0, "rules": Counter(), "seconds": 0.0})
            rows[run.pass_name]["seconds"] += run.seconds
        for rw in self.rewrites:
            row = rows[rw.pass_name]
            row["rewrites"] += 1
            row["removed"] += len(rw.removed)
            row["added"] += len(rw.added)
            row["rules"][rw.rule] += 1
        return [dict(r, rules=dict(r["rules"])) for r in rows.values()]

    def count(self, pass_name: str, rule: str | None = None) -> int:
        """How many rewrites a pass (or one of its rules) made."""
        return sum(1 for rw in self.rewrites
                   if rw.pass_name == pass_name and (rule is None or rw.rule == rule))

    def diff(self) -> dict:
        """Names of the original nodes removed and of the final nodes that are new."""
        removed, added = set(), set()
        for rw in self.rewrites:
            for ref in rw.removed:
                if ref.name in added:
                    added.discard(ref.name)  # a node made and unmade within the run
                else:
                    removed.add(ref.name)
            for ref in rw.added:
                added.add(ref.name)
        return {"removed": sorted(removed - added), "added": sorted(added - removed)}

    # --- output -----------------------------------------------------------------------

    def to_dict(self) -> dict:
        data = asdict(self)
        data["by_pass"] = self.by_pass()
        data["diff"] = self.diff()
        return data

    def _table(self) -> list[tuple]:
        return [(r["pass"], r["rewrites"], r["removed"], r["added"],
                 ", ".join(f"{k} x{v}" for k, v in r["rules"].items())) for r in self.by_pass()]

    def __str__(self) -> str:
        lines = [f"onnxkit optimizer, level {self.level}: {self.nodes_before} -> {self.nodes_after} "
                 f"nodes in {self.iterations} iteration(s), {self.seconds:.2f} s"]
        lines += [f"  note: {n}" for n in self.notes]
        rows = [r for r in self._table() if r[1]]
        idle = [r[0] for r in self._table() if not r[1] and r[0] not in PLAN_PASSES]
        width = max([len(r[0]) for r in rows] + [4])
        lines.append(f"  {'pass':<{width}}  rewrites  removed  added  rules")
        for name, n, rem, add, rules in rows:
            lines.append(f"  {name:<{width}}  {n:>8}  {rem:>7}  {add:>5}  {rules}")
        if idle:
            lines.append(f"  no rewrites: {', '.join(idle)}")
        for key, value in self.plans.items():
            lines.append(f"  plan {key}: {value.get('summary', '') if isinstance(value, dict) else value}")
        lines.append(f"  operators before: {_ops(self.ops_before)}")
        lines.append(f"  operators after:  {_ops(self.ops_after)}")
        return "\n".join(map(terminal_text, lines))

    def details(self, limit: int | None = 50) -> str:
        """Every rewrite (up to ``limit``), then why candidate matches were turned down."""
        shown = self.rewrites if limit is None else self.rewrites[:limit]
        lines = [str(rw) for rw in shown]
        if limit is not None and len(self.rewrites) > limit:
            lines.append(f"... and {len(self.rewrites) - limit} more rewrites")
        reasons = Counter((r.pass_name, r.rule, r.reason) for r in self.rejections)
        for (p, rule, reason), n in reasons.most_common(limit):
            lines.append(f"[{p}/{rule}] turned down x{n}: {reason}")
        return "\n".join(map(terminal_text, lines))

    def to_markdown(self) -> str:
        """The report as Markdown; notes, plan summaries and op types escaped (``markdown_cell``)."""
        cell = markdown_cell
        out = [f"### Optimization level {self.level}: {self.nodes_before} → {self.nodes_after} nodes", ""]
        out += [f"- {cell(n)}" for n in self.notes]
        out += ["", "| pass | rewrites | nodes removed | nodes added | rules |", "|---|---:|---:|---:|---|"]
        out += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in self._table()]  # our names
        if self.plans:
            out += ["", "| plan | summary |", "|---|---|"]
            out += [f"| {k} | {cell(v.get('summary', '') if isinstance(v, dict) else v)} |"
                    for k, v in self.plans.items()]
        out += ["", f"Operators before: {cell(_ops(self.ops_before))}", "",
                f"Operators after: {cell(_ops(self.ops_after))}"]
        return "\n".join(out)

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


def op_counts(nodes) -> dict:
    c = Counter(NodeRef.of(n).qualified_op for n in nodes)
    return dict(sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def _ops(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"
