"""The top layer: ``Session(level=)``, ``run``, ``optimize`` and ``bisect``, composing the
runtime (which plans and runs) with the optimizer (which sits above it).

    sess = onnxkit.Session("model.onnx", executor="cpu", level=2)
    sess.optimization_report      # what each pass changed
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from onnx import ModelProto

from onnxkit.errors import GraphError, LimitExceededError, OnnxkitError
from onnxkit.loading import ModelLike, load
from onnxkit.runtime import session as _runtime
from onnxkit.runtime.limits import Limits
from onnxkit.runtime.trace import TraceCallback


class Session(_runtime.Session):
    """Plan a model once; ``run`` it many times, from any number of threads.

    ``level`` 1-3 optimizes the model first (``onnxkit.optimize``); the report of what
    each pass changed is ``optimization_report``.

    >>> sess = Session("model.onnx", executor="reference", level=1)
    >>> y, = sess.run(None, {"x": x})
    """

    def __init__(self, model: ModelLike, executor: str = "reference", level: int = 0, *,
                 limits: Limits | None = None, trace: TraceCallback | None = None,
                 tune: bool | None = None):
        self.level = level
        super().__init__(model, executor, limits=limits, trace=trace, tune=tune)

    def _rewrite(self, proto: ModelProto, reuse_source: bool) -> ModelProto:
        if not self.level:
            return proto
        proto, self.optimization_report = _optimized(proto, self.level, reuse_source)
        return proto


def _optimized(model: ModelProto, level: int, reuse_source: bool = False):
    """``optimize(model, level)``; a model the optimizer cannot handle is an onnxkit error."""
    from onnxkit.optimizer import optimize as _optimize  # here: a session at level 0 needs none

    try:
        return _optimize(model, level, reuse_source=reuse_source)
    except OnnxkitError:
        raise
    except RecursionError as exc:
        raise LimitExceededError(f"the model nests too deeply to optimize: {exc}") from exc
    except Exception as exc:
        raise GraphError(
            f"the optimizer (level {level}) could not handle this model: {type(exc).__name__}: "
            f"{exc}; level=0 runs it unoptimized"
        ) from exc


def run(model: ModelLike, feeds: Mapping[str, Any], output_names: Sequence[str] | None = None,
        executor: str = "reference", **kwargs) -> list:
    """One-shot: ``onnxkit.run(model, {"x": x})`` -> list of outputs (``level=`` and the
    other ``Session`` options pass through)."""
    return Session(model, executor=executor, **kwargs).run(output_names, feeds)


def optimize(model, level: int = 1):
    """Optimize ``model`` at ``level`` 0-3: ``(optimized ModelProto, Report)``."""
    from onnxkit.optimizer import optimize as _optimize

    return _optimize(load(model), level)


def bisect(model: ModelLike, feeds: Mapping[str, Any], level: int = 2, rtol: float = 1e-4,
           atol: float = 1e-5, *, executor: str = "reference", passes=None):
    """The first rewrite of ``level`` after which the outputs leave tolerance
    (``onnxkit.optimizer.bisect``): a ``BisectResult``."""
    from onnxkit.optimizer.bisect import bisect as _bisect

    return _bisect(model, feeds, level, rtol, atol, executor=executor, passes=passes)


__all__ = ["Session", "run", "optimize", "bisect"]
