"""Node counts: onnxkit's optimizer levels 0-3 against onnxruntime's, on the benchmark models.

    python -m benchmarks.node_counts               # builds missing models first
    python -m benchmarks.node_counts --no-check    # counts only (no output comparison)

onnxruntime's counts are read from the model it saves with
``SessionOptions.optimized_model_filepath`` at DISABLE_ALL, BASIC, EXTENDED and ALL (CPU
provider). With checking on, every onnxkit level runs on the reference executor and its
outputs are compared with level 0's: ``rel`` is max|y - y0| / max|y0| over the outputs.
The targets: level 2 <= ORT EXTENDED and level 3 <= ORT ALL, rel <= 1e-4.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np
import onnx

from benchmarks.models import ALL_MODELS, build, feeds, model_path

ORT_LEVELS = ("DISABLE_ALL", "BASIC", "EXTENDED", "ALL")


def ort_counts(path) -> dict[str, int]:
    import onnxruntime as ort

    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ORT_LEVELS:
            so = ort.SessionOptions()
            so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, f"ORT_ENABLE_{name}"
                                                  if name != "DISABLE_ALL" else "ORT_DISABLE_ALL")
            so.log_severity_level = 3
            out = os.path.join(tmp, f"{name}.onnx")
            so.optimized_model_filepath = out
            ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            counts[name] = len(onnx.load(out, load_external_data=False).graph.node)
    return counts


def relative_change(expected: list, actual: list) -> float:
    worst = 0.0
    for e, a in zip(expected, actual):
        e, a = np.asarray(e, dtype=np.float64), np.asarray(a, dtype=np.float64)
        worst = max(worst, float(np.max(np.abs(a - e)) / max(float(np.max(np.abs(e))), 1e-30)))
    return worst


def measure(name: str, check: bool) -> dict:
    import onnxkit
    from onnxkit.optimizer import optimize

    model = onnx.load(str(model_path(name)))
    row = {"model": name, "ort": ort_counts(model_path(name)), "onnxkit": {}, "rel": {}}
    reference = onnxkit.Session(model).run(None, feeds(name)) if check else None
    for level in range(4):
        optimized, report = optimize(model, level)
        row["onnxkit"][level] = report.nodes_after
        if check and level:
            got = onnxkit.Session(optimized).run(None, feeds(name))
            row["rel"][level] = relative_change(reference, got)
    return row


def table(rows: list[dict]) -> str:
    head = ("| model | O0 | O1 | O2 | O3 | ORT none | ORT basic | ORT extended | ORT all | "
            "O2 <= ext | O3 <= all | max rel change |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        o, ort = r["onnxkit"], r["ort"]
        rel = max(r["rel"].values()) if r["rel"] else None
        lines.append(
            f"| {r['model']} | {o[0]} | {o[1]} | {o[2]} | {o[3]} | {ort['DISABLE_ALL']} | {ort['BASIC']} | "
            f"{ort['EXTENDED']} | {ort['ALL']} | {'yes' if o[2] <= ort['EXTENDED'] else 'NO'} | "
            f"{'yes' if o[3] <= ort['ALL'] else 'NO'} | {'-' if rel is None else f'{rel:.1e}'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.node_counts", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"models (default: all): {', '.join(ALL_MODELS)}")
    parser.add_argument("--no-check", action="store_true", help="skip comparing outputs")
    args = parser.parse_args(argv)
    names = tuple(args.names) or ALL_MODELS
    build(names, verbose=False)
    rows = []
    for name in names:
        rows.append(measure(name, not args.no_check))
        print(f"measured {name}", file=sys.stderr)
    print(table(rows))
    ok = all(r["onnxkit"][2] <= r["ort"]["EXTENDED"] and r["onnxkit"][3] <= r["ort"]["ALL"]
             and all(v <= 1e-4 for v in r["rel"].values()) for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
