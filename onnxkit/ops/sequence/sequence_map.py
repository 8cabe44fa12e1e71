"""SequenceMap: run ``body`` once per position of the input sequence.

    for i in 0..len(input_sequence)-1:
        args = [input_sequence[i]] + [a[i] if a is a sequence else a for a in additional_inputs]
        append each output of body(*args) to its output sequence

Sequences among the additional inputs must be as long as ``input_sequence``; the
outputs gathered so far count towards the run's memory budget (``ctx.budget``).
https://onnx.ai/onnx/operators/onnx__SequenceMap.html
"""

from onnxkit.errors import InputError, describe_node
from onnxkit.ops.control._body import Kept, check_trips, count_iterations
from onnxkit.ops.registry import op


@op("SequenceMap", 17, context=True)
def sequence_map(input_sequence, *additional_inputs, body, ctx):
    n = len(input_sequence)
    for extra in additional_inputs:
        if isinstance(extra, list) and len(extra) != n:
            raise InputError(
                f"{describe_node(ctx.node)}: an additional sequence has {len(extra)} tensors, "
                f"input_sequence has {n}"
            )
    check_trips(ctx.node, n, ctx.limits.max_loop_iterations)
    count_iterations(ctx, n)
    results: list[list] = [[] for _ in body.output_names]
    kept = Kept(ctx)
    run_body = ctx.runner(body)
    for i in range(n):
        args = [input_sequence[i]] + [a[i] if isinstance(a, list) else a for a in additional_inputs]
        outs = kept.run(run_body, args, "position {}", i)
        kept.charge(outs, f"the outputs of position {i}")
        for k, value in enumerate(outs):
            results[k].append(value)
    kept.release_all()
    return tuple(results)
