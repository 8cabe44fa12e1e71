"""The conformance report: per case and per operator, as JSON, Markdown and a chart."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import asdict, dataclass, field

from onnxkit.conformance.runner import CaseResult
from onnxkit.html import markdown_cell, terminal_text

STATUSES = ("pass", "fail", "error", "skip")


def _plain(label: str) -> str:
    """A label matplotlib draws as written: no ``$`` mathtext; controls and bidi shown as escapes."""
    return terminal_text(label).replace("$", r"\$")


@dataclass
class Report:
    backend: str
    results: list[CaseResult] = field(default_factory=list)
    onnx_version: str = ""

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in STATUSES}
        for r in self.results:
            out[r.status] += 1
        return out

    def by_operator(self) -> dict[str, dict[str, int]]:
        """op -> {"pass": n, "fail": n, ...}, counting each case once per operator it uses."""
        table: dict[str, dict[str, int]] = defaultdict(lambda: {s: 0 for s in STATUSES})
        for r in self.results:
            for op_type in r.op_types or ["<none>"]:
                table[op_type][r.status] += 1
        return dict(sorted(table.items()))

    def to_dict(self) -> dict:
        return {"backend": self.backend, "onnx_version": self.onnx_version, "counts": self.counts(),
                "operators": self.by_operator(), "cases": [asdict(r) for r in self.results]}

    def to_markdown(self) -> str:
        c = self.counts()
        run = c["pass"] + c["fail"] + c["error"]
        lines = [f"# Conformance of {markdown_cell(self.backend)} (onnx {self.onnx_version})", "",
                 f"**{c['pass']} / {run} passed** ({100 * c['pass'] / max(run, 1):.1f} %), "
                 f"{c['fail']} wrong answers, {c['error']} errors, {c['skip']} skipped.", "",
                 "## Per operator", "", "| operator | pass | fail | error | skip |", "|---|---|---|---|---|"]
        for op_type, n in self.by_operator().items():
            lines.append(f"| {markdown_cell(op_type)} | {n['pass']} | {n['fail']} | {n['error']} | {n['skip']} |")
        bad = [r for r in self.results if r.status in ("fail", "error")]
        if bad:
            lines += ["", "## Cases not passing", "", "| case | status | reason |", "|---|---|---|"]
            for r in bad:
                reason = r.message.splitlines()[0][:200] if r.message else ""
                lines.append(f"| {markdown_cell(r.name)} | {r.status} | {markdown_cell(reason)} |")
        return "\n".join(lines) + "\n"

    def _repr_markdown_(self) -> str:  # shown in a notebook
        return self.to_markdown()

    def plot(self, path: str, top: int = 40) -> None:
        """A stacked bar chart of the operators with the most non-passing cases."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        ops = sorted(self.by_operator().items(), key=lambda kv: (-(kv[1]["fail"] + kv[1]["error"]), kv[0]))[:top]
        fig, ax = plt.subplots(figsize=(10, max(3, 0.25 * len(ops))))
        left = [0] * len(ops)
        for status, color in (("pass", "#4c9a2a"), ("fail", "#d1495b"), ("error", "#edae49"), ("skip", "#9e9e9e")):
            values = [n[status] for _, n in ops]
            ax.barh([_plain(o) for o, _ in ops], values, left=left, color=color, label=status)
            left = [a + b for a, b in zip(left, values)]
        c = self.counts()
        ax.set_title(f"{_plain(self.backend)}: {c['pass']} passed, {c['fail']} failed, {c['error']} errors")
        ax.invert_yaxis()
        ax.legend(loc="lower right")
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)

    def write(self, folder: str, stem: str | None = None) -> dict[str, str]:
        os.makedirs(folder, exist_ok=True)
        stem = stem or f"conformance-{self.backend.replace(':', '_').replace('/', '_')}"
        paths = {ext: os.path.join(folder, f"{stem}.{ext}") for ext in ("json", "md", "png")}
        with open(paths["json"], "w") as f:
            json.dump(self.to_dict(), f, indent=1)
        with open(paths["md"], "w") as f:
            f.write(self.to_markdown())
        self.plot(paths["png"])
        return paths
