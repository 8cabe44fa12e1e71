"""What a step's kernel gave back or raised, as the evaluator's two paths (the loop,
``evaluator``, and the straight-line function, ``straight_line``) both report it."""

from __future__ import annotations

import numpy as np

from onnxkit.core.limits import MemoryBudget
from onnxkit.errors import GraphError, KernelError, OnnxkitError, describe_node
from onnxkit.runtime.values import describe_value


def over(budget: MemoryBudget, live: int, nbytes: int, step):
    """Raise for a step whose ``nbytes`` of outputs took the run's total to ``live``,
    over the budget."""
    budget.live = live - nbytes
    raise budget.exceeded(nbytes, "its outputs", step.node)


def fail(step, args: list, exc: Exception):
    """Raise for a kernel's failure (inside its ``except``): an onnxkit error naming the
    node (as it came when it names one already); any other error as a ``KernelError``
    saying which node failed, with which inputs."""
    if isinstance(exc, OnnxkitError):
        if str(exc).startswith("node "):
            raise exc
        raise type(exc)(f"{describe_node(step.node)}: {exc}") from exc
    shown = ", ".join(f"{n or '<absent>'}: {describe_value(v)}" for n, v in zip(step.inputs, args))
    raise KernelError(
        f"{describe_node(step.node)} failed in kernel {step.kernel.qualified_name} "
        f"(opset {step.opset}) with inputs [{shown}]: {type(exc).__name__}: {exc}"
    ) from exc


def results(step, result, state) -> tuple:
    """A kernel's result as a tuple of values, checked against what the node needs."""
    values = result if type(result) is tuple else (result,)
    if len(values) < step.wanted:
        raise KernelError(
            f"{describe_node(step.node)}: kernel {step.kernel.qualified_name} returned "
            f"{len(values)} value(s), the node needs {step.wanted}"
        )
    # arrays (nearly every result) as they are; numbers and the like become arrays
    return tuple([v if type(v) is np.ndarray else as_value(v, state.executor) for v in values])


def as_value(value, executor):
    if isinstance(value, (np.ndarray, list, dict)) or value is None or executor.owns(value):
        return value
    return np.asarray(value)


def not_available(scope, names, where: str) -> GraphError:
    """The error for the first of ``names`` (read by ``where``) that ``scope`` lacks."""
    return missing(next(name for name in names if name and name not in scope), where)


def missing(name: str, where: str) -> GraphError:
    """The error for value ``name``, read by ``where``, that no feed, initializer, step or
    enclosing graph gives."""
    return GraphError(f"{where}: value {name!r} is not available (an input not fed?)")
