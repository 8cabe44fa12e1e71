"""The report of benchmarks/cuda_run.py: the speed verdict (onnxkit over torch eager), the
verdict lines, the markdown, merging several runs' reports, and writing the ``.md`` and
``.json`` into ``RESULTS_DIR`` (and ``$OUT`` when set).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from benchmarks.cuda_spec import merge_specs, spec_verdict, spec_verdict_line
from benchmarks.cuda_timing import best_onnxkit

RESULTS_DIR = Path(__file__).resolve().parent / "results"
#: the speed targets (issue #32): model -> (what to call it, most onnxkit / torch eager)
TARGETS = {"resnet50_b32": ("ResNet-50 batch 32", 1.5), "resnet18": ("ResNet-18 batch 1", 2.0),
           "bert_mini": ("BERT-mini", 2.0), "mlp": ("the MLP", 3.0)}
TARGET_MODEL = "resnet50_b32"
TARGET_LABEL, TARGET_RATIO = TARGETS[TARGET_MODEL]


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


def target_verdict_line(results: dict, model: str = TARGET_MODEL) -> str:
    """One speed target, e.g. "ResNet-50 batch 32: onnxkit-cuda-L2 6.00 ms / torch eager
    4.00 ms = 1.50 (target <= 1.5): met"."""
    label, target = TARGETS[model]
    row = next((r for r in ratio_rows(results) if r["model"] == model), None)
    if row is None:
        return f"{label}: not measured (needs {model} timed on onnxkit and torch)"
    met = row["ratio"] <= target
    return (f"{label}: {row['onnxkit']} {row['onnxkit_ms']:.2f} ms / torch eager "
            f"{row['torch_ms']:.2f} ms = {row['ratio']:.2f} (target <= {target:g}): "
            + ("met" if met else "NOT met"))


def target_verdict_lines(results: dict) -> list[str]:
    """The verdict of every target whose model was timed (ResNet-50's always)."""
    return [target_verdict_line(results, model) for model in TARGETS
            if model == TARGET_MODEL or model in results]


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
             "| model | runtime | ms | µs per node | runs | first run ms | max abs diff vs ORT CPU | "
             "copies h2d | copies d2h | leaves the GPU at / note |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, rows in results.items():
        for label, row in rows.items():
            where = "; ".join(row.get("leaves_gpu_at", [])) or row.get("note", "") or row.get("error", "")
            if row.get("graph_gpu_ms") is not None:
                where += (f"; replay: {row['graph_gpu_ms']} ms on the GPU, host "
                          f"{row['graph_host_us_per_node']} µs per node (eager host "
                          f"{row['eager_host_us_per_node']} µs per node)")
            lines.append(f"| {name} | {label} | {_fmt(row.get('ms'))} | {row.get('us_per_node', '')} | "
                         f"{row.get('runs', '')} | "
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
    lines = target_verdict_lines(report["results"]) if report.get("results") else []
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
