"""Where a run's time goes: a trace callback that adds up time per node and per op type.

    sess = Session(model, executor="cpu")
    prof = Profiler(sess)                  # sess: to name the registry of each kernel
    for _ in range(10):
        sess.run(None, feeds, trace=prof)
    print(prof.table())            # per op type: calls, total ms, share, kernel
    print(prof.table(by="node", top=15))
    prof.reset()

Each ``TraceEvent`` carries the node, the kernel's qualified name (which executor's
registry it came from) and the seconds the kernel took; nested graphs (Loop / If
bodies) are keyed by their path. ``rows(by)`` gives the same numbers as dicts, and
``to_dataframe(by)`` as a pandas DataFrame when pandas is installed.

Node names and op types come from the model: ``table()`` escapes them for Markdown
(``markdown_cell``), ``table(markdown=False)`` for a terminal (``terminal_text``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from onnxkit.html import markdown_cell, terminal_text
from onnxkit.runtime.trace import TraceEvent


@dataclass
class _Entry:
    key: str
    op_type: str
    kernel: str
    calls: int = 0
    seconds: float = 0.0
    shapes: str = ""
    kernels: set = field(default_factory=set)


def _shape_of(value) -> str:
    shape = getattr(value, "shape", None)
    return "x".join(map(str, shape)) if shape is not None else type(value).__name__


class Profiler:
    """A trace callback aggregating kernel time by node and by op type."""

    def __init__(self, session=None):
        """With ``session``, kernels are shown with the registry that served them
        (``cpu:`` or ``reference:``) for the nodes of its plan."""
        self._registry: dict[int, str] = {}
        if session is not None:
            self._note_registries(session.plan)
        self.reset()

    def _note_registries(self, plan) -> None:
        for step in plan.steps:
            self._registry[id(step.node)] = f"{step.kernel.registry}:"

    def reset(self) -> None:
        self._nodes: dict[str, _Entry] = {}
        self._ops: dict[str, _Entry] = {}
        self.events = 0
        self.seconds = 0.0

    def __call__(self, event: TraceEvent) -> None:
        node = event.node
        domain = "" if node.domain in ("", "ai.onnx") else f"{node.domain}::"
        op_type = domain + node.op_type
        name = node.name or f"{op_type}({', '.join(node.output)})"
        key = f"{event.path}/{name}" if event.path else name
        kernel = self._registry.get(id(node), "") + event.kernel
        algorithm = (event.extra.get("algorithm") if isinstance(event.extra, dict)  # cpu (_route)
                     else getattr(event.extra, "algorithm", None))  # cuda: a NodeRecord's
        if algorithm:
            kernel += f" [{algorithm}]"
        for table, k in ((self._nodes, key), (self._ops, op_type)):
            entry = table.get(k)
            if entry is None:
                entry = table[k] = _Entry(k, op_type, event.kernel)
                if table is self._nodes:
                    entry.shapes = " ".join(_shape_of(v) for v in event.inputs[:1])
            entry.calls += 1
            entry.seconds += event.elapsed
            entry.kernels.add(kernel)
        self.events += 1
        self.seconds += event.elapsed

    def rows(self, by: str = "op") -> list[dict]:
        """Entries sorted by total time: key, op_type, calls, ms, ms_per_call, share, kernel."""
        if by not in ("op", "node"):
            raise ValueError(f"by must be 'op' or 'node', got {by!r}")
        table = self._ops if by == "op" else self._nodes
        total = self.seconds or 1.0
        out = []
        for e in sorted(table.values(), key=lambda e: -e.seconds):
            out.append({"key": e.key, "op_type": e.op_type, "calls": e.calls,
                        "ms": e.seconds * 1e3, "ms_per_call": e.seconds * 1e3 / max(e.calls, 1),
                        "share": e.seconds / total, "kernel": "/".join(sorted(e.kernels)),
                        "input": e.shapes})
        return out

    def table(self, by: str = "op", top: int | None = None, *, markdown: bool = True) -> str:
        """A Markdown table of ``rows(by)`` (the ``top`` slowest), with a total line.

        Names are escaped for Markdown, or with ``markdown=False`` for printing on a
        terminal (the same table, its names readable as they are but control bytes and bidi
        overrides shown as escapes)."""
        cell = markdown_cell if markdown else (lambda s: terminal_text(s).replace("|", "\\|"))
        rows = self.rows(by)
        shown = rows if top is None else rows[:top]
        head = "op type" if by == "op" else "node"
        lines = [f"| {head} | calls | total ms | ms/call | share | kernels |"
                 + (" input |" if by == "node" else ""),
                 "|---|---:|---:|---:|---:|---|" + ("---|" if by == "node" else "")]
        for r in shown:
            line = (f"| {cell(r['key'])} | {r['calls']} | {r['ms']:.3f} | {r['ms_per_call']:.3f} | "
                    f"{r['share']:.1%} | {cell(r['kernel'])} |")
            lines.append(line + (f" {cell(r['input'])} |" if by == "node" else ""))
        lines.append(f"| **total** | {self.events} | {self.seconds * 1e3:.3f} | | 100% | |"
                     + (" |" if by == "node" else ""))
        return "\n".join(lines)

    def to_dataframe(self, by: str = "op"):
        import pandas as pd

        return pd.DataFrame(self.rows(by))

    def _repr_markdown_(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"<Profiler {self.events} events, {self.seconds * 1e3:.3f} ms>"


__all__ = ["Profiler"]
