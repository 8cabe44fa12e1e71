"""Loop: repeat ``body`` while the trip count lasts and the condition holds.

    state = v_initial; k = 0
    while (M is None or k < M) and (cond is None or cond):
        cond, *state, *scan = body(k, cond, *state)
        collect scan outputs; k += 1
    return *state, *stack(scan outputs)

https://onnx.ai/onnx/operators/onnx__Loop.html
"""

import numpy as np

from onnxkit.errors import LimitExceededError, describe_node
from onnxkit.ops.registry import op


@op("Loop", 1, 11, 13, 16, 19, 21, 23, 24, 25, context=True)
def loop(M, cond, *v_initial, body, ctx):
    n_state = len(v_initial)
    trip_limit = None if M is None else int(M.reshape(-1)[0])
    keep_going = True if cond is None else bool(cond.reshape(-1)[0])
    state = list(v_initial)
    scans: list[list] = []
    k = 0
    cap = ctx.limits.max_loop_iterations
    while keep_going and (trip_limit is None or k < trip_limit):
        if k >= cap:
            raise LimitExceededError(
                f"{describe_node(ctx.node)}: ran {k} iterations, over the limit "
                f"max_loop_iterations={cap}"
            )
        cond_in = np.array(keep_going)
        outs = ctx.run(body, [np.array(k, dtype=np.int64), cond_in, *state])
        keep_going = bool(np.asarray(outs[0]).reshape(-1)[0])
        state = list(outs[1:1 + n_state])
        for i, value in enumerate(outs[1 + n_state:]):
            if len(scans) <= i:
                scans.append([])
            scans[i].append(value)
        k += 1
    n_scan = len(body.output_names) - 1 - n_state
    stacked = [_stack(scans[i] if i < len(scans) else [], body, 1 + n_state + i) for i in range(n_scan)]
    return tuple(state + stacked)


def _stack(values: list, body, index: int):
    if values:
        if isinstance(values[0], list):  # sequence scan output (opset 13+)
            return values
        return np.stack(values)
    return np.empty((0,), dtype=np.float32)
