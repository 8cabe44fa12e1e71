"""Run a compiled plan. The loop is short and names no operator.

    run_graph(plan, feeds, outer, state):
        1. env <- initializers + feeds          (outer scope visible behind it)
        2. for each step in order:
             a. gather inputs ("" -> None)
             b. call the kernel through the executor (ctx for scope-aware kernels)
             c. store outputs, report to the trace callback
             d. drop values no later step reads
        3. return the graph outputs
"""

from __future__ import annotations

import time
from collections import ChainMap
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from onnxkit.errors import GraphError, KernelError, OnnxkitError, describe_node
from onnxkit.runtime.context import KernelContext
from onnxkit.runtime.limits import Limits
from onnxkit.runtime.plan import GraphPlan, Step
from onnxkit.runtime.trace import TraceCallback, TraceEvent
from onnxkit.runtime.values import describe_value


@dataclass
class RunState:
    """What one ``Session.run`` carries down into nested graphs.

    ``loop_iterations`` counts the body runs of every Loop, Scan and SequenceMap of this
    run, nested ones included (nested loops multiply: a per-node limit alone would let
    three nested loops of a million trips each run forever).
    """

    executor: Any
    limits: Limits
    trace: TraceCallback | None = None
    loop_iterations: int = 0


def run_graph(plan: GraphPlan, feeds: Mapping[str, Any], outer: Mapping[str, Any] | None,
              state: RunState) -> list:
    env: dict[str, Any] = dict(plan.initializers)
    env.update(feeds)
    scope = env if outer is None else ChainMap(env, outer)
    for step in plan.steps:
        args = [_fetch(scope, name, step, plan) if name else None for name in step.inputs]
        start = time.perf_counter()
        results = _invoke(step, args, scope, state, plan)
        elapsed = time.perf_counter() - start
        for name, value in zip(step.outputs, results):
            if name:
                env[name] = value
        if state.trace is not None:
            state.trace(TraceEvent(step.node, plan.path, step.kernel.qualified_name,
                                   tuple(args), results, elapsed, state.executor.trace_extra()))
        for name in step.free_after:
            env.pop(name, None)
    return [_fetch(scope, name, None, plan) for name in plan.output_names]


def _invoke(step: Step, args: list, scope, state: RunState, plan: GraphPlan) -> tuple:
    kernel = step.kernel
    ctx = KernelContext(step.node, step.opset, scope, state, plan) if kernel.context else None
    try:
        result = state.executor.invoke(kernel, args, step.attrs, ctx)
    except OnnxkitError as exc:
        if str(exc).startswith("node "):
            raise
        raise type(exc)(f"{describe_node(step.node)}: {exc}") from exc
    except Exception as exc:  # a kernel failed: say which node, with which inputs
        shown = ", ".join(f"{n or '<absent>'}: {describe_value(v)}" for n, v in zip(step.inputs, args))
        raise KernelError(
            f"{describe_node(step.node)} failed in kernel {kernel.qualified_name} "
            f"(opset {step.opset}) with inputs [{shown}]: {type(exc).__name__}: {exc}"
        ) from exc
    results = result if isinstance(result, tuple) else (result,)
    wanted = max((i + 1 for i, n in enumerate(step.outputs) if n), default=0)
    if len(results) < wanted:
        raise KernelError(
            f"{describe_node(step.node)}: kernel {kernel.qualified_name} returned "
            f"{len(results)} value(s), the node needs {wanted}"
        )
    return tuple(_as_value(v, state.executor) for v in results)


def _as_value(value, executor):
    if isinstance(value, (np.ndarray, list, dict)) or value is None or executor.owns(value):
        return value
    return np.asarray(value)


def _fetch(scope, name: str, step: Step | None, plan: GraphPlan):
    try:
        return scope[name]
    except KeyError:
        where = describe_node(step.node) if step is not None else f"graph {plan.path or plan.name!r}"
        raise GraphError(f"{where}: value {name!r} is not available (an input not fed?)") from None
