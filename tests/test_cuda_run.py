"""benchmarks/cuda_run.py and its parts (cuda_spec, cuda_report) without a GPU: verdicts and
report text on made-up numbers, the spec comparison, the watched cuda worker (a scripted
stand-in), and the ResNet-50 export."""

import json

import pytest

from benchmarks import cuda_report, cuda_run, cuda_spec
from benchmarks.models import ALL_MODELS, ON_DEMAND_MODELS

TARGET_ROWS = {
    "onnxkit-cuda-L0": {"ms": 40.0},
    "onnxkit-cuda-L2": {"ms": 6.0},
    "torch-eager": {"ms": 4.0},
    "torch-eager-resident": {"ms": 3.0},
}


def _results(**overrides):
    rows = {label: dict(row) for label, row in TARGET_ROWS.items()}
    for label, ms in overrides.items():
        rows[label.replace("_", "-")] = {"ms": ms}
    return {"resnet50_b32": rows}


# --- the speed verdict ---------------------------------------------------------------------

def test_target_verdict_met_at_exactly_the_target():
    assert cuda_report.target_verdict_line(_results()) == (
        "ResNet-50 batch 32: onnxkit-cuda-L2 6.00 ms / torch eager 4.00 ms = 1.50 (target <= 1.5): met")


def test_each_timed_target_model_gets_its_verdict():
    results = _results() | {"mlp": {"onnxkit-cuda-L2": {"ms": 1.3}, "torch-eager": {"ms": 0.4}}}
    assert cuda_report.target_verdict_lines(results) == [
        "ResNet-50 batch 32: onnxkit-cuda-L2 6.00 ms / torch eager 4.00 ms = 1.50 (target <= 1.5): met",
        "the MLP: onnxkit-cuda-L2 1.30 ms / torch eager 0.40 ms = 3.25 (target <= 3): NOT met"]


def test_target_verdict_uses_the_faster_level_and_says_not_met():
    line = cuda_report.target_verdict_line(_results(onnxkit_cuda_L0=7.0, onnxkit_cuda_L2=20.5))
    assert line == ("ResNet-50 batch 32: onnxkit-cuda-L0 7.00 ms / torch eager 4.00 ms = 1.75 "
                    "(target <= 1.5): NOT met")


def test_target_verdict_without_torch_or_model():
    rows = _results()["resnet50_b32"]
    del rows["torch-eager"]
    assert cuda_report.target_verdict_line({"resnet50_b32": rows}) == (
        "ResNet-50 batch 32: not measured (needs resnet50_b32 timed on onnxkit and torch)")
    assert "not measured" in cuda_report.target_verdict_line({"mlp": TARGET_ROWS})


def test_ratio_rows_skip_failed_onnxkit_rows():
    results = _results()
    results["resnet50_b32"]["onnxkit-cuda-L2"] = {"ms": None, "error": "KernelError: boom"}
    (row,) = cuda_report.ratio_rows(results)
    assert (row["onnxkit"], row["ratio"], row["ratio_resident"]) == ("onnxkit-cuda-L0", 10.0, 40.0 / 3.0)


def test_latency_markdown_has_the_ratio_table():
    text = "\n".join(cuda_report._latency_markdown(_results()))
    assert "| resnet50_b32 | onnxkit-cuda-L2 | 6.000 | 4.000 | 1.50 | 3.000 | 2.00 |" in text
    assert "| resnet50_b32 | torch-eager-resident | 3.000 |  |  |" in text


# --- the spec verdict ----------------------------------------------------------------------

RECORDS = {
    "node:a": {"reference": "pass", "cuda": "pass", "cuda_seconds": 0.1},
    "node:b": {"reference": "pass", "cuda": "fail", "cuda_seconds": 0.2, "message": "output 0: wrong\nmore"},
    "node:c": {"reference": "pass", "cuda": "timeout", "cuda_seconds": 90.0,
               "message": "no result after 90 s"},
    "node:d": {"reference": "pass", "cuda": "not run", "cuda_seconds": 0.0, "message": "deadline"},
    "node:e": {"reference": "fail", "cuda": "pass", "cuda_seconds": 0.1},
    "node:f": {"reference": "error", "cuda": "error", "cuda_seconds": 0.1, "message": "x"},
}


