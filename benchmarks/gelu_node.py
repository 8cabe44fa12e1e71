"""One Gelu node, onnxkit ``cpu`` against onnxruntime, runs interleaved.

    python -m benchmarks.gelu_node [--shape 1 16 3072] [--approximate tanh] [--runs 2000]
                                   [--threads 1]

A model of one opset-20 ``Gelu`` on float32 values from a standard normal (times 3),
run by an onnxkit cpu Session and an onnxruntime InferenceSession (``--threads`` intra-op
threads, graph optimizations off) in one process, alternately, ``runs`` times each.
Prints the fastest and the median run of each in microseconds and the ratio of the
fastest: on a shared machine the fastest is the run least disturbed by others.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from onnx import TensorProto, helper


def gelu_model(shape, approximate: str):
    node = helper.make_node("Gelu", ["x"], ["y"], approximate=approximate)
    graph = helper.make_graph([node], "gelu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gelu_node",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs="+", default=[1, 16, 3072])
    parser.add_argument("--approximate", choices=("none", "tanh"), default="tanh")
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)

    import onnxruntime as ort

    import onnxkit

    model = gelu_model(args.shape, args.approximate)
    x = (np.random.default_rng(0).standard_normal(args.shape) * 3).astype(np.float32)
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = args.threads, 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    runs = {"onnxkit-cpu": onnxkit.Session(model, executor="cpu").run,
            "onnxruntime": ort.InferenceSession(model.SerializeToString(), so,
                                                providers=["CPUExecutionProvider"]).run}
    times = {name: [] for name in runs}
    for run in runs.values():  # compiled / loaded, buffers allocated
        for _ in range(20):
            run(None, {"x": x})
    for _ in range(args.runs):
        for name, run in runs.items():
            start = time.perf_counter()
            run(None, {"x": x})
            times[name].append(time.perf_counter() - start)
    print(f"Gelu(approximate={args.approximate!r}) on float32{args.shape}, "
          f"{args.runs} interleaved runs, onnxruntime on {args.threads} thread(s)")
    for name, t in times.items():
        print(f"  {name:12s} min {min(t) * 1e6:8.1f} us   median {np.median(t) * 1e6:8.1f} us")
    ratio = min(times["onnxkit-cpu"]) / min(times["onnxruntime"])
    print(f"  onnxkit-cpu / onnxruntime (min): {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
