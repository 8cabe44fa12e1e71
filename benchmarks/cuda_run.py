"""The cuda executor on a real GPU: the spec suite against the reference, timings against PyTorch.

    python -m benchmarks.cuda_run                          # spec subset + every GPU model
    python -m benchmarks.cuda_run --spec-only --spec all --deadline 480   # the spec verdict
    python -m benchmarks.cuda_run --spec-only --spec all --shard 1/2      # half of it
    python -m benchmarks.cuda_run --skip-spec --models resnet50_b32       # the speed verdict
    python -m benchmarks.cuda_run --merge a.json b.json    # one report of several runs
    NUMBA_ENABLE_CUDASIM=1 python -m benchmarks.cuda_run --smoke   # the script itself, no GPU

``benchmarks/gpu_session.sh`` stages these commands for a lent GPU machine (docs/cuda.md).

**Spec suite.** Every selected case (``--spec subset``: spec_tests/cuda_subset.py; ``all``:
every node and model case of the installed onnx) runs on the ``reference`` executor (in this
process: numpy, a few seconds for all) and on ``cuda`` in a child process that this one
watches: a case that hangs past ``--case-timeout`` or kills the child is recorded
("timeout", "crash") and a fresh child goes on with the next case; a sticky CUDA error
(illegal address, launch failure) also gets a fresh child. The verdict is the list of cases
the reference passes and cuda does not; cases not reached before ``--deadline`` are listed
as "not run" (an incomplete verdict: run the rest with ``--shard``).

**Benchmark.** For each model of ``benchmarks.models`` (built on demand; the torch ones
need PyTorch), median of ``--repeat`` runs after warm-up (fewer for a slow model: each
measurement stops after ``MAX_SECONDS`` of timed runs, at least 3):

| runtime              | what                                                              |
|----------------------|-------------------------------------------------------------------|
| onnxkit-cuda-L0      | ``Session(executor="cuda")``, optimizer level 0, host to host     |
| onnxkit-cuda-L2      | the same at optimizer level 2 (fused onnxkit operators)           |
| torch-eager          | the model's PyTorch module on the GPU, fp32, TF32 off (matmul and |
|                      | cuDNN), eval, no_grad; numpy input to numpy output (copies in)    |
| torch-eager-resident | the same with the input already on the GPU and the output left    |
|                      | there, ``torch.cuda.synchronize()`` ending each timed call        |
| ort-cuda             | onnxruntime's CUDAExecutionProvider (use_tf32=0), when installed  |

onnxkit's ``Session.run`` takes numpy feeds and returns numpy outputs, so host to host is
its honest time; compare it with ``torch-eager``, and read ``torch-eager-resident`` as
what copies cost torch. The first onnxkit run compiles the kernels with numba (reported
apart). onnxkit rows also give the copies of one run and the operators that ran on the
host. Outputs are compared with onnxruntime on the CPU. Then a per-operator profile of
the ``--profile`` models (default: resnet50_b32) at the best onnxkit level, every node
synchronized, and the verdict for the issue's target: ResNet-50 at batch 32 within
``TARGET_RATIO`` times torch eager's time.

Results: ``benchmarks/results/cuda-<device>-<date>[-<tag>].md`` and ``.json``, copied into
``$OUT`` too when that variable is set (the device tool brings back what is there).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(__file__).resolve().parent / "results"
LEVELS = (0, 2)
MAX_SECONDS = 20.0  # of timed calls per measurement (see _median_ms)
TARGET_MODEL, TARGET_LABEL, TARGET_RATIO = "resnet50_b32", "ResNet-50 batch 32", 3.0
SMOKE_CASES = r"^node:test_(relu|add_bcast|softmax_axis_1|conv_with_strides_padding)$"
#: messages after which the CUDA context is unusable: the next case gets a fresh process
STICKY_CUDA_ERROR = re.compile(r"ILLEGAL_ADDRESS|ILLEGAL_INSTRUCTION|LAUNCH_FAILED|LAUNCH_TIMEOUT|"
                               r"MISALIGNED_ADDRESS|HARDWARE_STACK_ERROR|CUDA_ERROR_ASSERT|"
                               r"CUDA_ERROR_UNKNOWN|cudaErrorIllegal")


# --- where we are ------------------------------------------------------------------------

def environment() -> dict:
    from numba import config, cuda

    import numba
    import onnx

    env = {"date": dt.datetime.now().isoformat(timespec="seconds"), "python": platform.python_version(),
           "numba": numba.__version__, "onnx": onnx.__version__, "simulator": bool(config.ENABLE_CUDASIM)}
    try:
        import numba_cuda

        env["numba_cuda"] = numba_cuda.__version__
    except ImportError:
        pass
    if config.ENABLE_CUDASIM:
        env["device"] = "CUDA simulator"
        return env
    device = cuda.get_current_device()
    name = device.name
    env["device"] = name.decode() if isinstance(name, bytes) else str(name)
    env["compute_capability"] = ".".join(map(str, device.compute_capability))
    try:
        env["driver"] = ".".join(map(str, cuda.cudadrv.driver.driver.get_version()))
    except Exception:  # older numba spells it differently; not essential
        pass
    try:
        import torch

        env["torch"] = torch.__version__
        env["torch_cuda"] = bool(torch.cuda.is_available())
    except ImportError:
        env["torch"] = None
    try:
        import onnxruntime as ort

        env["onnxruntime"] = ort.__version__
        env["ort_providers"] = ort.get_available_providers()
    except ImportError:
        env["onnxruntime"] = None
    return env


# --- the spec suite: which cases -----------------------------------------------------------

def case_key(case) -> str:
    """``kind:name``, as the spec tests' ids and the reports name a case."""
    return f"{case.kind}:{case.name}"