def test_spec_verdict_sets():
    v = cuda_spec.spec_verdict(RECORDS)
    assert v["regressions"] == ["node:b", "node:c"]
    assert v["not_run"] == ["node:d"]
    assert v["cuda_only"] == ["node:e"]
    assert (v["reference_passes"], v["cuda_passes_of_those"], v["met"]) == (4, 1, False)


def test_spec_verdict_met_when_cuda_passes_all_the_reference_passes():
    records = {k: r for k, r in RECORDS.items() if k in ("node:a", "node:e", "node:f")}
    spec = {"which": "all", "shard": None, "cases": records}
    assert cuda_spec.spec_verdict_line(spec) == (
        "Spec suite (all): cuda passes 1 of the 1 cases the reference passes; 0 fail on cuda: met")


def test_spec_verdict_line_incomplete():
    spec = {"which": "all", "shard": "2/3", "cases": RECORDS}
    assert cuda_spec.spec_verdict_line(spec) == (
        "Spec suite (all, shard 2/3): cuda passes 1 of the 4 cases the reference passes; "
        "2 fail on cuda, 1 not run (incomplete): NOT met")


def test_merged_shards_give_one_verdict():
    first = {"which": "all", "shard": "1/2", "seconds": 10.0, "skipped": {"node:x": "random"},
             "cases": {k: RECORDS[k] for k in ("node:a", "node:b")}}
    second = {"which": "all", "shard": "2/2", "seconds": 5.0, "skipped": {},
              "cases": {k: RECORDS[k] for k in ("node:e", "node:f")}}
    env = {"device": "NVIDIA H100 80GB HBM3", "date": "2026-11-24T10:00:00"}
    merged = cuda_report.merge_reports([{"environment": env, "spec": first, "results": _results()},
                                        {"environment": env, "spec": second, "results": {}}])
    assert merged["spec"]["seconds"] == 15.0 and len(merged["spec"]["cases"]) == 4
    assert cuda_report.verdict_lines(merged) == [
        "ResNet-50 batch 32: onnxkit-cuda-L2 6.00 ms / torch eager 4.00 ms = 1.50 (target <= 1.5): met",
        "Spec suite (all): cuda passes 1 of the 2 cases the reference passes; 1 fail on cuda: NOT met"]
    text = cuda_report.markdown(merged)
    assert "- `node:b` fail: output 0: wrong\n" in text
    assert "| cuda | 2 | 1 | 1 | 0 | 0 | 0 |" in text


def test_write_report_names_and_copies_into_out(tmp_path, monkeypatch):
    monkeypatch.setattr(cuda_report, "RESULTS_DIR", tmp_path / "results")
    monkeypatch.setenv("OUT", str(tmp_path / "out"))
    env = {"device": "NVIDIA H100 80GB HBM3", "date": "2026-11-24T10:00:00"}
    stem = cuda_report.report_stem(env, "bench")
    assert stem == "cuda-nvidia-h100-80gb-hbm3-2026-11-24-bench"
    cuda_report.write_report({"environment": env, "spec": None, "results": _results()}, stem)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [f"{stem}.json", f"{stem}.md"]
    assert json.loads((tmp_path / "out" / f"{stem}.json").read_text())["results"] == _results()


