"""The benchmark: onnxkit's executors against onnxruntime and onnx.reference, in one run.

    python -m benchmarks.run                          # six models, every runtime (~10 min)
    python -m benchmarks.run --models resnet18 mlp    # some models
    python -m benchmarks.run --quick                  # few repeats: a smoke test

For each model (``benchmarks.models`` builds them) and each runtime a fresh Python
process imports the runtime, times the session's start (construction + first run; the
imports are not counted), runs it repeatedly, and reports memory: the
high-water mark of the resident set minus the resident set once the runtime's libraries
are loaded ("session": weights, buffers, arenas, compiled kernels), and minus the
resident set before they were imported ("total": Numba and LLVM alone are ~120 MiB,
onnxruntime's library ~20 MiB). Runtimes:

| name                | what                                                        |
|---------------------|-------------------------------------------------------------|
| ort-all / ort-none  | onnxruntime, graph optimization ENABLE_ALL / DISABLE_ALL    |
| cpu-L0 .. cpu-L3    | onnxkit, ``executor="cpu"``, optimizer level 0..3           |
| onnxkit-ref         | onnxkit, ``executor="reference"`` (level 0)                 |
| onnx-ref            | ``onnx.reference.ReferenceEvaluator``                       |

The cells are measured in ``--rounds`` rounds (default 3; each round runs every model on
every runtime, one model's runtimes one after another, each in a fresh process, for a third
of the time): the median is over all the timed runs of a cell's rounds, so a shared machine
that slows down for a minute weighs on every runtime, not on the few measured then.
Every runtime gets the same number of threads (``--threads``, default: all cores).
``OPENBLAS_CORETYPE`` is removed from the children's environment unless
``--keep-coretype``: users' machines do not force a BLAS core, and a forced older core
halves sgemm (the core in use is reported). Results go to ``benchmarks/results/``:
``benchmark.md`` (tables, target checks), ``benchmark.json`` and ``benchmark.png``.
Numbers taken while other processes run are noisy: the load average before and after
is recorded; run it on a quiet machine, or with ``--wait-quiet 300`` on a shared one
(each measurement then waits until the other processes leave the cores idle).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import report
from benchmarks.models import ALL_MODELS, build, feeds, model_path

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(__file__).resolve().parent / "results"
RUNTIMES = ("ort-all", "ort-none", "cpu-L0", "cpu-L1", "cpu-L2", "cpu-L3", "onnxkit-ref",
            "onnx-ref")


# --- the child: one model on one runtime ------------------------------------------------

def _rss_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _import(runtime: str) -> None:
    """Import and initialize the runtime's libraries (memory counted apart, time not)."""
    if runtime.startswith("ort-"):
        import onnxruntime  # noqa: F401
    elif runtime == "onnx-ref":
        import onnx.reference  # noqa: F401
    else:
        from onnxkit.ops import load_reference_kernels

        load_reference_kernels()
        if runtime.startswith("cpu-"):
            from onnxkit.kernels.cpu import load_cpu_kernels
            from onnxkit.kernels.cpu._im2col import ceil_div

            load_cpu_kernels()
            ceil_div(1, 1)  # Numba's LLVM comes up on the first compiled call


def _runner(runtime: str, path: str, threads: int):
    """A function feeds -> outputs for ``runtime`` (session built here)."""
    if runtime.startswith("ort-"):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                                       if runtime == "ort-all"
                                       else ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        return lambda f: sess.run(None, f)
    if runtime == "onnx-ref":
        from onnx.reference import ReferenceEvaluator

        ev = ReferenceEvaluator(path)
        return lambda f: ev.run(None, f)
    from onnxkit import Session

    executor, level = ("reference", 0) if runtime == "onnxkit-ref" else ("cpu", int(runtime[-1]))
    sess = Session(path, executor=executor, level=level)
    return lambda f: sess.run(None, f)