def select_spec_cases(which: str, pattern: str | None = None, shard: tuple[int, int] | None = None):
    """The cases to run and the excluded ones: ``(cases, {key: reason})``.

    ``which`` is "subset" (spec_tests/cuda_subset.py, every case the simulator CI runs plus
    the slow ones) or "all"; ``pattern`` filters keys (``re.search``); ``shard`` (k, n)
    keeps the k-th (1-based) of n consecutive slices of the cases sorted by key: cases of
    one operator stay together, so each kernel compiles in one shard, not in all."""
    from onnxkit.conformance import all_cases
    from spec_tests.cuda_subset import CUDA_SUBSET, SLOW_UNDER_SIMULATOR
    from spec_tests.exclusions import EXCLUDED, EXCLUDED_BY_EXECUTOR

    wanted = CUDA_SUBSET | SLOW_UNDER_SIMULATOR
    cases = sorted((c for c in all_cases() if which == "all" or (c.kind == "node" and c.name in wanted)),
                   key=case_key)
    if pattern:
        cases = [c for c in cases if re.search(pattern, case_key(c))]
    if shard:
        k, n = shard
        cases = cases[(k - 1) * len(cases) // n:k * len(cases) // n]
    excluded = {**EXCLUDED, **EXCLUDED_BY_EXECUTOR.get("cuda", {})}
    skipped = {case_key(c): excluded[c.name] for c in cases if c.name in excluded}
    return [c for c in cases if case_key(c) not in skipped], skipped


def reference_statuses(cases) -> dict[str, str]:
    """``{key: "pass" | "fail" | "error"}`` of each case on the reference executor."""
    from onnxkit.conformance import run_case
    from onnxkit.conformance.runner import onnxkit_runner

    run = onnxkit_runner("reference")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {case_key(c): run_case(c, run).status for c in cases}


# --- the spec suite: cuda cases in a watched child process ---------------------------------

def spec_worker(keys_path: str) -> int:
    """The child: run each case of the JSON list in ``keys_path`` on cuda, one JSON line per
    event on the original stdout ("ready", then "start" and "done" per case)."""
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever else prints goes to stderr, not into the protocol

    def emit(**event):
        protocol.write(json.dumps(event) + "\n")

    from onnxkit.conformance import all_cases, run_case
    from onnxkit.conformance.runner import onnxkit_runner

    by_key = {case_key(c): c for c in all_cases()}
    run = onnxkit_runner("cuda")
    emit(event="ready")
    for key in json.loads(Path(keys_path).read_text()):
        emit(event="start", key=key)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run_case(by_key[key], run)
        emit(event="done", key=key, status=result.status, message=result.message[:1000],
             seconds=round(result.seconds, 3))
    return 0


class _Worker:
    """One ``spec_worker`` child and a thread turning its lines into a queue of events."""

    EOF = {"event": "eof"}
    TIMEOUT = {"event": "timeout"}

    def __init__(self, keys: list[str]):
        fd, self.keys_path = tempfile.mkstemp(suffix=".json", prefix="cuda-spec-")
        with os.fdopen(fd, "w") as f:
            json.dump(keys, f)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.cuda_run", "--spec-worker", self.keys_path],
            stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)  # our process group: a
        # signal to the run (timeout, Ctrl-C) reaches it too, and nothing outlives the run
        self.events: queue.Queue = queue.Queue()
        self.rc: int | None = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                self.events.put(json.loads(line))
            except json.JSONDecodeError:
                pass
        self.proc.stdout.close()
        self.events.put(self.EOF)

    def next_event(self, timeout: float) -> dict:
        try:
            return self.events.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return self.TIMEOUT

    def stop(self, grace: float) -> int:
        """Its exit code, once it exits by itself within ``grace`` seconds or is killed."""
        if self.rc is None:
            try:
                self.rc = self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.rc = self.proc.wait()
            os.unlink(self.keys_path)
        return self.rc


