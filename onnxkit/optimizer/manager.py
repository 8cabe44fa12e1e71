"""The pass manager: run a level's passes until none changes the graph, then the plans.

    optimize(model, level):
        g = Graph(model)                       # copy; name nodes; infer shapes
        for each stage (levels.py: level 1's passes, then level 2's):
            repeat (at most MAX_ITERATIONS times):
                for each pass of the stage, in order:
                    n = pass.run(g)            # rewrites, recorded in the report
                    if n: re-infer shapes
                until an iteration makes no rewrite (the fixed point)
        run the level's plan passes once (level 3: layout, in-place, buffers)
        return g.to_model(), report
"""

from __future__ import annotations

import time

from onnx import ModelProto

from onnxkit.errors import OnnxkitError
from onnxkit.loading import ModelLike, load
from onnxkit.optimizer.base import Pass, PassContext
from onnxkit.optimizer.graph import Graph
from onnxkit.optimizer.report import PassRun, Report, op_counts

MAX_ITERATIONS = 32  # swin_t exported by torch needs 18: each one folds one more block


def optimize(model: ModelLike, level: int = 1, *, passes: tuple[Pass, ...] | None = None,
             budget: int | None = None, reuse_source: bool = False) -> tuple[ModelProto, Report]:
    """Optimize ``model`` at ``level`` (0-3); returns the new model and the report.

    ``passes`` replaces the level's pass list; ``budget`` stops after that many rewrites
    (``bisect`` uses it). The input model is not modified, unless ``reuse_source``: then
    a ModelProto that nobody else holds (a Session's own loaded model) may be rewritten
    in place and returned, so that its weights are not copied (``Graph.to_model``).
    """
    if level not in (0, 1, 2, 3):
        raise OnnxkitError(f"optimization level must be 0, 1, 2 or 3, not {level!r}")
    proto = load(model)
    start = time.perf_counter()
    if passes is None:
        from onnxkit.optimizer.levels import stages_for

        stages = stages_for(level)
    else:
        stages = (tuple(passes),)
    chosen = stages[-1]
    report = Report(level, passes=[p.name for p in chosen])
    report.nodes_before = len(proto.graph.node)
    report.ops_before = op_counts(proto.graph.node)
    if not chosen:
        out = proto if reuse_source else ModelProto()
        if out is not proto:
            out.CopyFrom(proto)
        report.nodes_after, report.ops_after = report.nodes_before, dict(report.ops_before)
        return out, report
    g = Graph(proto)
    report.notes.extend(g.notes)
    ctx = PassContext(report, budget)
    for stage in stages:
        _fixed_point([p for p in stage if p.repeat], g, ctx)
        if report.stopped_early:
            break
    for p in chosen:
        if not p.repeat:
            _run_pass(p, g, ctx)
    out = g.to_model(reuse_source)
    report.nodes_after = len(out.graph.node)
    report.ops_after = op_counts(out.graph.node)
    if any(n.domain == "onnxkit" for n in out.graph.node):
        report.notes.append("uses the onnxkit domain (fused operators): see docs/onnxkit-domain.md")
    report.seconds = time.perf_counter() - start
    return out, report


def _fixed_point(repeated: list[Pass], g: Graph, ctx: PassContext) -> None:
    """Run ``repeated`` in order until an iteration rewrites nothing."""
    report = ctx.report
    for _ in range(MAX_ITERATIONS):
        ctx.iteration = report.iterations
        report.iterations += 1
        changed = 0
        for p in repeated:
            changed += _run_pass(p, g, ctx)
            if report.stopped_early:
                return
        if not changed:
            return
    report.notes.append(f"stopped after {MAX_ITERATIONS} iterations without a fixed point")


def _run_pass(p: Pass, g: Graph, ctx: PassContext) -> int:
    before = len(g)
    t0 = time.perf_counter()
    n = p.run(g, ctx)
    if n:
        g.infer_types()
    ctx.report.runs.append(PassRun(p.name, ctx.iteration, before, len(g), n,
                                   time.perf_counter() - t0))
    return n
