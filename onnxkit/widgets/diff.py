"""Two models side by side (e.g. before and after ``onnxkit.optimizer.optimize``).

    optimized, report = optimize(model, 2)
    DiffView(model, optimized, report)      # counts, operators before/after, both graphs

Nodes are matched by name (unnamed nodes by op type and first output):
    removed   in the first model only            (red in the first drawing)
    added     in the second model only           (green in the second drawing)
    replaced  same name, different operator      (e.g. Relu 'r1' -> onnxkit::FusedConv 'r1')
    kept      same name, same operator
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import ipywidgets as widgets
from onnx import ModelProto, NodeProto

from onnxkit.widgets import _escape as esc
from onnxkit.widgets.graph import GraphWidget, as_model


def _op(node: NodeProto) -> str:
    return node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"


def node_keys(model: ModelProto) -> dict[str, tuple[int, NodeProto]]:
    """Match key -> (index in the graph, node)."""
    keys: dict[str, tuple[int, NodeProto]] = {}
    for idx, node in enumerate(model.graph.node):
        first = next((o for o in node.output if o), "")
        key = node.name if node.name else f"{node.op_type}->{first}"
        base, k = key, 1
        while key in keys:  # a repeated name (invalid, but drawable): keep both
            k += 1
            key = f"{base}#{k}"
        keys[key] = (idx, node)
    return keys


def model_diff(before: ModelProto, after: ModelProto) -> dict[str, Any]:
    """Node names removed / added / replaced / kept, their counts, and operator counts."""
    a, b = node_keys(before), node_keys(after)
    removed = [k for k in a if k not in b]
    added = [k for k in b if k not in a]
    common = [k for k in a if k in b]
    replaced = [k for k in common if _op(a[k][1]) != _op(b[k][1])]
    kept = [k for k in common if _op(a[k][1]) == _op(b[k][1])]
    ops_a = Counter(_op(n) for n in before.graph.node)
    ops_b = Counter(_op(n) for n in after.graph.node)
    return {
        "removed": removed, "added": added, "replaced": replaced, "kept": kept,
        "counts": {"before": len(before.graph.node), "after": len(after.graph.node),
                   "removed": len(removed), "added": len(added), "replaced": len(replaced),
                   "kept": len(kept)},
        "ops": {op: (ops_a.get(op, 0), ops_b.get(op, 0)) for op in sorted(set(ops_a) | set(ops_b))},
        "highlight_before": {f"n{a[k][0]}": "onnxkit-removed" for k in removed}
        | {f"n{a[k][0]}": "onnxkit-replaced" for k in replaced},
        "highlight_after": {f"n{b[k][0]}": "onnxkit-added" for k in added}
        | {f"n{b[k][0]}": "onnxkit-replaced" for k in replaced},
    }


def diff_html(diff: dict, report: Any = None) -> str:
    c = diff["counts"]
    parts = ['<div class="onnxkit-diff">',
             f"<p><b>{c['before']}</b> nodes \u2192 <b>{c['after']}</b> nodes: "
             f"{c['removed']} removed, {c['added']} added, {c['replaced']} replaced, "
             f"{c['kept']} kept</p>",
             '<table class="onnxkit-diff-ops"><tr><th>operator</th><th>before</th><th>after</th></tr>']
    for op, (n_a, n_b) in diff["ops"].items():
        mark = "" if n_a == n_b else ' style="font-weight:600"'
        parts.append(f"<tr{mark}><td>{esc.text(op)}</td><td>{n_a}</td><td>{n_b}</td></tr>")
    parts.append("</table>")
    rows = _report_rows(report)
    if rows:
        parts.append('<table class="onnxkit-diff-passes"><tr><th>pass</th><th>rewrites</th>'
                     "<th>removed</th><th>added</th><th>rules</th></tr>")
        for r in rows:
            rules = ", ".join(f"{k} x{v}" for k, v in r.get("rules", {}).items())
            parts.append(f"<tr><td>{esc.text(r['pass'])}</td><td>{r['rewrites']}</td>"
                         f"<td>{r['removed']}</td><td>{r['added']}</td><td>{esc.text(rules)}</td></tr>")
        parts.append("</table>")
    parts.append("</div>")
    return "".join(parts)


def _report_rows(report: Any) -> list[dict]:
    """Passes that rewrote something, from an optimizer Report or its ``to_dict()``."""
    if report is None:
        return []
    data = report.to_dict() if hasattr(report, "to_dict") else dict(report)
    return [r for r in data.get("by_pass", []) if r.get("rewrites")]


class DiffView(widgets.VBox):
    """Counts, operator table, optimizer passes, and both graphs with changes coloured."""

    def __init__(self, before: Any, after: Any, report: Any = None, *, graphs: bool = True):
        self.before = as_model(before)
        self.after = as_model(after)
        self.report = report
        self.diff = model_diff(self.before, self.after)
        self.summary = widgets.HTML(diff_html(self.diff, report))
        children: list = [self.summary]
        self.graphs: tuple = ()
        if graphs:
            self.graphs = (GraphWidget(self.before, highlight=self.diff["highlight_before"]),
                           GraphWidget(self.after, highlight=self.diff["highlight_after"]))
            children.append(widgets.HBox([widgets.VBox([widgets.HTML("<b>before</b>"), self.graphs[0]]),
                                          widgets.VBox([widgets.HTML("<b>after</b>"), self.graphs[1]])]))
        super().__init__(children=children)
        self.add_class("onnxkit-diff-view")

    def __repr__(self) -> str:
        c = self.diff["counts"]
        return (f"<onnxkit DiffView: {c['before']} -> {c['after']} nodes, {c['removed']} removed, "
                f"{c['added']} added, {c['replaced']} replaced, {c['kept']} kept>")
