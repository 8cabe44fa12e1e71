"""The scoreboard: every case on every installed runtime, each outcome one of a few states.

States of a cell (one case on one runtime):

    pass      passes
    adapted   refused for its IR/opset version, passes once adapted (``adapt.adapt``)
    version   refuses the version, and no adapted case it accepts could be made
    fail      a wrong answer (of the case, or of the adapted case where the version was refused)
    error     the runtime raised or refused for another reason
    crash     the runtime's worker process died
    timeout   no answer within the per-case timeout
    skip      excluded (onnxkit/conformance/exclusions.py), with its reason
    unrun     not run: the runtime runs every N-th case only (its adapter's ``EVERY``, or
              ``every={name: N}``), so that a full run of every runtime stays short

Each runtime runs in its own worker process (``isolation.Worker``), ``jobs`` runtimes at a
time, the slowest first so that the last to finish is a quick one; a runtime that is not
installed is listed as such and runs nothing. An adapted case is made once per case and
shared by every runtime that refuses its version.
"""

from __future__ import annotations

import platform
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import datetime, timezone

import onnx

from onnxkit.conformance.adapt import adapt, is_version_refusal
from onnxkit.conformance.cases import Case
from onnxkit.conformance.compare import assert_outputs_close
from onnxkit.conformance.isolation import Worker
from onnxkit.conformance.runtimes import version as runtime_version

STATES = ("pass", "adapted", "version", "fail", "error", "crash", "timeout", "skip", "unrun")
LABELS = {"pass": "passes", "adapted": "passes once adapted", "version": "refuses the version",
          "fail": "wrong answer", "error": "error", "crash": "crash", "timeout": "timeout",
          "skip": "excluded", "unrun": "not run"}
# which runtimes start first: the slow ones (per case), so that the run ends on a quick one
_SLOWEST_FIRST = ("tinygrad", "tvm", "openvino", "onnx.reference", "cpu", "reference", "tract",
                  "onnx2torch", "onnxruntime")
_ADAPTED: dict[tuple[str, str], tuple] = {}


@dataclass
class Cell:
    """One case on one runtime. ``adapted`` says what was lowered, when it was."""

    state: str
    message: str = ""
    adapted: str = ""
    adapted_message: str = ""


def operator_versions(model) -> list[str]:
    """``Op-since_version`` of each operator of the main graph (``domain::Op-v`` outside ai.onnx)."""
    imported = {o.domain: o.version for o in model.opset_import}
    out = set()
    for node in model.graph.node:
        domain = "" if node.domain == "ai.onnx" else node.domain
        prefix = f"{domain}::" if domain else ""
        try:
            since = onnx.defs.get_schema(node.op_type, imported.get(domain, 1), domain).since_version
            out.add(f"{prefix}{node.op_type}-{since}")
        except onnx.defs.SchemaError:
            out.add(f"{prefix}{node.op_type}")
    return sorted(out)


def _outcome(worker: Worker, case: Case, model, feeds_list, timeout: float) -> tuple[str, str]:
    """(state, message) of one run: pass / fail / error / crash / timeout."""
    kind, payload = worker.run(model, feeds_list, timeout)
    if kind != "ok":
        return kind, payload
    try:
        for (_, expected), actual in zip(case.data_sets, payload):
            assert_outputs_close(expected, actual, case.rtol, case.atol)
    except AssertionError as exc:
        return "fail", str(exc)[:2000]
    except Exception as exc:  # outputs of a shape or kind the comparison cannot read
        return "fail", f"{type(exc).__name__}: {exc}"[:2000]
    return "pass", ""


def _adapted(case: Case):
    """``adapt(case.model)``, made once per case for every runtime that refuses it."""
    key = (case.kind, case.name)
    if key not in _ADAPTED:
        _ADAPTED[key] = adapt(case.model)
    return _ADAPTED[key]


def run_cell(worker: Worker, case: Case, timeout: float) -> Cell:
    """Run ``case``; where its version is refused, run the adapted case too."""
    try:
        feeds_list = [case.feeds(inputs) for inputs, _ in case.data_sets]
    except Exception as exc:  # a case file that cannot be read is the case's error
        return Cell("error", f"the case could not be loaded: {type(exc).__name__}: {exc}")
    state, message = _outcome(worker, case, case.model, feeds_list, timeout)
    if state != "error" or not is_version_refusal(message):
        return Cell(state, message)
    adapted, note = _adapted(case)
    if adapted is None:
        return Cell("version", message, "", note)
    state2, message2 = _outcome(worker, case, adapted, feeds_list, timeout)
    if state2 == "pass":
        return Cell("adapted", message, note)
    if state2 == "error" and is_version_refusal(message2):
        return Cell("version", message, note, message2)
    return Cell(state2, message, note, message2)


