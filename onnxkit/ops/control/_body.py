"""Helpers shared by the control-flow kernels (not an operator module).

Loop and Scan stack what their body emits each iteration; when the body never runs,
the empty result takes its dtype and rank from the body's declared output types. What
they keep between body runs (loop state, scan outputs so far) is charged to the run's
memory budget (``Kept``), so a loop that grows its state fails at the iteration that
would overflow the budget, naming the node.
"""

from __future__ import annotations

import numpy as np
from onnx import GraphProto, NodeProto

from onnxkit.errors import GraphError, LimitExceededError, describe_node
from onnxkit.core.values import np_dtype, value_bytes


def body_graph(node: NodeProto, name: str = "body") -> GraphProto | None:
    """The GraphProto of the node's subgraph attribute ``name`` (None when referenced)."""
    for attr in node.attribute:
        if attr.name == name and attr.HasField("g"):
            return attr.g
    return None


def empty_stack(node: NodeProto, output_index: int, new_axis: int = 0,
                name: str = "body") -> np.ndarray:
    """An empty stacked scan output: shape ``(0, *declared element dims)``.

    Unknown or symbolic element dims become 0 (the result is empty either way); a body
    output without a declared tensor type gives a float32 ``(0,)``.
    """
    graph = body_graph(node, name)
    if graph is None or output_index >= len(graph.output):
        return np.empty((0,), dtype=np.float32)
    tp = graph.output[output_index].type
    if tp.WhichOneof("value") != "tensor_type":
        return np.empty((0,), dtype=np.float32)
    tt = tp.tensor_type
    dtype = np_dtype(tt.elem_type) if tt.elem_type else np.dtype(np.float32)
    if not tt.HasField("shape"):
        return np.empty((0,), dtype=dtype)
    dims = [d.dim_value if d.HasField("dim_value") else 0 for d in tt.shape.dim]
    axis = new_axis if new_axis >= 0 else new_axis + len(dims) + 1
    dims.insert(axis, 0)
    return np.empty(tuple(dims), dtype=dtype)


def check_tensor_scan_output(node: NodeProto, value, index: int) -> None:
    """Scan outputs are stacked, so they must be tensors (the spec: "Scan outputs must be Tensors")."""
    if not isinstance(value, np.ndarray):
        kind = "an empty optional" if value is None else type(value).__name__
        raise GraphError(
            f"{describe_node(node)}: scan output {index} of the body is {kind}; scan outputs "
            f"must be tensors (carry sequences and optionals as loop state instead)"
        )


def check_trips(node: NodeProto, trips: int, cap: int) -> None:
    if trips > cap:
        raise LimitExceededError(
            f"{describe_node(node)}: would run {trips} iterations, over the limit "
            f"max_loop_iterations={cap}"
        )


def count_iterations(ctx, n: int = 1) -> None:
    """Add ``n`` body runs to the run's total, which ``max_loop_iterations`` also bounds:
    loops nested in loops multiply their trips, and each level alone may look small."""
    state = ctx.state
    state.loop_iterations += n
    cap = ctx.limits.max_loop_iterations
    if state.loop_iterations > cap:
        raise LimitExceededError(
            f"{describe_node(ctx.node)}: this run has reached {state.loop_iterations} loop "
            f"iterations (Loop, Scan and SequenceMap bodies, nested ones included), over the "
            f"limit max_loop_iterations={cap}"
        )


class Kept:
    """The bytes a control kernel keeps between its body runs, charged to the run's budget.

        kept = Kept(ctx)
        run = ctx.runner(body)
        outs = kept.run(run, inputs, "iteration {}", 3)   # errors say whose body
        kept.charge(new_values, "...")   # raises LimitExceededError naming the node
        kept.release(old_values)         # values it no longer holds
        kept.check(nbytes, "...")        # before allocating (e.g. the stacked outputs)
        kept.release_all()               # before returning: the evaluator charges results
    """

    __slots__ = ("budget", "node", "nbytes")

    def __init__(self, ctx):
        self.budget, self.node, self.nbytes = ctx.budget, ctx.node, 0

    def charge(self, values, what: str) -> int:
        nbytes = value_bytes(values)
        self.budget.charge(nbytes, what, self.node)
        self.nbytes += nbytes
        return nbytes

    def charge_bytes(self, nbytes: int, what: str, *what_args) -> None:
        """``charge`` for values already counted (``what`` formatted only on failure)."""
        if self.budget.live + nbytes > self.budget.limit:
            self.budget.charge(nbytes, what.format(*what_args), self.node)  # (raises)
        self.budget.live += nbytes
        self.nbytes += nbytes

    def release(self, values) -> None:
        nbytes = value_bytes(values)
        self.budget.release(nbytes)
        self.nbytes -= nbytes

    def check(self, nbytes: int, what: str) -> None:
        self.budget.check(nbytes, what, self.node)

    def run(self, run, inputs: list, where: str, *where_args) -> list:
        """``run(inputs)`` (a ``ctx.runner(body)``); a budget overrun inside the body also
        says which node's body it was, ``where.format(*where_args)`` in its run (formatted
        only then) and what the node keeps so far."""
        try:
            return run(inputs)
        except LimitExceededError as exc:
            self.explain(exc, where, *where_args)

    def explain(self, exc: LimitExceededError, where: str, *where_args):
        """Raise ``exc``, a body's error; a budget overrun says which node's body it was,
        where in its run, and what the node keeps so far."""
        if "max_run_bytes" not in str(exc):
            raise exc
        raise LimitExceededError(
            f"{exc}; in the body of {describe_node(self.node)} at "
            f"{where.format(*where_args)}, which keeps "
            f"{self.nbytes:,} bytes of state and scan outputs"
        ) from exc

    def release_all(self) -> None:
        self.budget.release(self.nbytes)
        self.nbytes = 0


def stacked_bytes(values: list) -> int:
    """Bytes ``np.stack(values)`` allocates."""
    return value_bytes(values)
