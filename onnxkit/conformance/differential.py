"""Differential testing: single-node models run on every installed runtime, answers compared.

``search(spec, runtimes)`` asks Hypothesis (``hypothesis.find``) for a single-node model of
one operator version (shapes, dtypes, attributes and edge values drawn by
``differential_strategies``) on which two runtimes that both answer disagree; Hypothesis
shrinks it to a minimal one, which ``save`` keeps as a reproducible case folder:

    model.onnx      the node, at its opset
    inputs.npz      the feeds
    answers.json    each runtime's answer (shape, dtype, values) or error

Two answers agree when shape and dtype are equal and the values are within rtol 1e-4,
atol 1e-5 (NaN equal to NaN). A runtime that raises takes no side: refusing an input is
not a disagreement; every runtime runs in its own worker process (``isolation``).
``python -m onnxkit.conformance.differential OUT [OP,...]`` searches the operators of the
strategies' table and saves what it finds under OUT.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import onnx
from onnx import helper

RTOL, ATOL = 1e-4, 1e-5
DEFAULT_RUNTIMES = ("reference", "onnxruntime", "onnx.reference", "tract", "onnx2torch")


def single_node_model(op: str, opset: int, inputs: dict[str, np.ndarray], attrs: dict,
                      n_outputs: int = 1, constants: dict[str, np.ndarray] | None = None):
    """One ``op`` node at ``opset``: ``inputs`` are graph inputs, ``constants`` initializers."""
    constants = constants or {}
    names = list(inputs) + list(constants)
    outs = [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op, names, outs, **attrs)
    vi = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
          for n, a in inputs.items()]
    init = [onnx.numpy_helper.from_array(a, n) for n, a in constants.items()]
    graph = helper.make_graph([node], f"{op}_{opset}", vi,
                              [helper.make_value_info(o, onnx.TypeProto()) for o in outs], init)
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets,
                              ir_version=helper.find_min_ir_version_for(opsets, True))
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    known = {v.name: v for v in inferred.graph.output}
    del model.graph.output[:]
    model.graph.output.extend(known[o] for o in outs)
    onnx.checker.check_model(model)
    return model


def runners(names=DEFAULT_RUNTIMES) -> dict:
    """name -> ``isolation.Worker`` (a runtime may abort: tract panics on an integer Mod by
    zero), for the installed runtimes among ``names``. Close them when done."""
    from onnxkit.conformance.isolation import Worker
    from onnxkit.conformance.runtimes import version

    return {n: Worker(n) for n in names if version(n) is not None}


def answers(model, feeds: dict, workers: dict, timeout: float = 60.0) -> dict:
    """runtime -> list of output arrays, or the error, crash or timeout message (a string)."""
    out = {}
    for name, worker in workers.items():
        kind, payload = worker.run(model, [feeds], timeout)
        if kind == "ok":
            out[name] = [np.asarray(v) for v in payload[0]]
        else:  # a refusal, crash or hang is an answer of its own, not a disagreement
            out[name] = f"{kind}: {payload}"[:500]
    return out


def _same(a: list, b: list) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.dtype.kind in "fc":
            if not np.allclose(x.astype(np.float64), y.astype(np.float64), RTOL, ATOL, equal_nan=True):
                return False
        elif not np.array_equal(x, y):
            return False
    return True


def disagreement(results: dict) -> list[list[str]] | None:
    """Groups of runtimes that agree among themselves, when there are two or more groups."""
    groups: list[list[str]] = []
    for name, value in results.items():
        if isinstance(value, str):
            continue
        for group in groups:
            if _same(results[group[0]], value):
                group.append(name)
                break
        else:
            groups.append([name])
    return groups if len(groups) > 1 else None


def search(spec, run_fns: dict, max_examples: int = 40):
    """A minimal (model, feeds, results) on which ``run_fns`` disagree, or None."""
    from hypothesis import HealthCheck, find, settings
    from hypothesis.errors import NoSuchExample

    from onnxkit.conformance.differential_strategies import examples

    def disagrees(example) -> bool:
        model, feeds = example
        return disagreement(answers(model, feeds, run_fns)) is not None

    cfg = settings(max_examples=max_examples, deadline=None, database=None, derandomize=True,
                   suppress_health_check=list(HealthCheck))
    try:
        model, feeds = find(examples(spec), disagrees, settings=cfg)
    except NoSuchExample:
        return None
    return model, feeds, answers(model, feeds, run_fns)


def _describe(value):
    if isinstance(value, str):
        return {"error": value}
    return [{"shape": list(v.shape), "dtype": str(v.dtype), "values": [repr(x) for x in v.ravel()[:64].tolist()]}
            for v in value]


def save(folder: str, model, feeds: dict, results: dict) -> str:
    """Keep a disagreement as a case folder (model.onnx, inputs.npz, answers.json)."""
    os.makedirs(folder, exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    np.savez(os.path.join(folder, "inputs.npz"), allow_pickle=False, **feeds)
    groups = disagreement(results) or []
    with open(os.path.join(folder, "answers.json"), "w") as f:
        json.dump({"groups": groups, "answers": {k: _describe(v) for k, v in results.items()}},
                  f, indent=1, default=str)
    return folder


def load(folder: str):
    """(model, feeds) of a saved case folder."""
    model = onnx.load(os.path.join(folder, "model.onnx"))
    with np.load(os.path.join(folder, "inputs.npz"), allow_pickle=False) as data:
        feeds = {k: data[k] for k in data.files}
    return model, feeds


def main(out: str, names=DEFAULT_RUNTIMES, max_examples: int = 40, only=None) -> int:
    """Two searches per operator version: among all ``names``, then onnxkit's reference against
    the two oracles alone (so a disagreement of some other runtime cannot hide one of ours)."""
    from onnxkit.conformance.differential_strategies import SPECS

    every = runners(names)
    ours = {n: f for n, f in every.items() if n in ("reference", "onnxruntime", "onnx.reference")}
    found = 0
    specs = [s for s in SPECS if not only or s.op in only]
    for spec in specs:
        for tag, run_fns in (("all", every), ("onnxkit", ours)):
            hit = search(spec, run_fns, max_examples)
            label = f"{spec.op}-{spec.opset} {spec.tag} [{tag}]"
            if hit is None:
                print(f"{label}: {', '.join(run_fns)} agree", flush=True)
                continue
            found += 1
            model, feeds, results = hit
            path = save(os.path.join(out, f"{spec.op.lower()}_{spec.opset}_{spec.tag}_{tag}"), model, feeds, results)
            print(f"{label}: {disagreement(results)} -> {path}", flush=True)
    for worker in every.values():
        worker.close()
    return found


if __name__ == "__main__":  # python -m onnxkit.conformance.differential OUT [OP,OP...]
    main(sys.argv[1] if len(sys.argv) > 1 else "differential-cases",
         only=set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None)
