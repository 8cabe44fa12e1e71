"""The kinds benchmark builds its models as their libraries export them, and onnxkit's
outputs on them agree with onnxruntime's; its verdict fails a model that disagrees."""

import numpy as np
import pytest

from benchmarks.kinds import report
from benchmarks.kinds.catalog import CATALOG
from benchmarks.kinds.measure import compare

ort = pytest.importorskip("onnxruntime")


def _build_and_compare(name, tmp_path):
    import onnx

    import onnxkit

    path = tmp_path / f"{name}.onnx"
    feeds = CATALOG[name].build(path)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    expected = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(
        None, feeds)
    got = onnxkit.Session(str(path), executor="reference").run(None, feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
    return onnx.load(str(path))


def test_onnxscript_functions_run_like_onnxruntime(tmp_path):
    pytest.importorskip("onnxscript")
    model = _build_and_compare("onnxscript_mlp", tmp_path)
    assert {f.name for f in model.functions} == {"gelu", "layer_norm", "block"}


def test_gru_tagger_exported_by_torchscript_runs_like_onnxruntime(tmp_path):
    pytest.importorskip("torch")
    model = _build_and_compare("gru_tagger", tmp_path)
    assert sum(n.op_type == "GRU" for n in model.graph.node) == 2  # two layers, both ways


def _row(rel, max_abs=1.0, tolerance=1e-4):
    return {"model": "m", "kind": "k", "tolerance": tolerance, "errors": {},
            "check": {"cpu-L3": {"max_abs": max_abs, "rel": rel},
                      "ort-all": {"max_abs": 0.0, "rel": 0.0}},
            "times": {"cpu-L3": {"ms": 6.0, "min_ms": 6.0, "runs": 3},
                      "ort-all": {"ms": 2.0, "min_ms": 2.0, "runs": 3}}}


def test_verdict_fails_an_output_beyond_tolerance_and_passes_one_within():
    assert report.failures(_row(5e-5)) == []
    assert report.failures(_row(2e-4)) != []
    assert report.failures({"model": "m", "kind": "k", "skipped": "missing lightgbm"}) == []


def test_integer_outputs_must_match_exactly():
    labels = np.array([1, 2, 3])
    assert compare([labels], [labels]) == {"max_abs": 0.0, "rel": 0.0}
    assert compare([labels + np.array([0, 0, 1])], [labels])["rel"] == float("inf")
    assert compare([np.array([1.0, 2.5])], [np.array([1.0, 2.0])])["rel"] == pytest.approx(0.25)


def test_per_kind_geometric_means():
    rows = [_row(0.0), {**_row(0.0), "times": {"cpu-L3": {"ms": 8.0, "min_ms": 8.0, "runs": 3},
                                               "ort-all": {"ms": 1.0, "min_ms": 1.0, "runs": 3}}}]
    assert report.summary(rows)["k"]["cpu-L3"] == pytest.approx(np.sqrt(3.0 * 8.0))


def test_a_model_whose_library_is_missing_is_skipped_not_failed():
    from argparse import Namespace

    from benchmarks.kinds.catalog import Entry
    from benchmarks.kinds.measure import measure

    def build(path):
        raise AssertionError("a skipped model is not built")

    entry = Entry("absent", "k", build, ("onnxkit", "no_such_library_for_kinds"))
    row = measure(entry, Namespace(rebuild=False, threads=1, quick=True, cap=1.0))
    assert row["skipped"] == "missing no_such_library_for_kinds"
    assert report.failures(row) == []
