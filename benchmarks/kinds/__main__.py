"""Model kinds people run, built by the benchmark itself, on onnxkit and onnxruntime.

    pip install -e '.[kinds]'                    # torch, transformers, timm, lightgbm ...
    python -m benchmarks.kinds                   # every model (~15 min on 2 cores)
    python -m benchmarks.kinds --kinds trees recurrent --quick
    python -m benchmarks.kinds --models bert_ts gpt2_past_dynamo
    python -m benchmarks.kinds --kinds vision --levels   # cpu levels 1 and 2 timed too

Every model is built from random weights (no downloads) and cached under
``.cache/kinds/`` (``--rebuild`` exports again). Each runs in a process of its own
(``benchmarks.kinds.measure``): outputs of onnxkit ``cpu`` level 3 and ``reference``
against onnxruntime with optimizations off; node counts at onnxkit level 2 against
onnxruntime EXTENDED; median ms of onnxkit cpu L3, onnxkit reference, onnxruntime
ENABLE_ALL and onnx.reference, each on ``--threads`` threads; for the fp16 model (every
model with ``--levels``) cpu levels 1 and 2 as well, and level 2 slower than level 1
fails the run. A model whose library is missing is skipped. Writes ``kinds.md`` and
``kinds.json`` to ``--out`` (not with ``--quick`` unless ``--out`` is given); exits 1 when
an onnxkit output is beyond its tolerance, level 2 is slower than level 1, or a model fails.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.kinds import report
from benchmarks.kinds.catalog import CATALOG, KINDS

ROOT = Path(__file__).resolve().parents[2]


def run_one(name: str, args) -> dict:
    cmd = [sys.executable, "-m", "benchmarks.kinds.measure", name, "--threads",
           str(args.threads), "--cap", str(args.cap)]
    cmd += ["--quick"] * args.quick + ["--rebuild"] * args.rebuild + ["--levels"] * args.levels
    env = {**os.environ, "PYTHONWARNINGS": "ignore", "NUMBA_NUM_THREADS": str(args.threads),
           "OMP_NUM_THREADS": str(args.threads)}
    env.setdefault("NUMBA_CACHE_DIR", str(ROOT / ".cache" / "numba"))
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"model": name, "kind": CATALOG[name].kind, "error": f"timeout {args.timeout}s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"model": name, "kind": CATALOG[name].kind, "error": tail[:200]}
    return json.loads(lines[-1])


def _load(rows: list[dict]) -> str:
    loads = [x for r in rows for x in r.get("load", [])]
    return f"{min(loads):.1f}-{max(loads):.1f}" if loads else "not measured"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kinds",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="*", choices=KINDS, help="only these kinds")
    parser.add_argument("--models", nargs="*", choices=sorted(CATALOG), help="only these models")
    parser.add_argument("--quick", action="store_true",
                        help="few runs, no onnxkit/onnx reference timing")
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--levels", action="store_true",
                        help="time cpu levels 1 and 2 on every model (always on the fp16 model)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cap", type=float, default=3.0,
                        help="a runtime whose run takes longer (s) is timed once")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per model")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    names = [n for n, e in CATALOG.items() if (not args.kinds or e.kind in args.kinds)
             and (not args.models or n in args.models)]
    rows = []
    for name in names:
        start = time.perf_counter()
        rows.append(run_one(name, args))
        verdict = report.failures(rows[-1])
        print(f"{name}: {time.perf_counter() - start:.0f}s, cpu L3 / ORT "
              f"{report.fmt(report.ratio(rows[-1], 'cpu-L3'))}"
              + ("" if (lv := report.levels(rows[-1])) is None
                 else f", cpu L1 {lv[0]:.2f} ms, L2 {lv[1]:.2f} ms (L2 / L1 {lv[1] / lv[0]:.2f})")
              + (f", {rows[-1]['skipped']}" if "skipped" in rows[-1] else "")
              + "".join(f"\n    FAIL {v}" for v in verdict), flush=True)
    header = (f"# Model kinds on onnxkit against onnxruntime — {time.strftime('%Y-%m-%d %H:%M')}"
              f"\n\n`python -m benchmarks.kinds` (see its docstring). {platform.processor() or platform.machine()}, "
              f"{os.cpu_count()} cores, {args.threads} thread{'s' * (args.threads > 1)} per "
              f"runtime; best ms of up to 30 runs "
              f"(the machine was shared: load average {_load(rows)}). "
              f"Ratios are to onnxruntime ENABLE_ALL; node counts are top-level nodes with "
              f"model-local functions inlined.")
    text = report.markdown(rows, header)
    print(text)
    out = args.out or (None if args.quick or args.models or args.kinds
                       else ROOT / "benchmarks" / "results")
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / "kinds.md").write_text(text)
        (out / "kinds.json").write_text(json.dumps(
            {"rows": rows, "summary": report.summary(rows), "threads": args.threads}, indent=1))
    return 1 if any(report.failures(r) for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
