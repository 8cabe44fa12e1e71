"""What a scope-aware kernel (``@op(..., context=True)``) receives as ``ctx``.

``state`` is the run's ``onnxkit.runtime.evaluator.RunState`` and ``graph`` a
``GraphPlan``: the runtime passes them in, so this module needs none of its imports
(``ctx.run`` asks the state to run a body)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from onnx import NodeProto

from onnxkit.core.limits import Limits, MemoryBudget


@dataclass
class KernelContext:
    """The node being run and a way to run its subgraphs in the enclosing scope.

    ``ctx.run(body, [v1, v2])`` binds the body's inputs positionally and returns its
    outputs as a list; the body sees every value of the enclosing graphs. ``ctx.budget``
    is the run's memory budget: a kernel that keeps values between body runs (loop state,
    scan outputs) charges them there, and releases them before it returns its results
    (which the evaluator charges).
    """

    node: NodeProto
    opset: int
    scope: Mapping[str, Any]
    state: "RunState"
    graph: "GraphPlan | None" = None  # the plan holding this node (e.g. for Gradient)

    @property
    def n_outputs(self) -> int:
        return len(self.node.output)

    @property
    def limits(self) -> Limits:
        return self.state.limits

    @property
    def budget(self) -> MemoryBudget:
        return self.state.budget

    def run(self, body: "GraphPlan", inputs: Sequence[Any] = ()) -> list:
        return self.state.run_body(body, body.bind(inputs), self.scope)

    def runner(self, body: "GraphPlan"):
        """``run(inputs) -> outputs``, what ``ctx.run(body, inputs)`` does, with the work
        that is the same on every call done once (for a body run many times)."""
        return self.state.body_runner(body, self.scope)