def child(spec: dict) -> dict:
    """Measure ``spec['runtime']`` on ``spec['model']``; returns the numbers as a dict."""
    from threadpoolctl import threadpool_limits

    threads = spec["threads"]
    limiter = threadpool_limits(threads)
    model, runtime = spec["model"], spec["runtime"]
    path = str(model_path(model))
    inputs = feeds(model)
    base_total = _rss_kib("VmRSS")  # before the runtime's own libraries are imported
    _import(runtime)
    resettable = _reset_peak()
    base = _rss_kib("VmRSS")  # after: what the session itself adds
    start = time.perf_counter()
    run = _runner(runtime, path, threads)
    outputs = run(inputs)
    start_s = time.perf_counter() - start
    times: list[float] = []
    first = time.perf_counter()
    for _ in range(spec["warmup"]):
        run(inputs)
    while len(times) < spec["repeat"]:
        t = time.perf_counter()
        run(inputs)
        times.append(time.perf_counter() - t)
        spent = time.perf_counter() - first
        if len(times) >= spec["min_repeat"] and spent > spec["max_seconds"]:
            break
    high = _rss_kib("VmHWM") if resettable else _maxrss_kib()
    result = {"model": model, "runtime": runtime, "times_ms": [t * 1e3 for t in times],
              "start_s": start_s,
              "peak_mib": (high - base) / 1024, "peak_total_mib": (high - base_total) / 1024,
              "libraries_mib": (base - base_total) / 1024, "peak_exact": resettable}
    if runtime.startswith("cpu-"):
        from onnxkit.kernels.cpu._blas import CHOICES, DEFAULT, LIBRARY
        from onnxkit.kernels.cpu._threads import blas_info
        from onnxkit.kernels.cpu._tuning import TUNING_LOG, asked as tuning  # env, as sessions

        import numba

        result["blas"] = [dict(b, products=b["library"] == LIBRARY) for b in blas_info()]
        # the kernels' threads: onnxkit's own pool (``_threads``), not Numba's layer
        result["numba_threads"] = {"threads": numba.config.NUMBA_NUM_THREADS,
                                   "layer": "onnxkit's pool"}
        result["conv_tuning"] = {"timed": tuning(),
                                 "chosen": [w for key, w, _ in TUNING_LOG if key[0] == "conv"],
                                 "pointwise": [w for key, w, _ in TUNING_LOG
                                               if key[0] == "conv 1x1"]}
        result["blas_tuning"] = {"timed": tuning(), "libraries": list(CHOICES),
                                 "default": CHOICES[DEFAULT],
                                 "chosen": [w for key, w, _ in TUNING_LOG
                                            if key[0].startswith("gemm")]}
    if spec.get("save"):
        np.save(spec["save"], np.asarray(outputs[0], dtype=np.float32))
    del limiter
    return result


def merge_rounds(rounds: list[dict]) -> dict:
    """One cell's measurements from several rounds as one: the median, minimum and 90th
    percentile of all the timed runs, each round's median, the median start, the highest
    peak memory; the rest (BLAS, tuning) from the first round."""
    merged = {k: v for k, v in rounds[0].items() if k != "times_ms"}
    times = np.concatenate([r["times_ms"] for r in rounds])
    merged.update(median_ms=float(np.median(times)), min_ms=float(np.min(times)),
                  p90_ms=float(np.percentile(times, 90)), runs=int(times.size),
                  round_medians_ms=[float(np.median(r["times_ms"])) for r in rounds],
                  start_s=float(np.median([r["start_s"] for r in rounds])))
    for key in ("peak_mib", "peak_total_mib"):
        merged[key] = max(r[key] for r in rounds)
    return merged


def _maxrss_kib() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


# --- the parent ----------------------------------------------------------------------------

def _child_env(keep_coretype: bool) -> dict:
    env = dict(os.environ)
    if not keep_coretype:
        env.pop("OPENBLAS_CORETYPE", None)
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".cache" / "numba"))
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_child(spec: dict, env: dict, timeout: float) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.run", "--child", json.dumps(spec)]
    try:
        proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"model": spec["model"], "runtime": spec["runtime"], "error": "timeout"}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return {"model": spec["model"], "runtime": spec["runtime"], "error": " | ".join(tail)}


def _busy_cores(seconds: float = 1.0) -> float:
    """How many cores other processes kept busy over ``seconds`` (from /proc/stat)."""
    def sample():
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
        return sum(fields) - fields[3] - fields[4], sum(fields)  # busy, total (idle, iowait)
    try:
        busy0, total0 = sample()
        time.sleep(seconds)
        busy1, total1 = sample()
    except OSError:
        return 0.0
    cores = os.cpu_count() or 1
    return cores * (busy1 - busy0) / max(total1 - total0, 1)


