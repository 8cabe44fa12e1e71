"""Tree ensembles (ai.onnx.ml TreeEnsembleClassifier / Regressor): onnxkit against
onnxruntime and onnx.reference, in one run.

    python -m benchmarks.trees                     # 100-tree forests on 1000 rows
    python -m benchmarks.trees --trees 300 --rows 5000 --out benchmarks/results/trees.md
    python -m benchmarks.trees --threads 1        # onnxruntime and onnxkit on one thread

scikit-learn fits a RandomForestClassifier and a RandomForestRegressor (fixed seeds),
skl2onnx converts them (no ZipMap). Each runtime builds its session once and runs the
same rows ``--repeat`` times; the table gives the best and median run, the best's ratios
to onnxruntime's and onnx.reference's, and how each runtime's outputs compare with
scikit-learn's (labels that differ, the largest score difference). onnxkit's reference
executor walks the trees with numpy (one tree level per step, the node table rebuilt from
the attributes on every run), the ``cpu`` executor with Numba (``onnxkit.kernels.cpu.trees``:
the forest laid out when the plan is built, one compiled walk over all trees per run,
rows shared among threads). Prints the table; ``--out`` also writes it.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings
from pathlib import Path

import numpy as np

OPSETS = {"": 17, "ai.onnx.ml": 3}
TOLERANCE = 1e-5


def forests(trees: int, rows: int, features: int = 20):
    """[(name, onnx model, X, expected outputs as sklearn gives them)]."""
    import skl2onnx
    from sklearn.datasets import make_classification, make_regression
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    X, y = make_classification(2 * rows, features, n_informative=10, n_classes=3,
                               random_state=0)
    Xr, yr = make_regression(2 * rows, features, noise=0.5, random_state=0)
    X, Xr = X.astype(np.float32), Xr.astype(np.float32)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = RandomForestClassifier(n_estimators=trees, random_state=0).fit(X[:rows], y[:rows])
        reg = RandomForestRegressor(n_estimators=trees, max_depth=12, random_state=0).fit(
            Xr[:rows], yr[:rows])
        for name, est, data, options in [
                ("classifier", clf, X, {id(clf): {"zipmap": False}}),
                ("regressor", reg, Xr, None)]:
            model = skl2onnx.to_onnx(est, data[:1], options=options, target_opset=OPSETS)
            test = data[rows:]
            if name == "classifier":
                expected = [est.predict(test), est.predict_proba(test)]
            else:
                expected = [est.predict(test).reshape(-1, 1)]
            out.append((name, model, test, expected))
    return out


def runners(model, threads: int | None = None):
    """{runtime name: run(feeds) -> outputs}, each session built here (not timed);
    ``threads``: onnxruntime's intra-op threads (onnxkit's are set by ``main``)."""
    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator

    import onnxkit

    data = model.SerializeToString()
    options = ort.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    ort_sess = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    ref = onnxkit.Session(model, executor="reference")
    cpu = onnxkit.Session(model, executor="cpu")
    onnx_ref = ReferenceEvaluator(model)
    return {"onnxruntime": lambda f: ort_sess.run(None, f),
            "onnxkit-ref": lambda f: ref.run(None, f),
            "onnxkit-cpu": lambda f: cpu.run(None, f),
            "onnx-ref": lambda f: onnx_ref.run(None, f)}


def agreement(got, expected) -> str:
    """How the outputs compare with scikit-learn's: labels that differ (a tie between two
    classes' scores can go either way in float32) and the largest score difference."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, scikit-learn {len(expected)}"
    labels, worst, close = 0, 0.0, True
    for g, e in zip(got, expected):
        g, e = np.asarray(g), np.asarray(e)
        if g.shape != e.shape:
            return f"shape {list(g.shape)}, scikit-learn {list(e.shape)}"
        if e.dtype.kind in "iu":
            labels += int((g != e).sum())
        else:
            worst = max(worst, float(np.abs(g.astype(np.float64) - e).max()))
            close = close and np.allclose(g, e, rtol=TOLERANCE, atol=TOLERANCE)
    text = f"max score diff {worst:.1e}"
    if labels:
        text += f", {labels} label(s) differ"
    return text + ("" if close else f" (beyond rtol = atol = {TOLERANCE:g})")


def time_runs(run, feeds, repeat: int) -> list[float]:
    run(feeds)  # one untimed run first
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run(feeds)
        times.append(time.perf_counter() - start)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--threads", type=int, help="onnxruntime's and onnxkit cpu's threads "
                        "(default: each runtime's own; onnxkit's at most NUMBA_NUM_THREADS)")
    parser.add_argument("--out", type=Path, help="also write the table (markdown) here")
    args = parser.parse_args(argv)
    if args.threads:
        import numba

        numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    lines = [f"# Tree ensembles: {args.trees} trees, {args.rows} rows, best / median of "
             f"{args.repeat} runs", "",
             f"{platform.processor() or platform.machine()}, python {platform.python_version()}"
             f", threads: {args.threads or 'default'}, load average "
             f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}",
             "", "| model | runtime | best ms | median ms | best / onnxruntime | best / onnx-ref "
             "| against scikit-learn |", "|---|---|---:|---:|---:|---:|---|"]
    for name, model, X, expected in forests(args.trees, args.rows):
        feeds = {model.graph.input[0].name: X}
        rows = {}
        for runtime, run in runners(model, args.threads).items():
            times = time_runs(run, feeds, args.repeat)
            against = agreement(run(feeds), expected)
            rows[runtime] = (min(times) * 1e3, statistics.median(times) * 1e3, against)
        ort_best, ref_best = rows["onnxruntime"][0], rows["onnx-ref"][0]
        for runtime, (best, median, against) in rows.items():
            lines.append(f"| {name} | {runtime} | {best:.2f} | {median:.2f} | "
                         f"{best / ort_best:.1f}x | {best / ref_best:.3f}x | {against} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
