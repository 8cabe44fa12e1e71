"""One model of the kinds benchmark, in a process of its own: built (or read from the
cache), its outputs checked against onnxruntime, its node counts taken, and timed.

    python -m benchmarks.kinds.measure NAME [--quick] [--threads N] [--rebuild] [--levels]

prints one JSON line. Oracle: onnxruntime with graph optimizations off. Timed: onnxkit
``cpu`` level 3, onnxkit ``reference`` (level 0), onnxruntime ENABLE_ALL, onnx.reference,
and for the catalog's ``levels`` models (all with ``--levels``) onnxkit ``cpu`` levels 1
and 2, which ``report`` compares.
A runtime whose first run takes longer than ``--cap`` seconds is timed by that run alone.
The best of the runs is reported beside the median: on a shared machine it is the one
least disturbed by other processes (the load average before and after is recorded).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

import numpy as np

from benchmarks.kinds.catalog import CATALOG, Entry

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "kinds"
RUNTIMES = ("cpu-L3", "onnxkit-ref", "ort-all", "onnx-ref")
LEVELS = ("cpu-L1", "cpu-L2")  # timed for ``Entry.levels`` models


def missing(entry: Entry) -> list[str]:
    return [lib for lib in entry.needs if importlib.util.find_spec(lib) is None]


def cached(entry: Entry, rebuild: bool) -> tuple[Path, dict]:
    """The model's .onnx and feeds, built into ``.cache/kinds/`` when absent."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path, data = CACHE / f"{entry.name}.onnx", CACHE / f"{entry.name}.npz"
    if rebuild or not (path.exists() and data.exists()):
        feeds = entry.build(path)
        np.savez(data, **feeds)
    with np.load(data) as saved:
        return path, dict(saved)


def ort_session(path: Path, level: str, threads: int, save: Path | None = None):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, f"ORT_{level}")
    so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
    so.log_severity_level = 3
    if save is not None:
        so.optimized_model_filepath = str(save)
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def _count(model) -> int:
    """Top-level nodes once model-local functions are inlined (onnxruntime inlines them)."""
    import onnx.inliner

    return len(onnx.inliner.inline_local_functions(model).graph.node if model.functions
               else model.graph.node)


def node_counts(path: Path, threads: int) -> dict:
    """Nodes as exported, at onnxkit level 2 and at onnxruntime EXTENDED (the model it saves)."""
    import onnx

    from onnxkit.optimizer import optimize

    model = onnx.load(str(path))
    counts = {"exported": _count(model)}
    optimized, _ = optimize(model, 2)
    counts["onnxkit-L2"] = _count(optimized)
    with tempfile.TemporaryDirectory() as tmp:
        saved = Path(tmp) / "extended.onnx"
        ort_session(path, "ENABLE_EXTENDED", threads, save=saved)
        counts["ort-extended"] = len(onnx.load(str(saved), load_external_data=False).graph.node)
    return counts


def runner(runtime: str, path: Path, threads: int):
    if runtime == "ort-all":
        sess = ort_session(path, "ENABLE_ALL", threads)
        return lambda f: sess.run(None, f)
    if runtime == "onnx-ref":
        from onnx.reference import ReferenceEvaluator

        evaluator = ReferenceEvaluator(str(path))
        return lambda f: evaluator.run(None, f)
    import onnxkit

    cpu = runtime.startswith("cpu-L")  # cpu-L1, cpu-L2, cpu-L3
    executor, level = ("cpu", int(runtime[-1])) if cpu else ("reference", 0)
    sess = onnxkit.Session(str(path), executor=executor, level=level)
    return lambda f: sess.run(None, f)


