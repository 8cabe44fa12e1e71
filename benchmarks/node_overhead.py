"""Per-node cost of the evaluator: a chain of tiny Add / Mul / Relu nodes.

    python -m benchmarks.node_overhead [--nodes 500] [--executor reference] [--repeat 7]
                                       [--clock thread|wall]

Prints microseconds per node (the fastest of ``repeat`` batches of runs, divided by the
node count): the kernels do next to nothing on a 4-element tensor, so the figure is what
a node costs beyond its arithmetic. The default clock is this thread's CPU time, which a
busy machine disturbs less than the wall clock (use ``--clock wall`` for executors that
run kernels on other threads). Compare two figures only from the same machine.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from onnx import TensorProto, helper


def chain_model(nodes: int):
    """x -> Add(c) -> Mul(c) -> Relu -> Add(c) ... ``nodes`` nodes, float32[4]."""
    ops, prev = [], "x"
    for i in range(nodes):
        kind = ("Add", "Mul", "Relu")[i % 3]
        out = f"v{i}" if i < nodes - 1 else "y"
        inputs = [prev] if kind == "Relu" else [prev, "c"]
        ops.append(helper.make_node(kind, inputs, [out], name=f"n{i}"))
        prev = out
    graph = helper.make_graph(
        ops, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [helper.make_tensor("c", TensorProto.FLOAT, [4], [1.0, 0.5, 0.25, 1.0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def us_per_node(executor: str, nodes: int, repeat: int, runs: int = 50,
                clock=time.thread_time) -> float:
    import onnxkit

    sess = onnxkit.Session(chain_model(nodes), executor=executor)
    feeds = {"x": np.array([0.5, -1.0, 2.0, 0.0], np.float32)}
    sess.run(None, feeds)
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        for _ in range(runs):
            sess.run(None, feeds)
        best = min(best, (clock() - start) / runs)
    return best / nodes * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--executor", default="reference")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--clock", choices=("thread", "wall"), default="thread")
    args = parser.parse_args()
    clock = time.thread_time if args.clock == "thread" else time.perf_counter
    cost = us_per_node(args.executor, args.nodes, args.repeat, clock=clock)
    print(f"{args.executor}: {cost:.3f} us/node ({args.nodes}-node chain of Add/Mul/Relu on "
          f"float32[4], {args.clock} clock)")


if __name__ == "__main__":
    main()
