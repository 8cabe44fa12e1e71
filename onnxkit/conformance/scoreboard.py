"""The scoreboard: every case on every installed runtime, each outcome one of a few states.

States of a cell (one case on one runtime):

    pass      passes
    adapted   refused for its IR/opset version, passes once adapted (``adapt.adapt``)
    version   refuses the version, and no adapted case it accepts could be made
    fail      a wrong answer (of the case, or of the adapted case where the version was refused)
    error     the runtime raised or refused for another reason
    crash     the runtime's worker process died
    timeout   no answer within the per-case timeout
    skip      excluded (spec_tests/exclusions.py), with its reason

Each runtime runs in its own worker process (``isolation.Worker``), ``jobs`` runtimes at a
time; a runtime that is not installed is listed as such and runs nothing.
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

STATES = ("pass", "adapted", "version", "fail", "error", "crash", "timeout", "skip")
LABELS = {"pass": "passes", "adapted": "passes once adapted", "version": "refuses the version",
          "fail": "wrong answer", "error": "error", "crash": "crash", "timeout": "timeout",
          "skip": "excluded"}


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


def run_cell(worker: Worker, case: Case, timeout: float) -> Cell:
    """Run ``case``; where its version is refused, run the adapted case too."""
    try:
        feeds_list = [case.feeds(inputs) for inputs, _ in case.data_sets]
    except Exception as exc:  # a case file that cannot be read is the case's error
        return Cell("error", f"the case could not be loaded: {type(exc).__name__}: {exc}")
    state, message = _outcome(worker, case, case.model, feeds_list, timeout)
    if state != "error" or not is_version_refusal(message):
        return Cell(state, message)
    adapted, note = adapt(case.model)
    if adapted is None:
        return Cell("version", message, "", note)
    state2, message2 = _outcome(worker, case, adapted, feeds_list, timeout)
    if state2 == "pass":
        return Cell("adapted", message, note)
    if state2 == "error" and is_version_refusal(message2):
        return Cell("version", message, note, message2)
    return Cell(state2, message, note, message2)


def run_runtime(runtime: str, cases: list[Case], timeout: float = 60.0,
                excluded: dict[str, str] | None = None, tick=None) -> tuple[list[Cell], float, int]:
    """Every case on one runtime: (cells in case order, seconds, worker restarts)."""
    excluded = excluded or {}
    start = time.perf_counter()
    cells = []
    with Worker(runtime) as worker:
        for case in cases:
            if case.name in excluded:
                cells.append(Cell("skip", excluded[case.name]))
            else:
                cells.append(run_cell(worker, case, timeout))
            if tick:
                tick(runtime)
        restarts = worker.restarts
    return cells, time.perf_counter() - start, restarts


def totals(cells: list[Cell]) -> dict[str, int]:
    out = {s: 0 for s in STATES}
    for c in cells:
        out[c.state] += 1
    return out


def run_scoreboard(runtimes: list[str], cases: list[Case], jobs: int = 2, timeout: float = 60.0,
                   excluded: dict[str, str] | None = None, progress: bool = True) -> dict:
    """Run ``cases`` on each runtime (``jobs`` at a time); the scoreboard as a JSON-able dict."""
    from tqdm.auto import tqdm

    versions = {name: runtime_version(name) for name in runtimes}
    ready = [name for name in runtimes if versions[name] is not None]
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
        futures = {name: pool.submit(run_runtime, name, cases, timeout, excluded, tick) for name in ready}
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
        cells, seconds, restarts = results[name]
        board["runtimes"][name] = {
            "version": versions[name], "installed": True, "seconds": round(seconds, 1),
            "restarts": restarts, "totals": totals(cells),
            "cells": [asdict(c) if c.state != "pass" else {"state": "pass"} for c in cells]}
    return board


__all__ = ["STATES", "LABELS", "Cell", "run_cell", "run_runtime", "run_scoreboard", "totals",
           "operator_versions"]