def default_every(runtime: str) -> int:
    """Every how many cases ``runtime`` runs by default: its adapter's ``EVERY`` (1: all)."""
    from onnxkit.conformance.runtimes import RUNTIMES, adapter

    return getattr(adapter(runtime), "EVERY", 1) if runtime in RUNTIMES else 1


def run_runtime(runtime: str, cases: list[Case], timeout: float = 60.0,
                excluded: dict[str, str] | None = None, tick=None, every: int = 1) -> dict:
    """Every ``every``-th case on one runtime: its cells (in case order, the others ``unrun``)
    and where the time went (seconds in all, starting workers, the workers' processor time,
    worker restarts)."""
    excluded = excluded or {}
    start = time.perf_counter()
    cells = []
    unrun = Cell("unrun", f"not run: this run gives {runtime} 1 case in {every}")
    with Worker(runtime) as worker:
        for i, case in enumerate(cases):
            if case.name in excluded:
                cells.append(Cell("skip", excluded[case.name]))
            elif i % every:
                cells.append(unrun)
            else:
                cells.append(run_cell(worker, case, timeout))
            if tick:
                tick(runtime)
    return {"cells": cells, "seconds": time.perf_counter() - start, "restarts": worker.restarts,
            "startup_seconds": worker.startup_seconds, "cpu_seconds": worker.cpu_seconds,
            "every": every}


def totals(cells: list[Cell]) -> dict[str, int]:
    out = {s: 0 for s in STATES}
    for c in cells:
        out[c.state] += 1
    return out


def run_scoreboard(runtimes: list[str], cases: list[Case], jobs: int = 2, timeout: float = 60.0,
                   excluded: dict[str, str] | None = None, progress: bool = True,
                   every: dict[str, int] | None = None) -> dict:
    """Run ``cases`` on each runtime (``jobs`` at a time); the scoreboard as a JSON-able dict.

    ``every``: runtime -> run every N-th case only (default: the adapter's ``EVERY``)."""
    from tqdm.auto import tqdm

    versions = {name: runtime_version(name) for name in runtimes}
    ready = [name for name in runtimes if versions[name] is not None]
    steps = {name: max(1, (every or {}).get(name) or default_every(name)) for name in ready}
    order = sorted(ready, key=lambda n: _SLOWEST_FIRST.index(n) if n in _SLOWEST_FIRST else -1)
    bar = tqdm(total=len(cases) * len(ready), desc="scoreboard", unit="case", disable=not progress)
    lock = threading.Lock()
    done = {name: 0 for name in ready}

    def tick(name):
        with lock:
            done[name] += 1
            bar.set_postfix_str(" ".join(f"{n}:{done[n]}" for n in ready), refresh=False)
            bar.update()

    start = time.perf_counter()
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = {name: pool.submit(run_runtime, name, cases, timeout, excluded, tick, steps[name])
                   for name in order}
        results = {name: f.result() for name, f in futures.items()}
    bar.close()
    board = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "onnx": onnx.__version__,
        "machine": f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}",
        "seconds": round(time.perf_counter() - start, 1),
        "jobs": jobs, "timeout": timeout,
        "states": {s: LABELS[s] for s in STATES},
        "cases": [{"name": c.name, "kind": c.kind, "operators": operator_versions(c.model)}
                  for c in cases],
        "runtimes": {},
    }
    for name in runtimes:
        if name not in results:
            board["runtimes"][name] = {"version": None, "installed": False}
            continue
        result = results[name]
        cells = result["cells"]
        board["runtimes"][name] = {
            "version": versions[name], "installed": True, "seconds": round(result["seconds"], 1),
            "startup_seconds": round(result["startup_seconds"], 1),
            "cpu_seconds": round(result["cpu_seconds"], 1), "restarts": result["restarts"],
            "every": result["every"], "totals": totals(cells),
            "cells": [asdict(c) if c.state not in ("pass", "unrun") else {"state": c.state}
                      for c in cells]}
    return board


__all__ = ["STATES", "LABELS", "Cell", "run_cell", "run_runtime", "run_scoreboard", "totals",
           "operator_versions", "default_every"]