def _one_worker(todo: list[str], results: dict, case_timeout: float, deadline: float,
                startup_timeout: float) -> bool:
    """Run ``todo`` in one child until it is done, a case times out or crashes, a sticky
    CUDA error or the deadline; move each finished key from ``todo`` to ``results``.
    False when the child failed outside any case (at start-up): another would too."""
    worker = _Worker(todo)
    started, current, since = False, None, time.monotonic()
    try:
        while todo:
            budget = case_timeout if started else startup_timeout
            event = worker.next_event(min(since + budget, deadline) - time.monotonic())
            if event is _Worker.TIMEOUT and time.monotonic() >= deadline:
                return True  # the case in hand stays in todo: "not run"
            if event is _Worker.TIMEOUT or event is _Worker.EOF:
                what = "timeout" if event is _Worker.TIMEOUT else "crash"
                rc = worker.stop(grace=5 if what == "crash" else 0)
                if current is None:
                    for key in todo:
                        results[key] = {"status": "not run", "message": f"cuda worker {what} outside "
                                        f"a case (exit code {rc}): see its stderr", "seconds": 0.0}
                    todo.clear()
                    return False
                message = (f"no result after {case_timeout:g} s" if what == "timeout"
                           else f"the process died (exit code {rc})")
                results[current] = {"status": what, "message": message,
                                    "seconds": round(time.monotonic() - since, 1)}
                todo.remove(current)
                return True
            if event["event"] == "ready":
                started, since = True, time.monotonic()
            elif event["event"] == "start":
                current, since = event["key"], time.monotonic()
            elif event["event"] == "done":
                results[event["key"]] = {k: event[k] for k in ("status", "message", "seconds")}
                todo.remove(event["key"])
                current, since = None, time.monotonic()
                if STICKY_CUDA_ERROR.search(event["message"]):
                    return True  # the next case gets a fresh process, a fresh CUDA context
        return True
    finally:
        worker.stop(grace=10 if not todo else 0)


def run_cuda_cases(keys: list[str], case_timeout: float, deadline: float,
                   startup_timeout: float = 300.0) -> dict[str, dict]:
    """``{key: {"status", "message", "seconds"}}`` for each key, run on cuda in watched
    child processes; ``deadline`` is a ``time.monotonic()`` value after which no case
    starts. Statuses beyond run_case's: "timeout", "crash", "not run"."""
    results: dict[str, dict] = {}
    todo = list(keys)
    while todo and time.monotonic() < deadline:
        if not _one_worker(todo, results, case_timeout, deadline, startup_timeout):
            break
    for key in todo:
        results[key] = {"status": "not run", "message": "the deadline came first", "seconds": 0.0}
    return results


def spec_suite(which: str, pattern: str | None = None, shard: tuple[int, int] | None = None,
               case_timeout: float = 90.0, deadline_s: float | None = None) -> dict:
    """Run the selected cases on reference and cuda; the JSON-ready record of every case."""
    start = time.monotonic()
    deadline = start + deadline_s if deadline_s else float("inf")
    cases, skipped = select_spec_cases(which, pattern, shard)
    reference = reference_statuses(cases)
    print(f"spec: reference done ({len(cases)} cases, {time.monotonic() - start:.0f} s); cuda next",
          flush=True)
    cuda = run_cuda_cases([case_key(c) for c in cases], case_timeout, deadline)
    records = {key: {"reference": reference[key], "cuda": cuda[key]["status"],
                     "cuda_seconds": cuda[key]["seconds"],
                     **({"message": cuda[key]["message"]} if cuda[key]["status"] != "pass" else {})}
               for key in reference}
    return {"which": which, "pattern": pattern, "shard": "/".join(map(str, shard)) if shard else None,
            "seconds": round(time.monotonic() - start, 1), "skipped": skipped, "cases": records}


def spec_verdict(records: dict[str, dict]) -> dict:
    """Compare the two executors case by case (``records``: key -> {"reference", "cuda"}).

    ``regressions``: the reference passes, cuda ran it and does not pass (the issue's list);
    ``not_run``: the reference passes, cuda never got to it; ``cuda_only``: cuda passes and
    the reference does not. ``met`` only when the first two are empty."""
    ref_pass = {k for k, r in records.items() if r["reference"] == "pass"}
    regressions = sorted(k for k in ref_pass if records[k]["cuda"] not in ("pass", "not run"))
    not_run = sorted(k for k in ref_pass if records[k]["cuda"] == "not run")
    cuda_only = sorted(k for k, r in records.items() if r["cuda"] == "pass" and r["reference"] != "pass")
    return {"reference_passes": len(ref_pass),
            "cuda_passes_of_those": len(ref_pass) - len(regressions) - len(not_run),
            "regressions": regressions, "not_run": not_run, "cuda_only": cuda_only,
            "met": not regressions and not not_run}