def wait_quiet(max_wait: float, threshold: float = 0.1) -> bool:
    """Wait (up to ``max_wait`` s) until other processes leave the cores idle."""
    deadline = time.monotonic() + max_wait
    while True:
        if _busy_cores() < threshold:
            return True
        if time.monotonic() > deadline:
            return False


def _warm(env: dict) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "onnxkit.kernels.cpu.warm"], env=env, cwd=ROOT,
                   capture_output=True, check=False)
    return time.perf_counter() - start


def machine() -> dict:
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import numba
    import onnx
    import onnxruntime

    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": np.__version__, "numba": numba.__version__, "onnx": onnx.__version__,
            "onnxruntime": onnxruntime.__version__,
            "OPENBLAS_CORETYPE (caller)": os.environ.get("OPENBLAS_CORETYPE", "")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--models", nargs="*", default=list(ALL_MODELS), choices=ALL_MODELS)
    parser.add_argument("--runtimes", nargs="*", default=list(RUNTIMES), choices=RUNTIMES)
    parser.add_argument("--repeat", type=int, default=30, help="timed runs per measurement")
    parser.add_argument("--max-seconds", type=float, default=8.0,
                        help="stop repeating after this long (at least 3 runs)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="measure every cell this many times, one model's runtimes "
                             "after another in each round, so that a machine that slows "
                             "down or speeds up during the run weighs on every runtime")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--keep-coretype", action="store_true",
                        help="keep OPENBLAS_CORETYPE in the children's environment")
    parser.add_argument("--quick", action="store_true", help="5 runs, 2 s each: a smoke test")
    parser.add_argument("--wait-quiet", type=float, default=0.0, metavar="SECONDS",
                        help="before each measurement, wait up to this long for the other "
                             "processes to leave the cores idle (shared machines)")
    parser.add_argument("--out", default=str(RESULTS_DIR), help="where the results go")
    args = parser.parse_args(argv)
    if args.child:
        print("RESULT " + json.dumps(child(json.loads(args.child))), flush=True)
        return 0

    from tqdm import tqdm

    repeat, max_seconds = (5, 2.0) if args.quick else (args.repeat, args.max_seconds)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    build(tuple(args.models), verbose=False)
    env = _child_env(args.keep_coretype)
    info = machine()
    info["keep_coretype"] = args.keep_coretype
    info["load_before"] = os.getloadavg()
    info["warm_s"] = _warm(env)
    cells: dict[tuple[str, str], list[dict]] = {}
    rounds = info["rounds"] = max(1, args.rounds)
    work = [(k, m, r) for k in range(rounds) for m in args.models for r in args.runtimes]
    outputs_dir = Path(tempfile.mkdtemp(prefix="onnxkit-bench-"))
    bar = tqdm(work, unit="measurement")
    for k, model, runtime in bar:
        bar.set_description(f"round {k + 1}/{rounds} {model:12s} {runtime:11s}")
        slow = runtime in ("onnx-ref", "onnxkit-ref")
        spec = {"model": model, "runtime": runtime, "threads": args.threads,
                "repeat": -(-repeat // rounds), "min_repeat": 3,
                "max_seconds": max_seconds / rounds, "warmup": 1 if slow else 3,
                "save": str(outputs_dir / f"{model}.{runtime}.npy") if k == 0 else None}
        quiet = wait_quiet(args.wait_quiet) if args.wait_quiet else None
        result = run_child(spec, env, timeout=600)
        result["quiet_before"] = quiet
        result["load_after"] = os.getloadavg()[0]
        cells.setdefault((model, runtime), []).append(result)
    results = [next((r for r in rs if "error" in r), None) or merge_rounds(rs)
               for rs in cells.values()]
    info["load_after"] = os.getloadavg()
    report.add_output_differences(results, outputs_dir)
    shutil.rmtree(outputs_dir, ignore_errors=True)
    report.write(results, info, out_dir)
    print((out_dir / "benchmark.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
