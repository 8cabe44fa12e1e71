"""The spec suite on cuda: which cases, the reference run, the cuda run in a watched child
process (timeouts, crashes, sticky CUDA errors, shards, the deadline), and the verdict of
comparing the two executors case by case.

The child is ``python -m benchmarks.cuda_run --spec-worker KEYS.json``, which calls
``spec_worker`` here.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: messages after which the CUDA context is unusable: the next case gets a fresh process
STICKY_CUDA_ERROR = re.compile(r"ILLEGAL_ADDRESS|ILLEGAL_INSTRUCTION|LAUNCH_FAILED|LAUNCH_TIMEOUT|"
                               r"MISALIGNED_ADDRESS|HARDWARE_STACK_ERROR|CUDA_ERROR_ASSERT|"
                               r"CUDA_ERROR_UNKNOWN|cudaErrorIllegal")


# --- the spec suite: which cases -----------------------------------------------------------

def case_key(case) -> str:
    """``kind:name``, as the spec tests' ids and the reports name a case."""
    return f"{case.kind}:{case.name}"


def select_spec_cases(which: str, pattern: str | None = None, shard: tuple[int, int] | None = None,
                      only: set[str] | None = None):
    """The cases to run and the excluded ones: ``(cases, {key: reason})``.

    ``which`` is "subset" (spec_tests/cuda_subset.py, every case the simulator CI runs plus
    the slow ones) or "all"; ``pattern`` filters keys (``re.search``); ``shard`` (k, n)
    keeps the k-th (1-based) of n consecutive slices of the cases sorted by key: cases of
    one operator stay together, so each kernel compiles in one shard, not in all;
    ``only``: these keys alone (``not_run_keys`` of an earlier, incomplete run)."""
    from onnxkit.conformance import all_cases
    from spec_tests.cuda_subset import CUDA_SUBSET, SLOW_UNDER_SIMULATOR
    from spec_tests.exclusions import EXCLUDED, EXCLUDED_BY_EXECUTOR

    wanted = CUDA_SUBSET | SLOW_UNDER_SIMULATOR
    cases = sorted((c for c in all_cases() if which == "all" or (c.kind == "node" and c.name in wanted)),
                   key=case_key)
    if pattern:
        cases = [c for c in cases if re.search(pattern, case_key(c))]
    if only is not None:
        cases = [c for c in cases if case_key(c) in only]
    if shard:
        k, n = shard
        cases = cases[(k - 1) * len(cases) // n:k * len(cases) // n]
    excluded = {**EXCLUDED, **EXCLUDED_BY_EXECUTOR.get("cuda", {})}
    skipped = {case_key(c): excluded[c.name] for c in cases if c.name in excluded}
    return [c for c in cases if case_key(c) not in skipped], skipped


def not_run_keys(report: dict) -> set[str]:
    """The cases an earlier run's report (``cuda_run``'s JSON) did not reach on cuda."""
    spec = report.get("spec") or {}
    return {key for key, r in spec.get("cases", {}).items() if r["cuda"] == "not run"}


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


def _run_serial(keys: list[str], case_timeout: float, deadline: float,
                startup_timeout: float) -> dict[str, dict]:
    """``keys`` one after another, in one child at a time (a fresh one after a timeout, a
    crash or a sticky CUDA error)."""
    results: dict[str, dict] = {}
    todo = list(keys)
    while todo and time.monotonic() < deadline:
        if not _one_worker(todo, results, case_timeout, deadline, startup_timeout):
            break
    for key in todo:
        results[key] = {"status": "not run", "message": "the deadline came first", "seconds": 0.0}
    return results


def chunks(keys: list[str], jobs: int) -> list[list[str]]:
    """``keys`` (sorted) cut into consecutive chunks for ``jobs`` parallel children: four
    per child, so a child that drew quick cases takes another chunk while a slow one is
    busy, and each operator's cases mostly stay in one chunk (its kernels compile once)."""
    n = min(len(keys), 1 if jobs <= 1 else 4 * jobs)
    return [keys[i * len(keys) // n:(i + 1) * len(keys) // n] for i in range(n)]


def run_cuda_cases(keys: list[str], case_timeout: float, deadline: float,
                   startup_timeout: float = 300.0, jobs: int = 1) -> dict[str, dict]:
    """``{key: {"status", "message", "seconds"}}`` for each key, run on cuda in watched
    child processes, ``jobs`` of them at once (each its own CUDA context on the one GPU:
    numba's compiling is what takes the time, and it runs on the CPU); ``deadline`` is a
    ``time.monotonic()`` value after which no case starts. Statuses beyond run_case's:
    "timeout", "crash", "not run"."""
    parts = chunks(keys, jobs)
    if len(parts) <= 1:
        return _run_serial(keys, case_timeout, deadline, startup_timeout)
    results: dict[str, dict] = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for part in pool.map(lambda chunk: _run_serial(chunk, case_timeout, deadline, startup_timeout),
                             parts):
            results.update(part)
    return results


def spec_suite(which: str, pattern: str | None = None, shard: tuple[int, int] | None = None,
               case_timeout: float = 90.0, deadline_s: float | None = None, jobs: int = 1,
               only: set[str] | None = None) -> dict:
    """Run the selected cases on reference and cuda; the JSON-ready record of every case."""
    start = time.monotonic()
    deadline = start + deadline_s if deadline_s else float("inf")
    cases, skipped = select_spec_cases(which, pattern, shard, only)
    reference = reference_statuses(cases)
    print(f"spec: reference done ({len(cases)} cases, {time.monotonic() - start:.0f} s); cuda next, "
          f"{jobs} process{'es' if jobs > 1 else ''} at once", flush=True)
    cuda = run_cuda_cases([case_key(c) for c in cases], case_timeout, deadline, jobs=jobs)
    records = {key: {"reference": reference[key], "cuda": cuda[key]["status"],
                     "cuda_seconds": cuda[key]["seconds"],
                     **({"message": cuda[key]["message"]} if cuda[key]["status"] != "pass" else {})}
               for key in reference}
    return {"which": which, "pattern": pattern, "shard": "/".join(map(str, shard)) if shard else None,
            "jobs": jobs, "seconds": round(time.monotonic() - start, 1), "skipped": skipped,
            "cases": records}


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
    """One spec record of several runs (shards, the rest of an incomplete run): later
    runs win for a case run twice, except that "not run" never replaces a result (a
    shell glob lists ``-spec-rest.json`` before ``-spec.json``)."""
    merged = {"which": "+".join(sorted({s["which"] for s in specs})), "pattern": None,
              "shard": None, "seconds": round(sum(s["seconds"] for s in specs), 1),
              "skipped": {}, "cases": {}}
    for s in specs:
        merged["skipped"].update(s["skipped"])
        merged["cases"].update({k: r for k, r in s["cases"].items()
                                if r["cuda"] != "not run" or k not in merged["cases"]})
    return merged
