"""kinds.md and kinds.json from the rows of ``benchmarks.kinds.measure``: per-model ratios
of the best run's time to onnxruntime ENABLE_ALL's, per-kind geometric means, node counts,
the output checks, and where cpu levels 1 and 2 were timed, level 2 against level 1."""

from __future__ import annotations

import math

# level 2 (the fusions) may take this much longer than level 1 before the run fails: the
# best of a few runs on a shared machine still moves by a few percent
LEVEL_MARGIN = 1.10
RATIOS = (("cpu-L3", "cpu L3 / ORT"), ("onnxkit-ref", "onnxkit ref / ORT"),
          ("onnx-ref", "onnx.reference / ORT"))


def ratio(row: dict, runtime: str) -> float | None:
    times = row.get("times", {})
    if runtime not in times or "ort-all" not in times:
        return None
    return times[runtime]["min_ms"] / times["ort-all"]["min_ms"]


def levels(row: dict) -> tuple[float, float] | None:
    """Best ms of cpu level 1 and level 2, when both were timed."""
    times = row.get("times", {})
    if "cpu-L1" not in times or "cpu-L2" not in times:
        return None
    return times["cpu-L1"]["min_ms"], times["cpu-L2"]["min_ms"]


def failures(row: dict) -> list[str]:
    """What is wrong with a measured row: an error, an onnxkit output beyond tolerance, or
    cpu level 2 slower than level 1 (beyond ``LEVEL_MARGIN``)."""
    if "skipped" in row:
        return []
    if "error" in row:
        return [row["error"]]
    out = [f"{rt}: {err}" for rt, err in row["errors"].items() if rt != "onnx-ref"]
    for runtime, check in row["check"].items():
        if runtime != "ort-all" and not check["rel"] <= row["tolerance"]:
            out.append(f"{runtime} differs from onnxruntime: max abs {check['max_abs']:.2e}, "
                       f"rel {check['rel']:.2e} > {row['tolerance']:g}")
    lv = levels(row)
    if lv is not None and lv[1] > lv[0] * LEVEL_MARGIN:
        out.append(f"cpu level 2 slower than level 1: {lv[1]:.2f} ms against {lv[0]:.2f} ms "
                   f"(best runs; allowed {LEVEL_MARGIN:g}x)")
    return out


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def summary(rows: list[dict]) -> dict:
    """Geometric means of each ratio, per kind and over all models."""
    kinds = list(dict.fromkeys(r["kind"] for r in rows)) + ["all"]
    out = {}
    for kind in kinds:
        chosen = [r for r in rows if kind in ("all", r["kind"])]
        out[kind] = {rt: geomean([v for r in chosen if (v := ratio(r, rt)) is not None])
                     for rt, _ in RATIOS}
        out[kind]["models"] = sum(ratio(r, "cpu-L3") is not None for r in chosen)
    return out


def fmt(value, spec: str = ".2f") -> str:
    return "-" if value is None else format(value, spec)


def _ms(row: dict, runtime: str) -> str:
    t = row.get("times", {}).get(runtime)
    if t is None:
        return "error" if runtime in row.get("errors", {}) else "-"
    return f"{t['min_ms']:.2f}" + ("¹" if t["runs"] == 1 else "")


def markdown(rows: list[dict], header: str) -> str:
    lines = [header, "", "## Per kind (geometric means of the ratios to onnxruntime ENABLE_ALL)",
             "", "| kind | models | " + " | ".join(t for _, t in RATIOS) + " |",
             "|---|---:|" + "---:|" * len(RATIOS)]
    for kind, means in summary(rows).items():
        lines.append(f"| {'**all**' if kind == 'all' else kind} | {means['models']} | "
                     + " | ".join(fmt(means[rt]) for rt, _ in RATIOS) + " |")
    lines += ["", "## Per model", "",
              "| model | kind | ORT ms | cpu L3 ms | onnxkit ref ms | onnx.ref ms | cpu L3 / ORT "
              "| ref / ORT | onnx.ref / ORT | nodes exported | onnxkit L2 | ORT extended "
              "| L2 <= ext | cpu L3 max abs diff (rel) |",
              "|---|---|" + "---:|" * 10 + ":-:|---:|"]
    for r in rows:
        if "skipped" in r or "error" in r:
            lines.append(f"| {r['model']} | {r['kind']} | {'skipped: ' + r['skipped'] if 'skipped' in r else 'ERROR: ' + r['error']} |")
            continue
        n, check = r["nodes"], r["check"].get("cpu-L3")
        diff = "-" if check is None else f"{check['max_abs']:.1e} ({check['rel']:.1e})"
        lines.append(
            f"| {r['model']} | {r['kind']} | {_ms(r, 'ort-all')} | {_ms(r, 'cpu-L3')} | "
            f"{_ms(r, 'onnxkit-ref')} | {_ms(r, 'onnx-ref')} | "
            + " | ".join(fmt(ratio(r, rt)) for rt, _ in RATIOS)
            + f" | {n['exported']} | {n['onnxkit-L2']} | {n['ort-extended']} | "
            f"{'yes' if n['onnxkit-L2'] <= n['ort-extended'] else '**no**'} | {diff} |")
    timed = [(r["model"], lv) for r in rows if (lv := levels(r)) is not None]
    if timed:
        lines += ["", "## cpu level 2 against level 1", "",
                  f"Level 2 (the fusions) must not be slower than level 1 "
                  f"(beyond {LEVEL_MARGIN:g}x).",
                  "", "| model | cpu L1 ms | cpu L2 ms | L2 / L1 | |", "|---|---:|---:|---:|---|"]
        lines += [f"| {m} | {a:.2f} | {b:.2f} | {b / a:.2f} | "
                  f"{'**L2 slower**' if b > a * LEVEL_MARGIN else 'ok'} |" for m, (a, b) in timed]
    errors = [(r["model"], rt, e) for r in rows for rt, e in r.get("errors", {}).items()]
    if errors:
        lines += ["", "## Runtime errors", ""] + [f"- {m}, {rt}: {e}" for m, rt, e in errors]
    bad = [(r["model"], f) for r in rows for f in failures(r)]
    lines += ["", "## Check against onnxruntime", ""]
    lines += [f"- **FAIL** {m}: {f}" for m, f in bad] or [
        "Every onnxkit output is within its kind's tolerance of onnxruntime's."]
    lines += ["", "¹ one run only: the first run took longer than the cap."]
    return "\n".join(lines) + "\n"