def test_default_tags_and_models():
    args = cuda_run.parse_args(["--spec-only", "--shard", "2/3"])
    assert cuda_run.default_tag(args) == "spec-2of3"
    assert cuda_run.default_tag(cuda_run.parse_args(["--skip-spec"])) == "bench"
    assert cuda_run.parse_args([]).models[0] == "resnet50_b32"
    assert cuda_run.parse_args([]).profile == ["resnet50_b32"]
    assert cuda_run.parse_args(["--models", "mlp", "resnet18", "--profile"]).profile == ["mlp", "resnet18"]
    assert cuda_run.parse_args(["--models", "mlp", "resnet18", "--profile", "mlp"]).profile == ["mlp"]
    assert (cuda_run.parse_args([]).jobs, cuda_run.parse_args(["--jobs", "12"]).jobs) == (1, 12)
    with pytest.raises(SystemExit):
        cuda_run.parse_args(["--shard", "3/2"])


# --- the watched worker, scripted ----------------------------------------------------------

class _ScriptedWorker:
    """Stands in for ``_Worker``: each instance replays the next script of events."""

    EOF, TIMEOUT = cuda_spec._Worker.EOF, cuda_spec._Worker.TIMEOUT
    scripts: list = []
    started: list = []

    def __init__(self, keys):
        self.started.append(list(keys))
        self.events = self.scripts.pop(0)

    def next_event(self, timeout):
        return self.events.pop(0) if self.events else self.EOF

    def stop(self, grace):
        return -9


def _done(key, status="pass", message=""):
    return {"event": "done", "key": key, "status": status, "message": message, "seconds": 0.1}


def _start(key):
    return {"event": "start", "key": key}


def test_worker_restarts_after_timeout_crash_and_sticky_error(monkeypatch):
    ready = {"event": "ready"}
    _ScriptedWorker.started = []
    _ScriptedWorker.scripts = [
        [ready, _start("a"), _done("a"), _start("b"), _ScriptedWorker.TIMEOUT],   # b hangs
        [ready, _start("c"), _ScriptedWorker.EOF],                                 # c crashes
        [ready, _start("d"), _done("d", "error", "CUDA_ERROR_ILLEGAL_ADDRESS")],   # sticky
        [ready, _start("e"), _done("e")],
    ]
    monkeypatch.setattr(cuda_spec, "_Worker", _ScriptedWorker)
    results = cuda_spec.run_cuda_cases(list("abcde"), case_timeout=90, deadline=float("inf"))
    assert {k: r["status"] for k, r in results.items()} == {
        "a": "pass", "b": "timeout", "c": "crash", "d": "error", "e": "pass"}
    assert results["c"]["message"] == "the process died (exit code -9)"
    assert _ScriptedWorker.started == [list("abcde"), list("cde"), list("de"), ["e"]]


def test_worker_that_never_starts_marks_everything_not_run(monkeypatch):
    _ScriptedWorker.started = []
    _ScriptedWorker.scripts = [[_ScriptedWorker.EOF]]
    monkeypatch.setattr(cuda_spec, "_Worker", _ScriptedWorker)
    results = cuda_spec.run_cuda_cases(["a", "b"], case_timeout=90, deadline=float("inf"))
    assert {r["status"] for r in results.values()} == {"not run"}
    assert len(_ScriptedWorker.started) == 1


def test_past_the_deadline_nothing_starts(monkeypatch):
    monkeypatch.setattr(cuda_spec, "_Worker", _ScriptedWorker)
    results = cuda_spec.run_cuda_cases(["a"], case_timeout=90, deadline=0.0)
    assert results == {"a": {"status": "not run", "message": "the deadline came first", "seconds": 0.0}}



class _PassingWorker:
    """Stands in for ``_Worker`` in parallel runs: passes each of its keys, records them."""

    EOF, TIMEOUT = cuda_spec._Worker.EOF, cuda_spec._Worker.TIMEOUT
    started: list = []

    def __init__(self, keys):
        self.started.append(list(keys))
        self.events = [{"event": "ready"}] + [e for k in keys for e in (_start(k), _done(k))]

    def next_event(self, timeout):
        return self.events.pop(0) if self.events else self.EOF

    def stop(self, grace):
        return 0