def spec_verdict_line(spec: dict) -> str:
    v = spec_verdict(spec["cases"])
    where = spec["which"] + (f", shard {spec['shard']}" if spec.get("shard") else "")
    line = (f"Spec suite ({where}): cuda passes {v['cuda_passes_of_those']} of the "
            f"{v['reference_passes']} cases the reference passes; {len(v['regressions'])} fail on cuda")
    if v["not_run"]:
        line += f", {len(v['not_run'])} not run (incomplete)"
    return line + (": met" if v["met"] else ": NOT met")


def merge_specs(specs: list[dict]) -> dict:
    """One spec record of several runs (shards): later runs win for a case run twice."""
    merged = {"which": "+".join(sorted({s["which"] for s in specs})), "pattern": None,
              "shard": None, "seconds": round(sum(s["seconds"] for s in specs), 1),
              "skipped": {}, "cases": {}}
    for s in specs:
        merged["skipped"].update(s["skipped"])
        merged["cases"].update(s["cases"])
    return merged


# --- timing ------------------------------------------------------------------------------

def _median_ms(fn, repeat: int, warmup: int) -> tuple[float, int]:
    """(median ms of ``repeat`` calls after ``warmup`` calls, the calls timed); a slow
    model stops early: warm-up after ``MAX_SECONDS / 4``, timing after ``MAX_SECONDS``
    with at least 3 calls timed, so one command fits its time."""
    start = time.perf_counter()
    for _ in range(warmup):
        fn()
        if time.perf_counter() - start > MAX_SECONDS / 4:
            break
    times: list[float] = []
    while len(times) < repeat and (len(times) < 3 or sum(times) < MAX_SECONDS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times), len(times)


def onnxkit_row(path: str, feeds: dict, level: int, repeat: int, warmup: int) -> tuple[dict, list]:
    import onnxkit
    from onnxkit.kernels.cuda import DeviceProfile, make_executor

    start = time.perf_counter()
    sess = onnxkit.Session(path, executor=make_executor(synchronize_each_node=False), level=level)
    first = sess.run(None, feeds)  # numba compiles each kernel specialization here
    first_ms = 1e3 * (time.perf_counter() - start)
    prof = DeviceProfile(sess)
    sess.executor.reset_stats()
    sess.run(None, feeds, trace=prof)
    stats = sess.executor.stats()
    ms, runs = _median_ms(lambda: sess.run(None, feeds), repeat, warmup)
    host_ops = sorted({f"{r.op_type} ({r.reason})" for r in prof.host_rows()})
    return {"ms": round(ms, 3), "runs": runs, "first_run_ms": round(first_ms, 1),
            "h2d": f"{stats['h2d_count']} / {stats['h2d_bytes']:,} B",
            "d2h": f"{stats['d2h_count']} / {stats['d2h_bytes']:,} B",
            "cuda_nodes": stats["cuda_nodes"], "host_nodes": stats["host_nodes"],
            "leaves_gpu_at": host_ops}, first


def torch_rows(name: str, feeds: dict, repeat: int, warmup: int) -> dict[str, tuple[dict, list]]:
    """``torch-eager`` (numpy in, numpy out) and ``torch-eager-resident`` (input already on
    the GPU, output left there, synchronized): the exported module and weights, fp32, TF32
    off for matmul and cuDNN, eval, no_grad. Empty without torch, CUDA or a torch model."""
    try:
        import torch
    except ImportError:
        return {}
    from benchmarks.models import ON_DEMAND_MODELS, TORCH_MODELS, torch_module

    if name not in TORCH_MODELS + ON_DEMAND_MODELS or not torch.cuda.is_available():
        return {}
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    module = torch_module(name).cuda()
    host_args = [torch.from_numpy(v) for v in feeds.values()]
    device_args = [a.cuda() for a in host_args]

    @torch.no_grad()
    def host_to_host():
        return [module(*[a.cuda() for a in host_args]).cpu().numpy()]

    @torch.no_grad()
    def resident():
        module(*device_args)
        torch.cuda.synchronize()

    out = host_to_host()
    host_ms, host_runs = _median_ms(host_to_host, repeat, warmup)
    torch.cuda.synchronize()
    resident_ms, resident_runs = _median_ms(resident, repeat, warmup)
    del module, device_args
    torch.cuda.empty_cache()
    return {"torch-eager": ({"ms": round(host_ms, 3), "runs": host_runs,
                             "note": "fp32, TF32 off, eager, numpy in/out"}, out),
            "torch-eager-resident": ({"ms": round(resident_ms, 3), "runs": resident_runs,
                                      "note": "input on the GPU, output left there, synchronized"}, out)}


