"""What a node costs beyond its arithmetic: a chain of tiny nodes, and a Loop of Identities.

    python -m benchmarks.node_overhead [--nodes 500] [--trips 2000] [--repeat 7]
                                       [--clock thread|wall] [--runtimes ...]

Two models, each run by every runtime in this one process:

- ``chain``: ``nodes`` Add / Mul / Relu nodes in a row on float32[1, 16] (Add and Mul
  with a constant): the kernels do next to nothing, so the time per node is what the
  evaluator and a kernel's call cost.
- ``loop``: one ``Loop`` of ``trips`` iterations whose body is two Identity nodes (the
  condition and one float32[1, 16] state value passed through): the time per iteration
  is what running a body costs.

Prints microseconds per node / per iteration: the fastest of ``repeat`` batches of runs.
The default clock is this thread's CPU time, which a busy machine disturbs less than the
wall clock; onnxruntime runs with one intra-op thread (the calling one) and its graph
optimizations off (DISABLE_ALL), so it runs the same nodes. The targets of the cpu
executor's rebuild (docs/cpu.md) are checked against these figures; ``--check`` exits 1
when one is missed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from onnx import TensorProto, helper

RUNTIMES = ("onnxkit-cpu", "onnxkit-reference", "onnxruntime")
#: (model, runtime) -> the most microseconds per node / iteration the rebuild allows
TARGETS = {("chain", "onnxkit-cpu"): 1.5, ("chain", "onnxkit-reference"): 4.0,
           ("loop", "onnxkit-cpu"): 4.0, ("loop", "onnxkit-reference"): 4.0}
SHAPE = [1, 16]


def chain_model(nodes: int):
    """x -> Add(c) -> Mul(c) -> Relu -> Add(c) ... ``nodes`` nodes, float32[1, 16]."""
    ops, prev = [], "x"
    for i in range(nodes):
        kind = ("Add", "Mul", "Relu")[i % 3]
        out = f"v{i}" if i < nodes - 1 else "y"
        inputs = [prev] if kind == "Relu" else [prev, "c"]
        ops.append(helper.make_node(kind, inputs, [out], name=f"n{i}"))
        prev = out
    c = np.linspace(0.5, 1.0, int(np.prod(SHAPE)), dtype=np.float32)
    graph = helper.make_graph(
        ops, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor("c", TensorProto.FLOAT, SHAPE, c)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def loop_model(trips: int):
    """Loop(M=trips) over a body of two Identity nodes carrying x: float32[1, 16]."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"], name="pass_cond"),
         helper.make_node("Identity", ["x_in"], ["x_out"], name="pass_x")],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, SHAPE)])
    loop = helper.make_node("Loop", ["M", "cond", "x"], ["y"], body=body, name="loop")
    graph = helper.make_graph(
        [loop], "loop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor("M", TensorProto.INT64, [], [trips]),
         helper.make_tensor("cond", TensorProto.BOOL, [], [True])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def runner(runtime: str, model):
    """A callable running ``model`` once on ``runtime``."""
    if runtime == "onnxruntime":
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(model.SerializeToString(), opts,
                                    providers=["CPUExecutionProvider"])
    else:
        import onnxkit

        sess = onnxkit.Session(model, executor=runtime.split("-", 1)[1])
    feeds = {"x": np.linspace(-1.0, 1.0, int(np.prod(SHAPE)), dtype=np.float32).reshape(SHAPE)}
    return lambda: sess.run(None, feeds)


def us_per_unit(run, units: int, repeat: int, runs: int, clock=time.thread_time) -> float:
    """Microseconds per node (or iteration): the fastest of ``repeat`` batches of ``runs``."""
    run()
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        for _ in range(runs):
            run()
        best = min(best, (clock() - start) / runs)
    return best / units * 1e6


def measure(runtimes, nodes: int, trips: int, repeat: int, clock) -> dict:
    """{(model, runtime): microseconds per node / iteration}."""
    models = {"chain": (chain_model(nodes), nodes, 50), "loop": (loop_model(trips), trips, 10)}
    return {(name, rt): us_per_unit(runner(rt, model), units, repeat, runs, clock)
            for name, (model, units, runs) in models.items() for rt in runtimes}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--trips", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--clock", choices=("thread", "wall"), default="thread")
    parser.add_argument("--runtimes", nargs="*", default=list(RUNTIMES), choices=RUNTIMES)
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    clock = time.thread_time if args.clock == "thread" else time.perf_counter
    got = measure(args.runtimes, args.nodes, args.trips, args.repeat, clock)
    ort = {m: got.get((m, "onnxruntime")) for m in ("chain", "loop")}
    print(f"| model | runtime | us per {'node / iteration'} | x onnxruntime | target |")
    print("|---|---|---:|---:|---:|")
    missed = []
    for (model, rt), us in got.items():
        ratio = f"{us / ort[model]:.1f}" if ort[model] else "-"
        target = TARGETS.get((model, rt))
        if target is not None and us > target:
            missed.append(f"{model} on {rt}: {us:.2f} > {target}")
        print(f"| {model} | {rt} | {us:.2f} | {ratio} | {target if target else '-'} |")
    print(f"\nchain: {args.nodes} Add/Mul/Relu nodes on float32{SHAPE}; loop: {args.trips} "
          f"iterations of a two-Identity body; {args.clock} clock, best of {args.repeat}")
    for line in missed:
        print("target missed:", line)
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
