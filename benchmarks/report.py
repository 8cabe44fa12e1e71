"""Tables, target checks and the chart of a ``benchmarks.run`` measurement.

The headline runtime is ``cpu-L3`` (onnxkit's cpu executor at the highest optimizer
level, the counterpart of onnxruntime's ENABLE_ALL). The targets of issue #4:

    geometric mean of cpu-L3 / ort-all over the models  <= 1.5, no model above 2.5
    every model >= 30x faster than onnx.reference
    peak memory <= 1.5x onnxruntime's (ort-all)
    a new session (construction + first run) on ResNet-18 with a warm cache <= 2 s
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import numpy as np

HEADLINE = "cpu-L3"
BASELINE = "ort-all"
NAMES = {"ort-all": "ORT ENABLE_ALL", "ort-none": "ORT DISABLE_ALL", "cpu-L0": "onnxkit cpu L0",
         "cpu-L1": "onnxkit cpu L1", "cpu-L2": "onnxkit cpu L2", "cpu-L3": "onnxkit cpu L3",
         "onnxkit-ref": "onnxkit reference", "onnx-ref": "onnx.reference"}
BLAS_NAMES = {"onemkl": "oneMKL", "openblas": "OpenBLAS"}


def add_output_differences(results: list[dict], outputs_dir: Path) -> None:
    """``rel_diff``: max |y - y_ort| / max |y_ort| of the first output, against ort-none."""
    for r in results:
        ref = outputs_dir / f"{r['model']}.ort-none.npy"
        mine = outputs_dir / f"{r['model']}.{r['runtime']}.npy"
        if "error" in r or not ref.exists() or not mine.exists():
            continue
        a, b = np.load(ref), np.load(mine)
        if a.shape != b.shape:
            r["rel_diff"] = float("inf")
            continue
        r["rel_diff"] = float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(a))), 1e-30))


def _table(results: list[dict]) -> dict:
    return {(r["model"], r["runtime"]): r for r in results if "error" not in r}


def _geomean(values) -> float:
    values = [v for v in values if v and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def _fmt(v, digits=2) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "—"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def markdown(results: list[dict], info: dict) -> str:
    t = _table(results)
    models = list(dict.fromkeys(r["model"] for r in results))
    runtimes = list(dict.fromkeys(r["runtime"] for r in results))
    lines = [f"# onnxkit benchmark — {time.strftime('%Y-%m-%d %H:%M')}", ""]
    lines += [f"- machine: {info.get('cpu')} ({info.get('cores')} cores); load average before "
              f"{_loads(info.get('load_before'))}, after {_loads(info.get('load_after'))}",
              f"- versions: python {info.get('python')}, numpy {info.get('numpy')}, numba "
              f"{info.get('numba')}, onnx {info.get('onnx')}, onnxruntime {info.get('onnxruntime')}",
              f"- BLAS: {_blas(results)}; OPENBLAS_CORETYPE in the caller's environment: "
              f"{info.get('OPENBLAS_CORETYPE (caller)') or 'unset'}"
              f"{' (kept)' if info.get('keep_coretype') else ' (removed for the measurements)' if info.get('OPENBLAS_CORETYPE (caller)') else ''}",
              f"- Winograd or im2col for eligible 3x3 convolutions: {_conv_choice(results)}",
              f"- 1x1 layers by column bands or one product: {_pointwise_choice(results)}",
              f"- oneMKL or OpenBLAS for each product: {_blas_choice(results)}",
              f"- kernel cache warmed in {info.get('warm_s', 0):.1f} s before measuring; each "
              f"cell measured in {info.get('rounds', 1)} round(s), each round a fresh process: "
              "median of all the timed runs after warm-up",
              f"- measurements started on an idle machine: {_quiet(results)}", ""]
    lines += ["## Median time per run (ms)", "",
              "| model | " + " | ".join(NAMES.get(r, r) for r in runtimes) + " |",
              "|---|" + "---:|" * len(runtimes)]
    for m in models:
        lines.append(f"| {m} | " + " | ".join(_fmt(t[(m, r)]["median_ms"]) if (m, r) in t else "error"
                                             for r in runtimes) + " |")
    cpu_runtimes = [r for r in runtimes if r.startswith("cpu-")]
    if (BASELINE in runtimes) and cpu_runtimes:
        lines += ["", f"## Time relative to {NAMES[BASELINE]} (lower is better)", "",
                  "| model | " + " | ".join(NAMES[r] for r in cpu_runtimes)
                  + " | ORT DISABLE_ALL | onnx.reference / onnxkit cpu L3 |",
                  "|---|" + "---:|" * (len(cpu_runtimes) + 2)]
        for m in models:
            base = t.get((m, BASELINE), {}).get("median_ms")
            cells = [_fmt(t[(m, r)]["median_ms"] / base) if base and (m, r) in t else "—"
                     for r in cpu_runtimes]
            cells.append(_fmt(t[(m, "ort-none")]["median_ms"] / base)
                         if base and (m, "ort-none") in t else "—")
            cells.append(_speedup(t, m))
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        geo = [_fmt(_geomean(t[(m, r)]["median_ms"] / t[(m, BASELINE)]["median_ms"]
                             for m in models if (m, r) in t and (m, BASELINE) in t))
               for r in cpu_runtimes]
        lines.append("| **geometric mean** | " + " | ".join(geo) + " | | |")
    lines += ["", "## Peak memory added by the session (MiB) and start time (s)", "",
              "Start = session construction + first run, in a fresh process. Memory = "
              "high-water mark of the resident set minus the resident set once the runtime's "
              "libraries are loaded; the libraries themselves (Numba + LLVM ~120 MiB, "
              "onnxruntime ~20 MiB) are in the next table.", "",
              "| model | " + " | ".join(f"{NAMES.get(r, r)} MiB" for r in runtimes)
              + " | " + " | ".join(f"{NAMES.get(r, r)} start" for r in runtimes) + " |",
              "|---|" + "---:|" * (2 * len(runtimes))]
    for m in models:
        mem = [_fmt(t[(m, r)]["peak_mib"], 1) if (m, r) in t else "—" for r in runtimes]
        start = [_fmt(t[(m, r)]["start_s"]) if (m, r) in t else "—" for r in runtimes]
        lines.append(f"| {m} | " + " | ".join(mem + start) + " |")
    lines += ["", "## Peak memory including the runtime's libraries (MiB)", "",
              "| model | " + " | ".join(NAMES.get(r, r) for r in runtimes) + " |",
              "|---|" + "---:|" * len(runtimes)]
    for m in models:
        lines.append(f"| {m} | " + " | ".join(
            _fmt(t[(m, r)].get("peak_total_mib"), 1) if (m, r) in t else "—" for r in runtimes) + " |")
    lines += ["", "## Output difference against ORT DISABLE_ALL (max |Δ| / max |y|)", "",
              "| model | " + " | ".join(NAMES.get(r, r) for r in runtimes) + " |",
              "|---|" + "---:|" * len(runtimes)]
    for m in models:
        lines.append(f"| {m} | " + " | ".join(
            f"{t[(m, r)]['rel_diff']:.1e}" if (m, r) in t and "rel_diff" in t[(m, r)] else "—"
            for r in runtimes) + " |")
    lines += ["", "## Targets (issue #4)", ""] + targets(t, models)
    errors = [r for r in results if "error" in r]
    if errors:
        lines += ["", "## Errors", ""] + [f"- {r['model']} / {r['runtime']}: {r['error']}"
                                          for r in errors]
    return "\n".join(lines) + "\n"


def _speedup(t, m) -> str:
    if (m, "onnx-ref") in t and (m, HEADLINE) in t:
        ratio = t[(m, "onnx-ref")]["median_ms"] / t[(m, HEADLINE)]["median_ms"]
        return (f"{ratio:.0f}" if ratio >= 10 else f"{ratio:.1f}") + "x"
    return "—"


def targets(t: dict, models: list[str]) -> list[str]:
    """One line per target: the measured value and whether it is met."""
    lines = []

    def line(ok, text):
        lines.append(f"- [{'x' if ok else ' '}] {text}")

    ratios = {m: t[(m, HEADLINE)]["median_ms"] / t[(m, BASELINE)]["median_ms"]
              for m in models if (m, HEADLINE) in t and (m, BASELINE) in t}
    if ratios:
        geo = _geomean(ratios.values())
        worst = max(ratios, key=ratios.get)
        line(geo <= 1.5, f"geometric mean {HEADLINE} / {BASELINE} = {geo:.2f} (target <= 1.5)")
        line(ratios[worst] <= 2.5, f"slowest model: {worst} at {ratios[worst]:.2f}x (target <= 2.5)")
    speed = {m: t[(m, "onnx-ref")]["median_ms"] / t[(m, HEADLINE)]["median_ms"]
             for m in models if (m, "onnx-ref") in t and (m, HEADLINE) in t}
    if speed:
        low = min(speed, key=speed.get)
        line(speed[low] >= 30, f"least speed-up over onnx.reference: {low} at {speed[low]:.1f}x "
                               "(target >= 30x)")
    mem = {m: t[(m, HEADLINE)]["peak_mib"] / t[(m, BASELINE)]["peak_mib"]
           for m in models if (m, HEADLINE) in t and (m, BASELINE) in t
           and t[(m, BASELINE)]["peak_mib"] > 0}
    if mem:
        high = max(mem, key=mem.get)
        line(mem[high] <= 1.5, f"peak memory of the session: at most {mem[high]:.2f}x ORT's "
                               f"({high}) (target <= 1.5)")
        total = {m: t[(m, HEADLINE)]["peak_total_mib"] / t[(m, BASELINE)]["peak_total_mib"]
                 for m in mem if t[(m, BASELINE)].get("peak_total_mib")}
        if total:
            worst = max(total, key=total.get)
            line(total[worst] <= 1.5, f"peak memory with the libraries: at most "
                                      f"{total[worst]:.2f}x ORT's ({worst}) (target <= 1.5)")
    if ("resnet18", HEADLINE) in t:
        s = t[("resnet18", HEADLINE)]["start_s"]
        line(s <= 2.0, f"new session on resnet18 (warm cache, level 3, incl. first run): "
                       f"{s:.2f} s (target <= 2 s)")
    return lines


def _quiet(results) -> str:
    flags = [r.get("quiet_before") for r in results]
    if all(f is None for f in flags):
        return "not checked (no --wait-quiet)"
    return f"{sum(1 for f in flags if f)} of {len(flags)}"


def _loads(v) -> str:
    return "—" if not v else ", ".join(f"{x:.2f}" for x in v)


def _blas(results) -> str:
    for r in results:
        # the library onnxkit's products call (oneMKL where installed), else numpy's
        for b in sorted(r.get("blas") or (),
                        key=lambda b: (not b.get("products"), not b.get("numpy"))):
            pool = r.get("numba_threads")
            threads = (f"onnxkit's products and kernels on {pool['threads']} threads "
                       f"({pool['layer']}), BLAS one thread per call" if pool
                       else "Numba kernels single-threaded")
            core = f" core {b['core']}" if b.get("core") else ""
            return f"{b['api']} {b['version']}{core} ({b['library']}); {threads}"
    return "—"


def _conv_choice(results) -> str:
    """How the cpu executor chose its convolution algorithms, and what it chose at the
    highest level measured (``onnxkit/kernels/cpu/_tuning.py``)."""
    cells = [r for r in results if r.get("conv_tuning")]
    if not cells:
        return "—"
    if not any(r["conv_tuning"]["timed"] for r in cells):
        return "the static rule (ONNXKIT_CPU_TUNE=0)"
    top = max(r["runtime"] for r in cells)
    chosen = []
    for r in cells:
        if r["runtime"] == top and r["conv_tuning"]["chosen"]:
            picks = r["conv_tuning"]["chosen"]
            chosen.append(f"{r['model']} {picks.count('winograd4')} Winograd F(4x4) / "
                          f"{picks.count('winograd')} F(2x2) / {picks.count('im2col')} im2col")
    return (f"timed per layer shape on this machine ({NAMES.get(top, top)}: "
            f"{', '.join(chosen) or 'no eligible layer'})")


def _pointwise_choice(results) -> str:
    """How many eligible 1x1 layers ran by column bands (``_banded.pointwise_bands``) at
    the highest level measured, each timed against the whole-image product."""
    cells = [r for r in results if r.get("conv_tuning")]
    if not cells or not any(r["conv_tuning"]["timed"] for r in cells):
        return "—" if not cells else "the whole-image product (ONNXKIT_CPU_TUNE=0)"
    top = max(r["runtime"] for r in cells)
    counts = [f"{r['model']} {picks.count('bands')} of {len(picks)} by bands"
              for r in cells
              if r["runtime"] == top and (picks := r["conv_tuning"].get("pointwise"))]
    return (f"timed per layer shape on this machine ({NAMES.get(top, top)}: "
            f"{', '.join(counts) or 'no eligible layer'})")


def _blas_choice(results) -> str:
    """Which library did the products of each shape at the highest level measured: with
    oneMKL and OpenBLAS both loaded, the faster one here, timed per product shape
    (``onnxkit/kernels/cpu/_blas.py``)."""
    cells = [r for r in results if r.get("blas_tuning")]
    if not cells:
        return "—"
    libraries = cells[0]["blas_tuning"]["libraries"]
    if len(libraries) == 1:
        return f"{BLAS_NAMES.get(libraries[0], libraries[0])} only"
    if not any(r["blas_tuning"]["timed"] for r in cells):  # the static rule's library
        default = cells[0]["blas_tuning"].get("default", libraries[0])
        return f"{BLAS_NAMES.get(default, default)} (ONNXKIT_CPU_TUNE=0)"
    top = max(r["runtime"] for r in cells)
    counts = []
    for r in cells:
        picks = r["blas_tuning"]["chosen"]
        if r["runtime"] == top and picks:
            counts.append(f"{r['model']} " + " / ".join(
                f"{picks.count(lib)} {BLAS_NAMES.get(lib, lib)}" for lib in libraries))
    return (f"timed per product shape on this machine ({NAMES.get(top, top)}: "
            f"{', '.join(counts) or 'no product'})")


def chart(results: list[dict], path: Path) -> None:
    """Bars: each runtime's median time relative to ORT ENABLE_ALL, per model (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = _table(results)
    models = [m for m in dict.fromkeys(r["model"] for r in results) if (m, BASELINE) in t]
    runtimes = list(dict.fromkeys(r["runtime"] for r in results))
    fig, ax = plt.subplots(figsize=(max(8, 1.6 * len(models)), 4.8))
    width = 0.8 / max(len(runtimes), 1)
    for i, r in enumerate(runtimes):
        ys = [t[(m, r)]["median_ms"] / t[(m, BASELINE)]["median_ms"] if (m, r) in t else np.nan
              for m in models]
        xs = np.arange(len(models)) + (i - (len(runtimes) - 1) / 2) * width
        ax.bar(xs, ys, width, label=NAMES.get(r, r))
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axhline(1.5, color="grey", lw=0.8, ls="--")
    ax.set_xticks(np.arange(len(models)), models)
    ax.set_ylabel(f"median time / {NAMES[BASELINE]} (log)")
    ax.set_title("onnxkit vs onnxruntime and onnx.reference (lower is better)")
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def rewrite(json_path: Path, out_dir: Path) -> None:
    """Render a saved ``benchmark.json`` again (tables, chart) into ``out_dir``."""
    data = json.loads(Path(json_path).read_text())
    write(data["results"], data["info"], Path(out_dir))


def write(results: list[dict], info: dict, out_dir: Path) -> None:
    (out_dir / "benchmark.md").write_text(markdown(results, info))
    (out_dir / "benchmark.json").write_text(json.dumps({"info": info, "results": results},
                                                       indent=1, default=str))
    chart(results, out_dir / "benchmark.png")