def ort_rows(path: str, feeds: dict, repeat: int, warmup: int) -> dict[str, tuple[dict, list]]:
    """``ort-cuda``: onnxruntime's CUDA provider, TF32 off; empty where it is not installed
    (the GPU image's onnxruntime is a CPU-only build)."""
    try:
        import onnxruntime as ort
    except ImportError:
        return {}
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return {}
    sess = ort.InferenceSession(path, providers=[("CUDAExecutionProvider", {"use_tf32": 0}),
                                                 "CPUExecutionProvider"])
    out = sess.run(None, feeds)
    ms, runs = _median_ms(lambda: sess.run(None, feeds), repeat, warmup)
    return {"ort-cuda": ({"ms": round(ms, 3), "runs": runs, "note": "use_tf32=0"}, out)}


def reference_outputs(path: str, feeds: dict) -> list:
    import onnxruntime as ort

    return ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)


def max_diff(got: list, want: list) -> float:
    return max(float(np.max(np.abs(np.asarray(g, np.float64) - np.asarray(w, np.float64))))
               for g, w in zip(got, want))


def _error(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def _guarded(label: str, make) -> dict[str, tuple[dict, list | None]]:
    """``make()`` (-> {label: (row, outputs)}), or an error row under ``label`` if it
    raises: one runtime that breaks does not end the benchmark."""
    try:
        return make()
    except Exception as exc:
        return {label: ({"ms": None, "error": _error(exc)}, None)}


def model_rows(path: str, feeds: dict, name: str, repeat: int, warmup: int) -> dict:
    """Every runtime's row for one model, each with its difference from onnxruntime CPU."""
    want = reference_outputs(path, feeds)
    made: dict[str, tuple[dict, list | None]] = {}
    for level in LEVELS:
        label = f"onnxkit-cuda-L{level}"
        made |= _guarded(label, lambda: {label: onnxkit_row(path, feeds, level, repeat, warmup)})
    made |= _guarded("torch-eager", lambda: torch_rows(name, feeds, repeat, warmup))
    made |= _guarded("ort-cuda", lambda: ort_rows(path, feeds, repeat, warmup))
    rows = {}
    for label, (row, out) in made.items():
        if out is not None:
            row["max_abs_diff_vs_ort_cpu"] = max_diff(out, want)
        rows[label] = row
    return rows


def benchmark(names, repeat: int, warmup: int, results: dict) -> dict:
    """Time each model into ``results`` (filled as it goes: an interrupted run keeps the
    models it finished)."""
    from benchmarks.models import build, feeds as model_feeds, model_path

    for name in names:
        start = time.perf_counter()
        build([name], verbose=False)
        path, feeds = str(model_path(name)), model_feeds(name)
        results[name] = model_rows(path, feeds, name, repeat, warmup)
        print(f"{name} ({time.perf_counter() - start:.0f} s): "
              + ", ".join(f"{k} {v['ms']} ms" for k, v in results[name].items()), flush=True)
    return results


# --- where the time goes ---------------------------------------------------------------------

def device_profile(path: str, feeds: dict, level: int, runs: int = 3, top: int = 15) -> dict:
    """Per op type and per node (the ``top`` slowest) time of ``runs`` runs at ``level``,
    every cuda node synchronized (``onnxkit.runtime.profile.Profiler`` as the trace)."""
    import onnxkit
    from onnxkit.kernels.cuda import make_executor
    from onnxkit.runtime.profile import Profiler

    sess = onnxkit.Session(path, executor=make_executor(synchronize_each_node=True), level=level)
    sess.run(None, feeds)  # compiles whatever this process has not compiled yet
    prof = Profiler(sess)
    for _ in range(runs):
        sess.run(None, feeds, trace=prof)
    return {"level": level, "runs": runs, "ms_per_run": round(1e3 * prof.seconds / runs, 3),
            "by_op": prof.rows("op"), "by_node": prof.rows("node")[:top],
            "op_table": prof.table("op"), "node_table": prof.table("node", top=top)}


def best_onnxkit(rows: dict) -> tuple[str, float] | None:
    """The fastest onnxkit row of a model: (label, ms)."""
    timed = [(label, row["ms"]) for label, row in rows.items()
             if label.startswith("onnxkit-") and row.get("ms") is not None]
    return min(timed, key=lambda t: t[1]) if timed else None


def profiles(results: dict, names, feeds_of) -> dict:
    """``device_profile`` of each named model that was timed, at its best onnxkit level."""
    out = {}
    for name in names:
        best = best_onnxkit(results.get(name, {}))
        if best is None:
            continue
        path, feeds = feeds_of(name)
        try:
            out[name] = device_profile(path, feeds, level=int(best[0].rsplit("L", 1)[1]))
        except Exception as exc:
            out[name] = {"error": _error(exc)}
        out[name]["label"] = best[0]
        print(f"profiled {name} at {best[0]}", flush=True)
    return out


# --- the report ----------------------------------------------------------------------------

def ratio_rows(results: dict) -> list[dict]:
    """Per model with a torch time: the best onnxkit time over torch eager's, host to host
    and over the resident time."""
    rows = []
    for name, runs in results.items():
        best = best_onnxkit(runs)
        torch_ms = runs.get("torch-eager", {}).get("ms")
        if best is None or not torch_ms:
            continue
        resident = runs.get("torch-eager-resident", {}).get("ms")
        rows.append({"model": name, "onnxkit": best[0], "onnxkit_ms": best[1], "torch_ms": torch_ms,
                     "ratio": best[1] / torch_ms, "torch_resident_ms": resident,
                     "ratio_resident": best[1] / resident if resident else None})
    return rows


def target_verdict_line(results: dict) -> str:
    """The issue's speed target, e.g. "ResNet-50 batch 32: onnxkit-cuda-L2 12.00 ms / torch
    eager 4.00 ms = 3.00 (target <= 3): met"."""
    row = next((r for r in ratio_rows(results) if r["model"] == TARGET_MODEL), None)
    if row is None:
        return f"{TARGET_LABEL}: not measured (needs {TARGET_MODEL} timed on onnxkit and torch)"
    met = row["ratio"] <= TARGET_RATIO
    return (f"{TARGET_LABEL}: {row['onnxkit']} {row['onnxkit_ms']:.2f} ms / torch eager "
            f"{row['torch_ms']:.2f} ms = {row['ratio']:.2f} (target <= {TARGET_RATIO:g}): "
            + ("met" if met else "NOT met"))


def _fmt(value, spec: str = ".3f") -> str:
    return "" if value is None else format(value, spec)


def _first_line(text: str, width: int = 200) -> str:
    return (text.strip().splitlines() or [""])[0][:width]


def _spec_markdown(spec: dict) -> list[str]:
    records, v = spec["cases"], spec_verdict(spec["cases"])
    statuses = ("pass", "fail", "error", "timeout", "crash", "not run")
    lines = [f"## Spec suite ({spec['which']}" + (f", shard {spec['shard']}" if spec.get("shard") else "")
             + (f", cases matching `{spec['pattern']}`" if spec.get("pattern") else "") + ")", "",
             f"{len(records)} cases run on each executor, {len(spec['skipped'])} excluded "
             f"(spec_tests/exclusions.py), {spec['seconds']} s.", "",
             "| executor | " + " | ".join(statuses) + " |", "|---|" + "---|" * len(statuses)]
    for executor in ("reference", "cuda"):
        counts = [sum(r[executor] == s for r in records.values()) for s in statuses]
        lines.append(f"| {executor} | " + " | ".join(map(str, counts)) + " |")
    lines += ["", f"### The reference passes, cuda does not ({len(v['regressions'])})", ""]
    lines += [f"- `{k}` {records[k]['cuda']}: {_first_line(records[k].get('message', ''))}"
              for k in v["regressions"]] or ["none"]
    if v["not_run"]:
        lines += ["", f"### Not run before the deadline ({len(v['not_run'])}): run them with --shard", "",
                  ", ".join(f"`{k}`" for k in v["not_run"][:40]) + (" ..." if len(v["not_run"]) > 40 else "")]
    if v["cuda_only"]:
        lines += ["", f"### cuda passes, the reference does not ({len(v['cuda_only'])})", "",
                  ", ".join(f"`{k}`" for k in v["cuda_only"])]
    slow = sorted(records.items(), key=lambda kv: -kv[1]["cuda_seconds"])[:10]
    lines += ["", "Slowest on cuda (s, numba compiles included): "
              + ", ".join(f"`{k}` {r['cuda_seconds']}" for k, r in slow), ""]
    return lines


def _latency_markdown(results: dict) -> list[str]:
    lines = ["## Latency (median ms; host input to host output unless the note says otherwise)", "",
             "| model | runtime | ms | runs | first run ms | max abs diff vs ORT CPU | copies h2d | "
             "copies d2h | leaves the GPU at / note |", "|---|---|---|---|---|---|---|---|---|"]
    for name, rows in results.items():
        for label, row in rows.items():
            where = "; ".join(row.get("leaves_gpu_at", [])) or row.get("note", "") or row.get("error", "")
            lines.append(f"| {name} | {label} | {_fmt(row.get('ms'))} | {row.get('runs', '')} | "
                         f"{row.get('first_run_ms', '')} | "
                         f"{_fmt(row.get('max_abs_diff_vs_ort_cpu'), '.2e')} | {row.get('h2d', '')} | "
                         f"{row.get('d2h', '')} | {where} |")
    ratios = ratio_rows(results)
    if ratios:
        lines += ["", "## onnxkit-cuda over torch eager (same GPU, fp32, TF32 off)", "",
                  "| model | best onnxkit | ms | torch eager ms | ratio | torch resident ms "
                  "| ratio to resident |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {r['model']} | {r['onnxkit']} | {r['onnxkit_ms']:.3f} | {r['torch_ms']:.3f} | "
                  f"{r['ratio']:.2f} | {_fmt(r['torch_resident_ms'])} | {_fmt(r['ratio_resident'], '.2f')} |"
                  for r in ratios]
    return lines + [""]


def _profile_markdown(name: str, prof: dict) -> list[str]:
    if "error" in prof:
        return [f"## Where the time goes: {name}", "", f"profile failed: {prof['error']}", ""]
    return [f"## Where the time goes: {name}, {prof['label']}, every node synchronized", "",
            f"{prof['ms_per_run']} ms per run (mean of {prof['runs']}; synchronizing each node "
            "adds a little).", "", prof["op_table"], "", "Slowest nodes:", "", prof["node_table"], ""]


def verdict_lines(report: dict) -> list[str]:
    """The speed verdict where models were timed, the spec verdict where the suite ran."""
    lines = [target_verdict_line(report["results"])] if report.get("results") else []
    return lines + ([spec_verdict_line(report["spec"])] if report.get("spec") else [])


def markdown(report: dict) -> str:
    """The whole report: verdicts first, then the spec suite, latency, ratios, profiles."""
    env, spec, results = report["environment"], report.get("spec"), report.get("results") or {}
    lines = [f"# onnxkit `cuda` executor on {env['device']}", "",
             f"{env['date']}; " + ", ".join(f"{k} {v}" for k, v in env.items()
                                           if k not in ("date", "device", "ort_providers")), "",
             "## Verdicts", ""]
    lines += [f"- {line}" for line in verdict_lines(report)] + [""]
    if spec is not None:
        lines += _spec_markdown(spec)
    if results:
        lines += _latency_markdown(results)
    for name, prof in (report.get("profiles") or {}).items():
        lines += _profile_markdown(name, prof)
    return "\n".join(lines)


def merge_reports(reports: list[dict]) -> dict:
    """One report of several (the spec shards and benchmark stages of one session)."""
    specs = [r["spec"] for r in reports if r.get("spec")]
    merged = {"environment": reports[0]["environment"], "spec": merge_specs(specs) if specs else None,
              "results": {}, "profiles": {}}
    for r in reports:
        merged["results"].update(r.get("results") or {})
        merged["profiles"].update(r.get("profiles") or {})
    return merged


def write_report(report: dict, stem: str) -> list[Path]:
    """``RESULTS_DIR/<stem>.json`` and ``.md``, copied into ``$OUT`` when it is set."""
    RESULTS_DIR.mkdir(exist_ok=True)
    paths = [RESULTS_DIR / f"{stem}.json", RESULTS_DIR / f"{stem}.md"]
    paths[0].write_text(json.dumps(report, indent=1, default=str))
    paths[1].write_text(markdown(report))
    if os.environ.get("OUT"):
        Path(os.environ["OUT"]).mkdir(parents=True, exist_ok=True)
        for path in paths:
            shutil.copy(path, Path(os.environ["OUT"]) / path.name)
    return paths


def report_stem(env: dict, tag: str | None) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", env["device"].lower()).strip("-")
    return f"cuda-{slug}-{env['date'][:10]}" + (f"-{tag}" if tag else "")


# --- a tiny model for --smoke ----------------------------------------------------------------

def smoke_model(path: Path) -> dict:
    """A small conv net (Conv, BatchNorm, Relu, MaxPool, Softsign on the host, Gemm, Softmax)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n) for n, s in
             (("w", (4, 2, 3, 3)), ("scale", (4,)), ("bias", (4,)), ("mean", (4,)),
              ("fc", (16, 3)))]
    inits.append(numpy_helper.from_array(np.abs(rng.standard_normal(4)).astype(np.float32), "var"))
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["b"]),
             helper.make_node("Relu", ["b"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Softsign", ["p"], ["s"]),
             helper.make_node("Flatten", ["s"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"], ["g"]),
             helper.make_node("Softmax", ["g"], ["output"])]
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])
    y_info = helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3])
    graph = helper.make_graph(nodes, "smoke", [x_info], [y_info], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, str(path))
    return {"x": rng.standard_normal((1, 2, 4, 4)).astype(np.float32)}


def smoke(repeat: int) -> tuple[dict, dict]:
    """The benchmark and profile code paths on ``smoke_model``: (results, profiles)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "smoke.onnx"
        feeds = smoke_model(path)
        results = {"smoke": model_rows(str(path), feeds, "smoke", repeat, 1)}
        return results, profiles(results, ["smoke"], lambda _: (str(path), feeds))


# --- the command line ----------------------------------------------------------------------------

def _shard(text: str) -> tuple[int, int]:
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N, got {text!r}")
    return int(k), int(n)


def parse_args(argv=None) -> argparse.Namespace:
    from benchmarks.models import ALL_MODELS, KNOWN_MODELS, ON_DEMAND_MODELS

    parser = argparse.ArgumentParser(prog="python -m benchmarks.cuda_run",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(ON_DEMAND_MODELS + ALL_MODELS),
                        choices=KNOWN_MODELS)
    parser.add_argument("--profile", nargs="*", default=[TARGET_MODEL], metavar="MODEL",
                        help="models to profile per op, if timed (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--spec", choices=("subset", "all"), default="subset")
    parser.add_argument("--cases", metavar="REGEX", help="only the spec cases whose kind:name matches")
    parser.add_argument("--shard", type=_shard, metavar="K/N", help="the K-th of N slices of the cases")
    parser.add_argument("--case-timeout", type=float, default=90.0, metavar="S",
                        help="a cuda case with no result after S seconds is a timeout")
    parser.add_argument("--deadline", type=float, default=None, metavar="S",
                        help="start no spec case after S seconds (the rest: 'not run')")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--skip-spec", action="store_true", help="the benchmark only")
    which.add_argument("--spec-only", action="store_true", help="the spec suite only")
    parser.add_argument("--tag", help="appended to the result files' name "
                        "(default: spec / spec-KofN / bench / smoke for a partial run)")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny model and a few spec cases only (works simulated)")
    parser.add_argument("--merge", nargs="+", metavar="JSON", help="write one report of these results")
    parser.add_argument("--spec-worker", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def default_tag(args) -> str | None:
    if args.tag:
        return args.tag
    if args.smoke:
        return "smoke"
    if args.spec_only:
        return "spec" + (f"-{args.shard[0]}of{args.shard[1]}" if args.shard else "")
    return "bench" if args.skip_spec else None


def run_everything(args, env: dict) -> dict:
    """The spec part and the benchmark part that ``args`` ask for, as one report."""
    from benchmarks.models import feeds as model_feeds, model_path

    report = {"environment": env, "spec": None, "results": {}, "profiles": {}}
    if not args.skip_spec:
        report["spec"] = spec_suite(args.spec, args.cases or (SMOKE_CASES if args.smoke else None),
                                    args.shard, args.case_timeout, args.deadline)
        print(spec_verdict_line(report["spec"]), flush=True)
    if args.spec_only:
        return report
    if args.smoke:
        report["results"], report["profiles"] = smoke(args.repeat)
    else:
        try:
            benchmark(args.models, args.repeat, args.warmup, report["results"])
            report["profiles"] = profiles(report["results"], args.profile,
                                          lambda name: (str(model_path(name)), model_feeds(name)))
        except KeyboardInterrupt:  # e.g. `timeout -s INT`: keep what was measured
            print("interrupted: reporting what was measured", file=sys.stderr, flush=True)
        print(target_verdict_line(report["results"]), flush=True)
    return report


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.spec_worker:
        return spec_worker(args.spec_worker)
    if args.merge:
        report = merge_reports([json.loads(Path(p).read_text()) for p in args.merge])
        paths = write_report(report, report_stem(report["environment"], args.tag or "merged"))
        print("\n".join(verdict_lines(report)))
        print(f"wrote {paths[1]} and .json")
        return 0

    from onnxkit.kernels.cuda import unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        print(f"no GPU: {reason}", file=sys.stderr)
        return 2
    env = environment()
    if env["simulator"] and not args.smoke:
        print("the simulator is far too slow for the benchmark: use --smoke", file=sys.stderr)
        return 2
    print(f"device: {env['device']}", flush=True)
    report = run_everything(args, env)
    paths = write_report(report, report_stem(env, default_tag(args)))
    copied = f" (copied into {os.environ['OUT']})" if os.environ.get("OUT") else ""
    print(f"wrote {paths[1]} and .json{copied}")
    spec = report["spec"]
    return 1 if spec is not None and spec_verdict(spec["cases"])["regressions"] else 0


if __name__ == "__main__":
    sys.exit(main())
