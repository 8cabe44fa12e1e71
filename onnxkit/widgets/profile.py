"""Where the time goes: per node and per operator type, from the trace callback.

    prof = profile(sess, {"x": x}, repeat=5)     # warm-up run, then 5 traced runs
    prof.ops[0]                                  # the slowest operator type
    ProfileView(prof)                            # a table and a bar chart, per op or per node

Only main-graph nodes are counted by default: a node that owns a subgraph (If, Loop, Scan)
already includes its body's time. ``nested=True`` lists body nodes too (their time is then
counted twice in the total's share, once in the body and once in the owning node).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping

import ipywidgets as widgets

from onnxkit.html import terminal_text
from onnxkit.runtime.trace import TraceEvent
from onnxkit.widgets import _escape as esc
from onnxkit.widgets.recorder import Record, TraceRecorder


@dataclass
class NodeTime:
    path: str
    name: str
    op_type: str
    outputs: tuple
    calls: int
    seconds: float
    share: float  # of the profile's total

    @property
    def label(self) -> str:
        where = f"{self.path}/" if self.path else ""
        return f"{where}{self.name or (self.outputs[0] if self.outputs else '?')} ({self.op_type})"

    @property
    def mean(self) -> float:
        return self.seconds / self.calls if self.calls else 0.0


@dataclass
class OpTime:
    op_type: str
    nodes: int
    calls: int
    seconds: float
    share: float


class Profile:
    """Times aggregated from trace records (a ``TraceRecorder`` or TraceEvents)."""

    def __init__(self, source: TraceRecorder | Iterable[Record | TraceEvent], nested: bool = False):
        records = source.records if isinstance(source, TraceRecorder) else [
            r if isinstance(r, Record) else Record.of(r, k, summaries=False)
            for k, r in enumerate(source)]
        if isinstance(source, TraceRecorder) and source.dropped:
            raise ValueError(f"the recorder dropped {source.dropped} records (max_records); "
                             "profile fewer runs or raise max_records")
        self.nested = nested
        chosen = [r for r in records if nested or r.path == ""]
        by_node: dict[tuple, list] = {}
        for r in chosen:
            entry = by_node.setdefault(r.key, [r, 0, 0.0])
            entry[1] += 1
            entry[2] += r.elapsed
        self.total = sum(r.elapsed for r in records if r.path == "")  # body time is inside
        total = self.total or 1.0
        self.nodes = [NodeTime(r.path, r.name, r.qualified_op, r.outputs, calls, secs, secs / total)
                      for r, calls, secs in by_node.values()]
        ops: dict[str, list] = {}
        for n in self.nodes:
            entry = ops.setdefault(n.op_type, [0, 0, 0.0])
            entry[0] += 1
            entry[1] += n.calls
            entry[2] += n.seconds
        self.ops = sorted((OpTime(op, k, c, s, s / total) for op, (k, c, s) in ops.items()),
                          key=lambda o: (-o.seconds, o.op_type))

    def top(self, n: int = 10) -> list[NodeTime]:
        """The ``n`` slowest nodes."""
        return sorted(self.nodes, key=lambda t: (-t.seconds, t.label))[:n]

    def to_dict(self) -> dict:
        return {"total": self.total, "nested": self.nested,
                "ops": [asdict(o) for o in self.ops], "nodes": [asdict(n) for n in self.nodes]}

    def __str__(self) -> str:
        width = max([len(o.op_type) for o in self.ops] + [7])
        lines = [f"{'op type':<{width}}  nodes  calls  total ms   share"]
        for o in self.ops:
            lines.append(f"{o.op_type:<{width}}  {o.nodes:>5}  {o.calls:>5}  {o.seconds * 1e3:>8.3f}  "
                         f"{o.share:>6.1%}")
        lines.append(f"{'total':<{width}}  {len(self.nodes):>5}  "
                     f"{sum(o.calls for o in self.ops):>5}  {self.total * 1e3:>8.3f}")
        return "\n".join(map(terminal_text, lines))  # op types come from the model

    def __repr__(self) -> str:
        return f"<onnxkit Profile: {len(self.nodes)} nodes, {len(self.ops)} op types>"

    def _repr_html_(self) -> str:
        return profile_html(self, "op")


def profile(session, feeds: Mapping[str, Any], repeat: int = 3, warmup: int = 1,
            nested: bool = False) -> Profile:
    """Run ``session`` ``warmup`` times untraced, then ``repeat`` times traced; aggregate."""
    for _ in range(warmup):
        session.run(None, feeds)
    rec = TraceRecorder(summaries=False)
    for _ in range(repeat):
        session.run(None, feeds, trace=rec)
    return Profile(rec, nested=nested)


def bars_svg(rows: list[tuple[str, float]], unit_scale: float = 1e3, unit: str = "ms",
             bar_width: float = 320.0) -> str:
    """A horizontal bar chart ``<svg class="onnxkit-bars">``; one ``rect.onnxkit-bar`` per row."""
    label_w = min(max([len(r[0]) for r in rows] + [4]) * 7.0 + 8, 300.0)
    row_h = 18.0
    peak = max([v for _, v in rows] + [0.0]) or 1.0
    w, h = label_w + bar_width + 90, row_h * len(rows) + 4
    parts = [f'<svg class="onnxkit-bars" xmlns="http://www.w3.org/2000/svg" width="{w:.0f}" '
             f'height="{h:.0f}" viewBox="0 0 {w:.0f} {h:.0f}" style="font: 12px sans-serif">']
    for k, (label, value) in enumerate(rows):
        y = 2 + k * row_h
        length = bar_width * value / peak
        parts.append(f'<text x="{label_w - 6:.0f}" y="{y + 12:.0f}" text-anchor="end">'
                     f"{esc.text(esc.shorten(label, 40))}</text>"
                     f'<rect class="onnxkit-bar" x="{label_w:.0f}" y="{y:.0f}" width="{length:.1f}" '
                     f'height="{row_h - 4:.0f}" fill="#4c78a8"><title>{esc.text(label)}</title></rect>'
                     f'<text x="{label_w + length + 4:.1f}" y="{y + 12:.0f}">'
                     f"{value * unit_scale:.3f} {unit}</text>")
    parts.append("</svg>")
    return "".join(parts)


def profile_html(prof: Profile, by: str = "op", limit: int = 20) -> str:
    """Table and bar chart per operator type (``by="op"``) or per node (``by="node"``)."""
    if by == "op":
        head = "<tr><th>op type</th><th>nodes</th><th>calls</th><th>total ms</th><th>share</th></tr>"
        body = [f"<tr><td>{esc.text(o.op_type)}</td><td>{o.nodes}</td><td>{o.calls}</td>"
                f"<td>{o.seconds * 1e3:.3f}</td><td>{o.share:.1%}</td></tr>" for o in prof.ops[:limit]]
        rows = [(o.op_type, o.seconds) for o in prof.ops[:limit]]
    elif by == "node":
        top = prof.top(limit)
        head = ("<tr><th>node</th><th>calls</th><th>total ms</th><th>mean ms</th>"
                "<th>share</th></tr>")
        body = [f"<tr><td>{esc.text(n.label)}</td><td>{n.calls}</td><td>{n.seconds * 1e3:.3f}</td>"
                f"<td>{n.mean * 1e3:.3f}</td><td>{n.share:.1%}</td></tr>" for n in top]
        rows = [(n.label, n.seconds) for n in top]
    else:
        raise ValueError(f"by must be 'op' or 'node', not {by!r}")
    more = len(prof.ops if by == "op" else prof.nodes) - len(rows)
    note = f"<p>... and {more} more</p>" if more > 0 else ""
    return (f'<div class="onnxkit-profile"><p>total {prof.total * 1e3:.3f} ms'
            f"{' (nested nodes included)' if prof.nested else ''}</p>"
            f'<div style="display:flex;gap:16px;align-items:flex-start">'
            f'<table class="onnxkit-profile-table">{head}{"".join(body)}</table>'
            f"{bars_svg(rows)}</div>{note}</div>")


class ProfileView(widgets.VBox):
    """``profile_html`` with a switch between per-operator and per-node views."""

    def __init__(self, prof: Profile, by: str = "op", limit: int = 20):
        self.profile = prof
        self.limit = limit
        self.switch = widgets.ToggleButtons(options=[("per op type", "op"), ("per node", "node")],
                                            value=by)
        self.html = widgets.HTML(profile_html(prof, by, limit))
        self.switch.observe(self._update, names="value")
        super().__init__(children=[self.switch, self.html])
        self.add_class("onnxkit-profile-view")

    def _update(self, _change=None) -> None:
        self.html.value = profile_html(self.profile, self.switch.value, self.limit)

    def __repr__(self) -> str:
        return f"<onnxkit ProfileView: {len(self.profile.nodes)} nodes, {len(self.profile.ops)} op types>"
