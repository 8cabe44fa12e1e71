"""What every pass shares: the ``Pass`` interface and the context a run carries.

    class MyPass(Pass):
        name = "my_pass"
        def run(self, g: Graph, ctx: PassContext) -> int:   # the number of rewrites
            for node in candidates:
                reason = why_not(node)
                if reason: ctx.reject(self.name, "rule", node, reason); continue
                if not ctx.may_rewrite(): break                # a bisect budget ran out
                g.apply([Edit(...)]); ctx.record(self.name, "rule", removed, added, detail)

Pattern-based passes are written with ``onnxkit.optimizer.pattern`` instead and only say
pattern, check and rewrite.
"""

from __future__ import annotations

from onnx import NodeProto

from onnxkit.optimizer.graph import Graph
from onnxkit.optimizer.report import NodeRef, Rejection, Report, Rewrite


class Pass:
    """One graph transformation. ``repeat``: runs in the fixed-point loop (else once, last)."""

    name = "pass"
    repeat = True

    def run(self, g: Graph, ctx: "PassContext") -> int:
        raise NotImplementedError

    @property
    def description(self) -> str:
        doc = (self.__doc__ or type(self).__module__).strip()
        return doc.splitlines()[0]

    def __repr__(self) -> str:
        return f"<pass {self.name}>"


class PassContext:
    """The report being written, the iteration, and an optional budget of rewrites."""

    def __init__(self, report: Report, budget: int | None = None):
        self.report = report
        self.iteration = 0
        self.budget = budget
        self._rejected: set = set()

    def may_rewrite(self) -> bool:
        """False once the budget (set by ``bisect``) is spent; then passes stop rewriting."""
        if self.budget is None or len(self.report.rewrites) < self.budget:
            return True
        self.report.stopped_early = True
        return False

    def record(self, pass_name: str, rule: str, removed: list[NodeProto], added: list[NodeProto],
               detail: str = "") -> None:
        self.report.rewrites.append(Rewrite(
            len(self.report.rewrites), pass_name, rule, self.iteration,
            tuple(NodeRef.of(n) for n in removed), tuple(NodeRef.of(n) for n in added), detail))

    def reject(self, pass_name: str, rule: str, node: NodeProto, reason: str) -> None:
        key = (pass_name, rule, node.name, reason)
        if key not in self._rejected:  # the fixed-point loop meets the same refusal again
            self._rejected.add(key)
            self.report.rejections.append(Rejection(pass_name, rule, NodeRef.of(node), reason))
