"""Scan: run ``body`` once per slice of the scan inputs, carrying state between slices.

Opset 9+ (no batch axis):

    T = scan_1.shape[axis_1]              (the same for every scan input)
    for t in 0..T-1:
        si_j = scan_j<axis_j>[t, or T-1-t when scan_input_directions[j] = 1]
        *state, *so = body(*state, *si)
        append (or prepend, when scan_output_directions[k] = 1) so_k to scan_out_k
    return *state, *stack(scan_out_k, axis=scan_output_axes[k])

Opset 8 adds a batch axis 0 (states are batched too), scans axis 1, and takes an
optional first input ``sequence_lens``: batch b runs ``sequence_lens[b]`` steps and
its scan outputs are zero-padded to the longest sequence. The states and scan values
kept between steps count towards the run's memory budget (``ctx.budget``).
https://onnx.ai/onnx/operators/onnx__Scan.html
"""

import numpy as np

from onnxkit.errors import GraphError, InputError, describe_node
from onnxkit.ops.control._body import (Kept, check_tensor_scan_output, check_trips,
                                       count_iterations, empty_stack, stacked_bytes)
from onnxkit.ops.registry import op


@op("Scan", 9, 11, 16, 19, 21, 23, 24, 25, context=True)
def scan(*args, body, num_scan_inputs, scan_input_axes=None, scan_input_directions=None,
         scan_output_axes=None, scan_output_directions=None, ctx):
    n_state, n_scan_out = _split_counts(ctx, body, len(args), num_scan_inputs)
    states, scan_inputs = list(args[:n_state]), args[n_state:]
    in_axes = _per_item(scan_input_axes, num_scan_inputs)
    in_axes = [a + x.ndim if a < 0 else a for a, x in zip(in_axes, scan_inputs)]
    in_dirs = _per_item(scan_input_directions, num_scan_inputs)
    lengths = {x.shape[a] for x, a in zip(scan_inputs, in_axes)}
    if len(lengths) != 1:
        raise InputError(
            f"{describe_node(ctx.node)}: scan inputs have different lengths along their scan "
            f"axes: {sorted(lengths)}"
        )
    steps = lengths.pop()
    check_trips(ctx.node, steps, ctx.limits.max_loop_iterations)
    count_iterations(ctx, steps)
    collected: list[list] = [[] for _ in range(n_scan_out)]
    kept, own_states = Kept(ctx), []
    run_body = ctx.runner(body)
    for t in range(steps):
        slices = [np.take(x, steps - 1 - t if d else t, axis=a)
                  for x, a, d in zip(scan_inputs, in_axes, in_dirs)]
        outs = kept.run(run_body, states + slices, "step {}", t)
        for k, value in enumerate(outs[n_state:]):
            check_tensor_scan_output(ctx.node, value, k)
        kept.release(own_states)
        kept.charge(outs, f"states and scan outputs of step {t}")
        states = own_states = list(outs[:n_state])
        for k, value in enumerate(outs[n_state:]):
            collected[k].append(value)
    out_axes = _per_item(scan_output_axes, n_scan_out)
    out_dirs = _per_item(scan_output_directions, n_scan_out)
    kept.check(sum(map(stacked_bytes, collected)), f"stacking {steps} steps' scan outputs")
    kept.release_all()
    stacked = []
    for k, values in enumerate(collected):
        if not values:
            stacked.append(empty_stack(ctx.node, n_state + k, out_axes[k]))
            continue
        if out_dirs[k]:
            values = values[::-1]
        stacked.append(np.stack(values, axis=out_axes[k]))
    return tuple(states + stacked)


@op("Scan", 8, context=True)
def scan_8(sequence_lens, *args, body, num_scan_inputs, directions=None, ctx):
    n_state, n_scan_out = _split_counts(ctx, body, len(args), num_scan_inputs)
    inits, scan_inputs = args[:n_state], args[n_state:]
    dirs = _per_item(directions, num_scan_inputs)
    batch, max_len = scan_inputs[0].shape[:2]
    lens = [max_len] * batch if sequence_lens is None else [int(v) for v in sequence_lens]
    if len(lens) != batch or any(not 0 <= n <= max_len for n in lens):
        raise InputError(
            f"{describe_node(ctx.node)}: sequence_lens must hold {batch} lengths in "
            f"[0, {max_len}], got {lens}"
        )
    check_trips(ctx.node, sum(lens), ctx.limits.max_loop_iterations)
    count_iterations(ctx, sum(lens))
    final_states: list[list] = [[] for _ in range(n_state)]
    batched_scans: list[list] = [[] for _ in range(n_scan_out)]
    kept = Kept(ctx)
    run_body = ctx.runner(body)
    for b in range(batch):
        states, own_states = [s[b] for s in inits], []
        collected: list[list] = [[] for _ in range(n_scan_out)]
        for t in range(lens[b]):
            slices = [x[b, lens[b] - 1 - t if d else t] for x, d in zip(scan_inputs, dirs)]
            outs = kept.run(run_body, states + slices, "batch {}, step {}", b, t)
            for k, value in enumerate(outs[n_state:]):
                check_tensor_scan_output(ctx.node, value, k)
            kept.release(own_states)
            kept.charge(outs, f"states and scan outputs of batch {b}, step {t}")
            states = own_states = list(outs[:n_state])
            for k, value in enumerate(outs[n_state:]):
                collected[k].append(value)
        for i, s in enumerate(states):
            final_states[i].append(s)
        for k, values in enumerate(collected):
            padded = _padded(values, max_len, ctx.node, n_state + k)
            kept.release(values)
            kept.charge(padded, f"batch {b}'s padded scan output {k}")
            batched_scans[k].append(padded)
    kept.check(sum(map(stacked_bytes, batched_scans + final_states)), "stacking the batches")
    kept.release_all()
    outputs = [np.stack(s) if batch else np.asarray(init) for s, init in zip(final_states, inits)]
    for k, values in enumerate(batched_scans):
        if batch:
            outputs.append(np.stack(values))
        else:
            template = empty_stack(ctx.node, n_state + k)
            outputs.append(np.empty((0, max_len, *template.shape[1:]), dtype=template.dtype))
    return tuple(outputs)


def _padded(values: list, max_len: int, node, output_index: int) -> np.ndarray:
    """Stack one batch's scan values and zero-pad them to ``max_len`` steps."""
    if not values:
        template = empty_stack(node, output_index)
        return np.zeros((max_len, *template.shape[1:]), dtype=template.dtype)
    stacked = np.stack(values)
    if len(values) == max_len:
        return stacked
    pad = np.zeros((max_len - len(values), *stacked.shape[1:]), dtype=stacked.dtype)
    return np.concatenate([stacked, pad])


def _split_counts(ctx, body, n_args: int, num_scan_inputs: int) -> tuple[int, int]:
    n_state = n_args - num_scan_inputs
    n_scan_out = len(body.output_names) - n_state
    if num_scan_inputs < 1 or n_state < 0 or n_scan_out < 0:
        raise GraphError(
            f"{describe_node(ctx.node)}: num_scan_inputs={num_scan_inputs} does not fit "
            f"{n_args} state and scan inputs and a body with {len(body.output_names)} outputs"
        )
    return n_state, n_scan_out


def _per_item(values, count: int) -> list[int]:
    return [0] * count if values is None else [int(v) for v in values]
