"""Where an executor's outputs drift from onnxruntime's, node by node, on spec cases.

    python -m benchmarks.reference_drift                       # the light model-zoo nets
    python -m benchmarks.reference_drift --cases 'light:test_vgg19' --executor cpu

For each case: its status on the executor (and why, when it is not "pass"), then the same
model with every node's outputs made graph outputs, run on the executor and on
onnxruntime's CPU provider with the case's inputs: the first nodes (in graph order) whose
output differs from onnxruntime's beyond the case's relative tolerance (of each value, or of
the tensor's largest value for values near zero), with their op type and the
largest differences. Also how far each runtime's final outputs are from the expected ones.
Used on the lent GPU machine (numpy 2.5 there), where the reference failed the light nets
that it passes here; prints only.
"""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np


def _differences(a, b) -> tuple[float, float]:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float("inf"), float("inf")
    if a.size == 0:
        return 0.0, 0.0
    diff = np.abs(a - b)
    return float(diff.max()), float((diff / np.maximum(np.abs(b), 1e-30)).max())


def _every_output(model):
    """The model with each node's (typed) outputs added as graph outputs."""
    import onnx
    from onnx import shape_inference

    inferred = shape_inference.infer_shapes(model)
    typed = {vi.name: vi for vi in inferred.graph.value_info}
    extended = onnx.ModelProto()
    extended.CopyFrom(model)
    have = {o.name for o in model.graph.output}
    names = []
    for node in model.graph.node:
        for name in node.output:
            if name and name not in have and name in typed:
                extended.graph.output.append(typed[name])
                names.append((name, node))
    return extended, names


def drift(case, executor: str, shown: int) -> None:
    import onnxruntime as ort

    from onnxkit.conformance import run_case
    from onnxkit.conformance.runner import onnxkit_runner
    from onnxkit.runtime.session import Session

    result = run_case(case, onnxkit_runner(executor))
    print(f"\n== {case.kind}:{case.name}  {executor}: {result.status}  {result.message[:600]}")
    inputs, expected = case.data_sets[0]
    feeds = case.feeds(inputs)
    model, names = _every_output(case.model)
    ours = Session(model, executor=executor).run(None, feeds)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4
    theirs = ort.InferenceSession(model.SerializeToString(), options,
                                  providers=["CPUExecutionProvider"]).run(None, feeds)
    n_final = len(case.model.graph.output)
    for i, want in enumerate(expected):
        print(f"   output {i} vs expected: {executor} abs/rel {_differences(ours[i], want)}, "
              f"onnxruntime {_differences(theirs[i], want)}")
    bad = 0
    for (name, node), a, b in zip(names, ours[n_final:], theirs[n_final:]):
        b = np.asarray(b)
        if b.dtype.kind not in "fc" or not b.size:
            continue
        # near-zero values of a big tensor are compared against the tensor's scale
        scale = float(np.nanmax(np.abs(b), initial=0.0))
        if not np.allclose(np.asarray(a, dtype=np.float64), b.astype(np.float64),
                           rtol=case.rtol, atol=max(case.atol, case.rtol * scale), equal_nan=True):
            absd, reld = _differences(a, b)
            print(f"   drifts at {node.op_type} {node.name or '<unnamed>'} -> {name} "
                  f"{list(b.shape)}: max abs {absd:.3g}, max rel {reld:.3g}, |ort| max "
                  f"{float(np.abs(b).max()) if b.size else 0:.3g}")
            bad += 1
            if bad >= shown:
                break
    if not bad:
        print("   every intermediate output within the case's tolerance of onnxruntime's")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reference_drift",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=r"^light:", metavar="REGEX")
    parser.add_argument("--executor", default="reference")
    parser.add_argument("--shown", type=int, default=4, help="drifting nodes shown per case")
    args = parser.parse_args(argv)
    from onnxkit.conformance import all_cases

    print("numpy", np.__version__, file=sys.stderr)
    try:
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            print(f"  {pool.get('internal_api')} {pool.get('version')} threads "
                  f"{pool.get('num_threads')} {pool.get('architecture', '')}")
    except ImportError:
        pass
    for case in all_cases():
        if re.search(args.cases, f"{case.kind}:{case.name}"):
            drift(case, args.executor, args.shown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
