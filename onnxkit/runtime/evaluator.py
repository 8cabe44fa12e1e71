"""Run a compiled plan. The loop is short and names no operator.

    run_graph(plan, feeds, outer, state):
        1. env <- initializers + feeds          (outer scope visible behind it)
        2. for each step in order:
             a. gather inputs ("" -> None)
             b. call the kernel through the executor (ctx for scope-aware kernels); where
           the executor calls kernels as they are and no trace is asked for, directly
           (one array out: stored at once)
             c. store outputs (their bytes charged to the run's memory budget), report
                to the trace callback
             d. drop values no later step reads (their bytes released)
        3. release what this graph still holds; return the graph outputs (a kernel that
           keeps a body's outputs charges them itself, ``KernelContext.budget``)
"""

from __future__ import annotations

import time
from collections import ChainMap
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from onnxkit.errors import describe_node
from onnxkit.core.context import KernelContext
from onnxkit.core.executor import Executor
from onnxkit.core.limits import Limits, MemoryBudget
from onnxkit.runtime.plan import GraphPlan, Step
from onnxkit.runtime.trace import TraceCallback, TraceEvent
from onnxkit.runtime.step_results import fail, not_available, over
from onnxkit.runtime.step_results import results as step_results
from onnxkit.runtime.values import value_bytes


@dataclass
class RunState:
    """What one ``Session.run`` carries down into nested graphs.

    ``loop_iterations`` counts the body runs of every Loop, Scan and SequenceMap of this
    run, nested ones included (nested loops multiply: a per-node limit alone would let
    three nested loops of a million trips each run forever). ``budget`` counts the bytes
    the run's values hold, nested graphs' included, against ``limits.max_run_bytes``.
    """

    executor: Any
    limits: Limits
    trace: TraceCallback | None = None
    loop_iterations: int = 0
    budget: MemoryBudget = None  # type: ignore[assignment]  (one is made from ``limits``)

    def __post_init__(self):
        if self.budget is None:
            self.budget = MemoryBudget(self.limits)

    def run_body(self, body: GraphPlan, feeds: Mapping[str, Any], outer) -> list:
        """Run a nested graph in this run (``KernelContext.run``, which cannot import us)."""
        return run_graph(body, feeds, outer, self)

    def body_runner(self, body: GraphPlan, outer):
        """``run(values) -> outputs``: ``body`` bound to ``values`` by position and run in
        this run, seeing ``outer`` (``KernelContext.runner``: a loop's iterations)."""
        straight = body.straight
        if straight is None or self.trace is not None or \
                type(self.executor).invoke is not Executor.invoke:
            return lambda values: run_graph(body, body.bind(values), outer, self)
        positional, count = body.straight_values, len(body.input_names)

        def run(values):
            if positional is not None and len(values) == count:
                return positional(values, outer, self)
            return straight(body.bind(values), outer, self)
        return run


def run_graph(plan: GraphPlan, feeds: Mapping[str, Any], outer: Mapping[str, Any] | None,
              state: RunState) -> list:
    straight = plan.straight  # the same run as one function (``straight_line``)
    if straight is not None and state.trace is None and type(state.executor).invoke is Executor.invoke:
        return straight(feeds, outer, state)
    env: dict[str, Any] = dict(plan.initializers)
    env.update(feeds)
    scope = env if outer is None else ChainMap(env, outer)
    trace = state.trace
    budget = state.budget
    live, limit = budget.live, budget.limit  # ``live`` kept here, stored for each kernel
    held: dict[str, int] = {}  # bytes of the live values this graph's steps made, by name
    # the common step in a line: a kernel the executor calls as it is, one array out
    direct = trace is None and type(state.executor).invoke is Executor.invoke
    for step in plan.steps:
        try:
            args = [scope[name] if name else None for name in step.inputs]
        except KeyError:
            raise not_available(scope, step.inputs, describe_node(step.node)) from None
        budget.live = live  # what the kernel's check_allocation sees
        if direct and step.plain:
            try:
                result = step.kernel.fn(*args, **step.attrs)
            except Exception as exc:
                fail(step, args, exc)
            if type(result) is np.ndarray and step.wanted == 1:
                nbytes = result.nbytes
                live += nbytes
                name = step.outputs[0]
                env[name] = result
                held[name] = nbytes
                for name in step.free_after:
                    env.pop(name, None)
                    live -= held.pop(name, 0)
                if live > limit:  # checked once its dead inputs are gone: a view of one counts once
                    over(budget, live, nbytes, step)
                continue
            results = step_results(step, result, state)
        elif trace is None:
            results = _invoke(step, args, scope, state, plan)
        else:
            start = time.perf_counter()
            results = _invoke(step, args, scope, state, plan)
            trace(TraceEvent(step.node, plan.path, step.kernel.qualified_name, tuple(args),
                             results, time.perf_counter() - start, state.executor.trace_extra()))
        live = budget.live  # a kernel that ran a body has given back what the body charged
        nbytes = 0
        for name, value in zip(step.outputs, results):
            if name:
                size = value_bytes(value)
                env[name] = value
                held[name] = held.get(name, 0) + size
                nbytes += size
        live += nbytes
        for name in step.free_after:
            env.pop(name, None)
            live -= held.pop(name, 0)
        if live > limit:
            over(budget, live, nbytes, step)
    # the rest is handed over: the caller, or the kernel that ran this body, keeps it
    budget.live = live - sum(held.values())
    try:
        return [scope[name] for name in plan.output_names]
    except KeyError:
        raise not_available(scope, plan.output_names, f"graph {plan.path or plan.name!r}") from None


def _invoke(step: Step, args: list, scope, state: RunState, plan: GraphPlan) -> tuple:
    kernel = step.kernel
    ctx = KernelContext(step.node, step.opset, scope, state, plan) if kernel.context else None
    try:
        result = state.executor.invoke(kernel, args, step.attrs, ctx)
    except Exception as exc:
        fail(step, args, exc)
    return step_results(step, result, state)


