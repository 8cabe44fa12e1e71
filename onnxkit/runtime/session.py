"""The session core: plan a model once, run it many times, shaped like
``onnxruntime.InferenceSession`` so habits carry over.

``onnxkit.Session`` (``onnxkit.api``) is this class with ``level=``: the optimizer sits
above this layer, so it is the top layer that optimizes the model (``_rewrite``)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
from onnx import ModelProto

from onnxkit.errors import GraphError, InputError, LimitExceededError, OnnxkitError
from onnxkit.loading import ModelLike, load
from onnxkit.runtime.evaluator import RunState, run_graph
from onnxkit.runtime.executors import get_executor
from onnxkit.runtime.feeds import FeedChecker, NodeArg
from onnxkit.runtime.limits import DEFAULT_LIMITS, Limits, reset_limits, using_limits
from onnxkit.runtime.plan import compile_model
from onnxkit.runtime.trace import TraceCallback
from onnxkit.runtime.weights import attach_weights, detach_weights


class Session:
    """Plan a model once; ``run`` it many times, from any number of threads.

    >>> sess = Session("model.onnx", executor="reference")
    >>> y, = sess.run(None, {"x": x})
    """

    level = 0  #: the optimization level the model was rewritten at (``onnxkit.Session``)
    optimization_report = None

    def __init__(self, model: ModelLike, executor: str = "reference", *,
                 limits: Limits | None = None, trace: TraceCallback | None = None,
                 tune: bool | None = None):
        self.limits = limits or DEFAULT_LIMITS
        token = using_limits(self.limits)  # external data is read under the session's limits
        try:
            proto = load(model)
        finally:
            reset_limits(token)
        self.executor = get_executor(executor)
        if tune is not None:  # the cpu executor: time the algorithms of each layer shape
            self.executor.tune = bool(tune)
        # a model this session loaded itself may be rewritten in place, not copied
        proto = self._rewrite(proto, reuse_source=not isinstance(model, ModelProto))
        self.trace = trace
        token = using_limits(self.limits)
        try:  # the weights live once, in the plan; the proto keeps stubs (``weights``)
            self._skeleton, arrays = detach_weights(proto)
            del proto  # its weights are freed here
            self.plan = compile_model(self._skeleton, self.executor, self.limits,
                                      initializers=arrays)
        except OnnxkitError:
            raise
        except RecursionError as exc:
            raise LimitExceededError(f"the model nests too deeply to plan: {exc}") from exc
        except Exception as exc:  # a malformed model must not escape as a raw traceback
            raise GraphError(f"could not plan the model: {type(exc).__name__}: {exc}") from exc
        finally:
            reset_limits(token)
        graph = self._skeleton.graph
        initialized = {t.name for t in graph.initializer}
        self._check_feeds = FeedChecker(list(graph.input),
                                        {vi.name for vi in graph.input if vi.name in initialized})
        self._inputs = [NodeArg.from_value_info(vi) for vi in graph.input if vi.name not in initialized]
        self._outputs = [NodeArg.from_value_info(vi) for vi in graph.output]

    def _rewrite(self, proto: ModelProto, reuse_source: bool) -> ModelProto:
        """The model as this session plans it: here, as loaded (``onnxkit.Session``
        optimizes it at its level)."""
        return proto

    @property
    def model(self) -> ModelProto:
        """The model this session runs (optimized at its level), weights included: a new
        proto on each access, built from the plan's arrays (the session does not keep a
        second copy of the weights)."""
        return attach_weights(self._skeleton, self.plan.initializers)

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, Any],
            run_options: Any = None, *, trace: TraceCallback | None = None) -> list:
        """Outputs in the order of ``output_names`` (all, in graph order, when None)."""
        names = self._requested(output_names)
        feeds = self._check_feeds(input_feed)
        state = RunState(self.executor, self.limits, trace if trace is not None else self.trace)
        token = using_limits(self.limits, state.budget)
        try:
            with np.errstate(all="ignore"), self.executor.running():
                outputs = self.executor.execute(feeds, lambda moved: _run(self.plan, moved, state),
                                                replayable=state.trace is None)
        finally:
            reset_limits(token)
        by_name = dict(zip(self.plan.output_names, outputs))
        return [self.executor.to_host(by_name[n]) for n in names]

    def _requested(self, output_names) -> list[str]:
        all_names = list(self.plan.output_names)
        if output_names is None:
            return all_names
        if isinstance(output_names, str):
            raise InputError("output_names must be a list of names (or None), not a string")
        unknown = [n for n in output_names if n not in all_names]
        if unknown:
            raise InputError(
                f"unknown output name(s) {', '.join(map(repr, unknown))}; the model's outputs are: "
                f"{', '.join(map(repr, all_names))}"
            )
        return list(output_names)

    def __repr__(self) -> str:
        return (f"<onnxkit.Session executor={self.executor.name!r} level={self.level} "
                f"inputs={[i.name for i in self._inputs]} outputs={[o.name for o in self._outputs]}>")


def _run(plan, feeds, state: RunState) -> list:
    """One pass over the plan (an executor may make more than one per ``Session.run``:
    each starts with nothing held against the run's memory budget)."""
    state.budget.live = 0
    return run_graph(plan, feeds, None, state)


def run(model: ModelLike, feeds: Mapping[str, Any], output_names: Sequence[str] | None = None,
        executor: str = "reference", **kwargs) -> list:
    """One-shot, unoptimized: ``run(model, {"x": x})`` -> list of outputs (``onnxkit.run``
    takes ``level=`` too)."""
    return Session(model, executor=executor, **kwargs).run(output_names, feeds)


__all__ = ["Session", "run", "OnnxkitError"]
