"""Cold start of the cpu executor: an empty kernel cache, one fresh process, three models.

    python -m benchmarks.cold_start                     # resnet18, mobilenetv2, bert_mini
    python -m benchmarks.cold_start --models resnet18   # some of them
    python -m benchmarks.cold_start --top 20            # longer compile profile

A temporary empty ``NUMBA_CACHE_DIR`` is made and a fresh child process builds
``onnxkit.Session(model, executor="cpu", level=3)`` and runs it once, for each model in
turn (so a kernel compiled for the first model is not compiled again for the next, as in
a notebook that opens several). The child times the imports, then per model the Session
build and the first run, and listens to Numba's ``numba:compile`` events: how many
compilations ran and how long they took (exclusive of the nested compilations of the
functions they call), per model and per Numba function. A second fresh child then runs
the same models from the cache the first one filled (the warm start). Results:
a table on stdout and ``benchmarks/results/cold_start.md``.

The target (issue 28): the cold child's total (imports + builds + first runs) <= 60 s on
the 2-core development machine. Numbers taken while other processes run are noisy: the
load average before and after is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results" / "cold_start.md"
MODELS = ("resnet18", "mobilenetv2", "bert_mini")
TARGET_S = 60.0


# --- the child -------------------------------------------------------------------------------

class _Compiles:
    """Numba compilations as they happen: (function, exclusive seconds), nesting aware."""

    def __init__(self):
        self.stack: list[list] = []  # [name, start, child seconds]
        self.done: list[tuple[str, float]] = []

    def start(self, ev) -> None:
        data = ev.data if isinstance(ev.data, dict) else {}
        disp = data.get("dispatcher")
        fn = getattr(disp, "py_func", None)
        name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', disp)}"
        self.stack.append([name, time.perf_counter(), 0.0])

    def end(self, ev) -> None:
        if not self.stack:
            return
        name, start, nested = self.stack.pop()
        total = time.perf_counter() - start
        if self.stack:
            self.stack[-1][2] += total
        self.done.append((name, total - nested))


def child(spec: dict) -> dict:
    t0 = time.perf_counter()
    import numpy as np
    from numba.core import event

    import onnxkit
    from benchmarks.models import feeds, model_path

    compiles = _Compiles()

    class Listener(event.Listener):
        def on_start(self, ev):
            compiles.start(ev)

        def on_end(self, ev):
            compiles.end(ev)

    event.register("numba:compile", Listener())
    imports_s = time.perf_counter() - t0
    rows = []
    for name in spec["models"]:
        mark = len(compiles.done)
        inputs = feeds(name)
        t = time.perf_counter()
        sess = onnxkit.Session(str(model_path(name)), executor="cpu", level=3)
        build_s = time.perf_counter() - t
        t = time.perf_counter()
        out = sess.run(None, inputs)
        run_s = time.perf_counter() - t
        mine = compiles.done[mark:]
        rows.append({"model": name, "build_s": build_s, "run_s": run_s,
                     "compiles": len(mine), "compile_s": sum(s for _, s in mine),
                     "finite": bool(np.isfinite(np.asarray(out[0], dtype=np.float64)).all())})
    per_function: dict[str, list] = {}
    for fn, s in compiles.done:
        entry = per_function.setdefault(fn, [0, 0.0])
        entry[0] += 1
        entry[1] += s
    return {"imports_s": imports_s, "rows": rows, "total_s": time.perf_counter() - t0,
            "functions": sorted(([k, *v] for k, v in per_function.items()),
                                key=lambda r: -r[2])}


# --- the parent ------------------------------------------------------------------------------

def _run_child(models, cache: str, timeout: float) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, ONNXKIT_CPU_NOTICE="0")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, "-m", "benchmarks.cold_start", "--child",
           json.dumps({"models": list(models)})]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"child failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _table(result: dict) -> list[str]:
    lines = ["| model | Session build (s) | first run (s) | compilations | compiling (s) |",
             "|---|---:|---:|---:|---:|"]
    lines.append(f"| (imports) | {result['imports_s']:.1f} | | | |")
    for r in result["rows"]:
        lines.append(f"| {r['model']} | {r['build_s']:.1f} | {r['run_s']:.1f} | "
                     f"{r['compiles']} | {r['compile_s']:.1f} |")
    n = sum(r["compiles"] for r in result["rows"])
    c = sum(r["compile_s"] for r in result["rows"])
    lines.append(f"| **total** | | **{result['total_s']:.1f}** | {n} | {c:.1f} |")
    return lines


def _profile(result: dict, top: int) -> list[str]:
    lines = ["| Numba function | compilations | seconds (exclusive) |", "|---|---:|---:|"]
    for fn, count, s in result["functions"][:top]:
        lines.append(f"| `{fn.removeprefix('onnxkit.kernels.cpu.')}` | {count} | {s:.1f} |")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--top", type=int, default=15, help="functions in the compile profile")
    parser.add_argument("--timeout", type=float, default=3600)
    parser.add_argument("--no-write", action="store_true", help="do not write the results file")
    parser.add_argument("--no-warm", action="store_true", help="skip the warm child")
    parser.add_argument("--label", default="", help="a heading for the results file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    from benchmarks.models import build

    build(tuple(args.models), verbose=False)
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="onnxkit-cold-") as cache:
        cold = _run_child(args.models, cache, args.timeout)
        load.append(os.getloadavg()[0])
        print("\n".join(_table(cold)), flush=True)  # before the warm child: kept if it fails
        warm = None if args.no_warm else _run_child(args.models, cache, args.timeout)
    verdict = "met" if cold["total_s"] <= TARGET_S else "NOT met"
    out = [f"## Cold start{': ' + args.label if args.label else ''}", "",
           f"`python -m benchmarks.cold_start --models {' '.join(args.models)}` on "
           f"{platform.node() or 'this machine'}, {os.cpu_count()} cores, "
           f"load average {load[0]:.2f} before, {load[1]:.2f} after. "
           f"`Session(model, executor=\"cpu\", level=3)` built and run once per model, "
           f"all in one fresh process with an empty kernel cache.", "",
           *_table(cold), "",
           f"Target: total <= {TARGET_S:.0f} s: **{verdict}** ({cold['total_s']:.1f} s). "
           + ("" if warm is None else
              f"Warm start (a second process, the cache filled): {warm['total_s']:.1f} s "
              f"({sum(r['compiles'] for r in warm['rows'])} compilations)."), "",
           f"Compile profile, top {args.top} Numba functions by compile seconds:", "",
           *_profile(cold, args.top), ""]
    text = "\n".join(out)
    print(text)
    if not args.no_write:
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        head = ("# Cold start of the cpu executor\n\nWritten by `python -m benchmarks.cold_start`"
                " (newest first).\n\n")
        old = RESULTS.read_text().split("\n", 4)[-1] if RESULTS.exists() else ""
        RESULTS.write_text(head + text + "\n" + old)
        print(f"\nwritten: {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