def test_chunks_are_consecutive_four_per_job_and_cover_the_keys():
    keys = [f"node:{i:03d}" for i in range(50)]
    parts = cuda_spec.chunks(keys, 3)
    assert len(parts) == 12 and [k for part in parts for k in part] == keys
    assert {len(part) for part in parts} == {4, 5}
    assert cuda_spec.chunks(keys, 1) == [keys]
    assert cuda_spec.chunks(keys[:5], 3) == [[k] for k in keys[:5]]


def test_parallel_jobs_run_every_case_once(monkeypatch):
    _PassingWorker.started = []
    monkeypatch.setattr(cuda_spec, "_Worker", _PassingWorker)
    keys = [f"node:{i:03d}" for i in range(30)]
    results = cuda_spec.run_cuda_cases(keys, case_timeout=90, deadline=float("inf"), jobs=4)
    assert sorted(results) == keys and {r["status"] for r in results.values()} == {"pass"}
    assert sorted(k for part in _PassingWorker.started for k in part) == keys
    assert len(_PassingWorker.started) == 16

# --- which spec cases ------------------------------------------------------------------------

def test_shards_are_consecutive_slices_that_cover_the_subset():
    whole, _ = cuda_spec.select_spec_cases("subset")
    parts = [cuda_spec.select_spec_cases("subset", shard=(k, 3))[0] for k in (1, 2, 3)]
    assert [cuda_spec.case_key(c) for part in parts for c in part] == [cuda_spec.case_key(c) for c in whole]


def test_rest_of_an_incomplete_run_selects_its_not_run_cases():
    report = {"spec": {"cases": RECORDS}}
    assert cuda_spec.not_run_keys(report) == {"node:d"}
    assert cuda_spec.not_run_keys({"spec": None}) == set()
    cases, _ = cuda_spec.select_spec_cases("all", only={"node:test_relu", "node:test_abs", "node:nope"})
    assert [cuda_spec.case_key(c) for c in cases] == ["node:test_abs", "node:test_relu"]
    args = cuda_run.parse_args(["--spec-only", "--rest-of", "r.json"])
    assert cuda_run.default_tag(args) == "spec-rest"


def test_merge_keeps_results_over_not_run_whatever_the_order():
    first = {"which": "all", "seconds": 10.0, "skipped": {}, "cases": RECORDS}
    rest = {"which": "all", "seconds": 2.0, "skipped": {},
            "cases": {"node:d": {"reference": "pass", "cuda": "pass", "cuda_seconds": 0.1}}}
    for order in ([first, rest], [rest, first]):
        merged = cuda_spec.merge_specs(order)
        assert merged["cases"]["node:d"]["cuda"] == "pass"
        assert merged["cases"]["node:b"]["cuda"] == "fail"
        assert cuda_spec.spec_verdict(merged["cases"])["not_run"] == []


def test_excluded_cases_are_skipped_with_their_reason():
    cases, skipped = cuda_spec.select_spec_cases("all", pattern="bernoulli")
    assert cases == [] and "node:test_bernoulli" in skipped


# --- the GPU benchmark's model ----------------------------------------------------------------

def test_resnet50_b32_is_on_demand_only():
    assert "resnet50_b32" in ON_DEMAND_MODELS and "resnet50_b32" not in ALL_MODELS


@pytest.mark.slow
@pytest.mark.torch
def test_resnet50_b32_export(tmp_path):
    pytest.importorskip("torch")
    import onnx

    from benchmarks.models import build_torch_model

    path = tmp_path / "resnet50_b32.onnx"
    build_torch_model("resnet50_b32", path)
    onnx.checker.check_model(str(path))
    model = onnx.load(str(path), load_external_data=False)
    (x,) = model.graph.input
    assert [d.dim_value for d in x.type.tensor_type.shape.dim] == [32, 3, 224, 224]
    ops = [n.op_type for n in model.graph.node]
    # 53 convolutions (BatchNorm folded in by the exporter), 16 residual additions
    assert (ops.count("Conv"), ops.count("Add"), ops.count("GlobalAveragePool")) == (53, 16, 1)
