"""Loop: repeat ``body`` while the trip count lasts and the condition holds.

    state = v_initial; k = 0; keep_going = cond if given else True
    while (M is None or k < M) and keep_going:
        keep_going, *state, *scan = body(k, keep_going, *state)
        append each scan value to its list; k += 1
    return *state, *stack(each scan list along a new axis 0)

Loop-carried values may be tensors, sequences or optionals (opset 13+); scan outputs
must be tensors. A loop that never runs returns ``v_initial`` and empty scan outputs
shaped ``(0, ...)`` from the body's declared output types. At most
``ctx.limits.max_loop_iterations`` iterations run, counting those of every loop of the
run (nested loops included); the state and scan values kept between iterations count
towards the run's memory budget (``ctx.budget``).
https://onnx.ai/onnx/operators/onnx__Loop.html
"""

import numpy as np

from onnxkit.errors import GraphError, LimitExceededError, describe_node
from onnxkit.core.values import value_bytes
from onnxkit.ops.control._body import (Kept, check_tensor_scan_output, count_iterations,
                                       empty_stack, stacked_bytes)
from onnxkit.ops.registry import op


_BLOCK = 1024


def _numbers(start: int) -> np.ndarray:
    """Iteration numbers start.. start + _BLOCK - 1, read-only (bodies may keep them)."""
    numbers = np.arange(start, start + _BLOCK, dtype=np.int64)
    numbers.flags.writeable = False
    return numbers


_ITERATIONS = _numbers(0)
_TRUE = np.array(True)  # an iteration runs only while the condition holds
_TRUE.flags.writeable = False


@op("Loop", 1, 11, 13, 16, 19, 21, 23, 24, 25, context=True)
def loop(M, cond, *v_initial, body, ctx):
    n_state = len(v_initial)
    n_scan = len(body.output_names) - 1 - n_state
    if n_scan < 0 or len(body.input_names) != 2 + n_state:
        raise GraphError(
            f"{describe_node(ctx.node)}: with {n_state} loop-carried value(s) the body must "
            f"take {2 + n_state} inputs (iteration, cond, state...) and return at least "
            f"{1 + n_state}; it takes {len(body.input_names)} and returns {len(body.output_names)}"
        )
    trip_limit = None if M is None else int(M.reshape(-1)[0])
    keep_going = True if cond is None else bool(cond.reshape(-1)[0])
    cap = ctx.limits.max_loop_iterations
    run_state, budget = ctx.state, ctx.budget
    state = list(v_initial)  # charged by the enclosing graph; later states by ``kept``
    kept, state_bytes = Kept(ctx), 0
    run_body = ctx.runner(body)
    numbers, base = _ITERATIONS, 0  # k as a read-only 0-d array: numbers[k - base, ...]
    scans: list[list] = [[] for _ in range(n_scan)]
    k = 0
    while keep_going and (trip_limit is None or k < trip_limit):
        if k >= cap:
            raise LimitExceededError(
                f"{describe_node(ctx.node)}: ran {k} iterations, over the limit "
                f"max_loop_iterations={cap}"
            )
        run_state.loop_iterations += 1
        if run_state.loop_iterations > cap:
            count_iterations(ctx, 0)  # (raises, saying so)
        if k - base >= _BLOCK:
            numbers, base = _numbers(k), k
        try:
            outs = run_body([numbers[k - base, ...], _TRUE, *state])
        except LimitExceededError as exc:
            kept.explain(exc, "iteration {}", k)
        go = outs[0]
        keep_going = bool(go) if type(go) is np.ndarray and go.size == 1 else \
            bool(np.asarray(go).reshape(-1)[0])
        # the body's inputs are gone with its scope: the old state is replaced, scan
        # outputs kept (charged first, as they would not fit otherwise)
        new_bytes = 0
        for value in outs[1:]:
            new_bytes += value.nbytes if type(value) is np.ndarray else value_bytes(value)
        kept.nbytes -= state_bytes
        budget.live -= state_bytes
        if budget.live + new_bytes > budget.limit:
            kept.charge_bytes(new_bytes, "loop state and scan outputs of iteration {}", k)
        budget.live += new_bytes
        kept.nbytes += new_bytes
        state = outs[1:1 + n_state]
        state_bytes = new_bytes
        if n_scan:
            for i, value in enumerate(outs[1 + n_state:]):
                check_tensor_scan_output(ctx.node, value, i)
                scans[i].append(value)
                state_bytes -= value_bytes(value)  # scan outputs stay charged to the end
        k += 1
    kept.check(sum(map(stacked_bytes, scans)), f"stacking {k} iterations' scan outputs")
    stacked = [np.stack(values) if values else empty_stack(ctx.node, 1 + n_state + i)
               for i, values in enumerate(scans)]
    kept.release_all()
    return tuple(list(state) + stacked)
