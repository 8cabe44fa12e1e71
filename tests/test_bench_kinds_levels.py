"""The kinds benchmark fails a model whose cpu level 2 is slower than its level 1, and
reports both times; rows without level timings are not judged on them."""

from benchmarks.kinds import report


def _row(l1_ms, l2_ms):
    t = lambda ms: {"ms": ms, "min_ms": ms, "runs": 5}  # noqa: E731
    return {"model": "m", "kind": "fp16", "tolerance": 1e-2, "errors": {},
            "check": {rt: {"max_abs": 0.0, "rel": 0.0} for rt in ("cpu-L3", "cpu-L1", "cpu-L2")},
            "nodes": {"exported": 41, "onnxkit-L2": 18, "ort-extended": 56},
            "times": {"cpu-L3": t(1.6), "ort-all": t(0.2), "cpu-L1": t(l1_ms),
                      "cpu-L2": t(l2_ms)}}


def test_level_2_slower_than_level_1_fails_the_model():
    slow = _row(l1_ms=4.9, l2_ms=14.1)  # the fp16 attention net before the fix
    assert any("level 2 slower than level 1" in f for f in report.failures(slow))
    assert "**L2 slower**" in report.markdown([slow], "# t")


def test_level_2_as_fast_or_within_the_margin_passes():
    assert report.failures(_row(l1_ms=3.2, l2_ms=1.5)) == []
    assert report.failures(_row(l1_ms=2.0, l2_ms=2.0 * report.LEVEL_MARGIN * 0.99)) == []
    text = report.markdown([_row(3.2, 1.5)], "# t")
    assert "| m | 3.20 | 1.50 | 0.47 | ok |" in text


def test_rows_without_level_times_are_not_judged_on_them():
    row = _row(1.0, 1.0)
    del row["times"]["cpu-L1"], row["times"]["cpu-L2"]
    assert report.levels(row) is None and report.failures(row) == []
    assert "level 2 against level 1" not in report.markdown([row], "# t")