def timed(run, feeds: dict, cap: float, budget: float, most: int,
          compiles: bool) -> tuple[dict, list]:
    """Median and best ms of repeated runs after a first one (which gives the outputs). The
    first run of a runtime that ``compiles`` kernels on first use is not held to ``cap``."""
    start = time.perf_counter()
    outputs = run(feeds)
    first = time.perf_counter() - start
    if first > cap and not compiles:
        return {"ms": first * 1e3, "min_ms": first * 1e3, "runs": 1,
                "first_ms": first * 1e3}, outputs
    times, spent = [], time.perf_counter()
    if compiles:  # the second run decides whether the runtime is too slow to repeat
        run(feeds)
        times.append(time.perf_counter() - spent)
        if times[0] > cap:
            return {"ms": times[0] * 1e3, "min_ms": times[0] * 1e3, "runs": 1,
                    "first_ms": first * 1e3}, outputs
    while len(times) < most and (len(times) < 3 or time.perf_counter() - spent < budget):
        t = time.perf_counter()
        run(feeds)
        times.append(time.perf_counter() - t)
    return {"ms": float(np.median(times)) * 1e3, "min_ms": float(np.min(times)) * 1e3,
            "runs": len(times), "first_ms": first * 1e3}, outputs


def compare(got: list, expected: list) -> dict:
    """Largest |got - expected| and that over the largest |expected|, over all outputs;
    integer outputs must match exactly (``rel`` is inf when they do not)."""
    worst, scale, exact = 0.0, 0.0, True
    if len(got) != len(expected):
        return {"max_abs": float("inf"), "rel": float("inf"), "note": "output count"}
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        if g.shape != e.shape:
            return {"max_abs": float("inf"), "rel": float("inf"),
                    "note": f"shape {list(g.shape)} vs {list(e.shape)}"}
        if e.size == 0:
            continue
        diff = float(np.abs(g.astype(np.float64) - e.astype(np.float64)).max())
        worst = max(worst, diff)
        scale = max(scale, float(np.abs(e.astype(np.float64)).max()))
        exact = exact and (e.dtype.kind == "f" or diff == 0)
    rel = worst / scale if scale else worst
    return {"max_abs": worst, "rel": rel if exact else float("inf")}


def measure(entry: Entry, args) -> dict:
    row = {"model": entry.name, "kind": entry.kind, "tolerance": entry.tolerance}
    absent = missing(entry)
    if absent:
        return {**row, "skipped": f"missing {', '.join(absent)}"}
    path, feeds = cached(entry, args.rebuild)
    row["inputs"] = {k: list(v.shape) for k, v in feeds.items()}
    oracle = ort_session(path, "DISABLE_ALL", args.threads).run(None, feeds)
    row["nodes"] = node_counts(path, args.threads)
    row["times"], row["check"], row["errors"] = {}, {}, {}
    budget, most = (0.3, 5) if args.quick else (1.5, 30)
    row["load"] = [round(os.getloadavg()[0], 1)]
    levels = LEVELS if entry.levels or getattr(args, "levels", False) else ()
    for runtime in RUNTIMES + levels:
        if args.quick and runtime in ("onnxkit-ref", "onnx-ref"):
            continue
        try:
            row["times"][runtime], outputs = timed(runner(runtime, path, args.threads), feeds,
                                                   args.cap, budget, most,
                                                   runtime.startswith("cpu-L"))
        except Exception as exc:  # noqa: BLE001 - reported per runtime, the others go on
            row["errors"][runtime] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
            continue
        if runtime in ("cpu-L3", "onnxkit-ref", "ort-all") + LEVELS:
            row["check"][runtime] = compare(outputs, oracle)
    row["load"].append(round(os.getloadavg()[0], 1))
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=sorted(CATALOG))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cap", type=float, default=3.0, help="seconds; see the docstring")
    parser.add_argument("--quick", action="store_true", help="few runs, no reference runtimes")
    parser.add_argument("--rebuild", action="store_true", help="export again, ignoring the cache")
    parser.add_argument("--levels", action="store_true", help="time cpu levels 1 and 2 too")
    args = parser.parse_args(argv)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(args.threads):
        try:
            row = measure(CATALOG[args.name], args)
        except Exception as exc:  # noqa: BLE001 - one JSON line whatever happens
            traceback.print_exc()
            row = {"model": args.name, "kind": CATALOG[args.name].kind,
                   "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"}
    print(json.dumps(row))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
