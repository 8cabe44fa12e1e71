"""The scoreboard command on a quick subset: states, totals, not-installed runtimes, escaping."""

import json

import pytest

from onnxkit.cli import main
from onnxkit.conformance import scoreboard, scoreboard_page
from onnxkit.conformance.runtimes import installed

# onnx's expected outputs decide: Relu and Abs pass on a correct runtime
CASES = "^test_(relu|abs)$"


def test_quick_scoreboard_writes_html_json_png_and_lists_missing_runtimes(tmp_path, monkeypatch, capsys):
    real = scoreboard.runtime_version
    monkeypatch.setattr(scoreboard, "runtime_version", lambda n: None if n == "tinygrad" else real(n))
    assert main(["scoreboard", "-r", "reference,tinygrad", "-k", CASES, "--kind", "node",
                 "--out", str(tmp_path)]) == 0
    board = json.loads((tmp_path / "scoreboard.json").read_text())
    assert [c["name"] for c in board["cases"]] == ["test_abs", "test_relu"]
    assert [c["operators"] for c in board["cases"]] == [["Abs-13"], ["Relu-14"]]
    ref = board["runtimes"]["reference"]
    assert ref["installed"] and ref["totals"]["pass"] == 2 and sum(ref["totals"].values()) == 2
    assert board["runtimes"]["tinygrad"] == {"version": None, "installed": False}
    assert (tmp_path / "scoreboard.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (tmp_path / "scoreboard.html").read_text()
    assert "<td>tinygrad</td><td colspan=\"11\">not installed</td>" in page
    assert "not installed" in capsys.readouterr().out


@pytest.mark.skipif("onnxruntime" not in installed(), reason="onnxruntime is not installed")
def test_an_adapted_case_is_one_click_from_its_message(tmp_path):
    assert main(["scoreboard", "-r", "onnxruntime", "-k", "^test_bitshift_left_uint8$",
                 "--kind", "node", "--out", str(tmp_path)]) == 0
    board = json.loads((tmp_path / "scoreboard.json").read_text())
    cell = board["runtimes"]["onnxruntime"]["cells"][0]
    assert cell["state"] == "adapted" and "IR version: 14" in cell["message"]
    page = (tmp_path / "scoreboard.html").read_text()
    anchor = page.split('<a class="c" href="#')[1].split('"')[0]
    section = page.split(f'<h3 id="{anchor}">')[1].split("</ul>")[0]
    assert "test_bitshift_left_uint8" in section and "passes once adapted" in section
    assert "onnx/backend/test/data/node/test_bitshift_left_uint8" in section


def test_a_runtime_sampled_every_nth_case_marks_the_others_not_run(tmp_path, capsys):
    assert main(["scoreboard", "-r", "reference", "-k", "^test_(abs|neg|relu)$", "--kind", "node",
                 "--every-runtime", "reference=2", "--out", str(tmp_path)]) == 0
    board = json.loads((tmp_path / "scoreboard.json").read_text())
    assert [c["name"] for c in board["cases"]] == ["test_abs", "test_neg", "test_relu"]
    ref = board["runtimes"]["reference"]
    assert [c["state"] for c in ref["cells"]] == ["pass", "unrun", "pass"]
    assert ref["every"] == 2 and ref["totals"]["unrun"] == 1
    page = (tmp_path / "scoreboard.html").read_text()
    assert "(1 case in 2)</td>" in page
    # Neg's cell has no case that ran: it says 0/0 in the colour of "not run"
    assert '<td style="background:#d9d9d9;color:#fff;text-align:center">0/0</td>' in page


def test_every_string_on_the_page_is_escaped():
    evil = '<script>alert(1)</script>"\'><img src=x onerror=alert(2)>'
    board = {"date": evil, "onnx": "1.23.2", "machine": evil, "seconds": 1, "timeout": 1,
             "cases": [{"name": evil, "kind": "node", "operators": [evil]}],
             "runtimes": {evil: {"installed": True, "version": evil, "seconds": 1, "restarts": 0,
                                 "totals": dict.fromkeys(scoreboard.STATES, 0) | {"fail": 1},
                                 "cells": [{"state": "fail", "message": evil, "adapted": evil,
                                            "adapted_message": evil}]}}}
    page = scoreboard_page.render_html(board)
    assert "<script>" not in page and "<img" not in page and "onerror=alert(2)>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_merged_boards_mark_cases_a_runtime_did_not_run():
    def board(cases, name, states):
        return {"date": "d", "onnx": "1.23.2", "machine": "m", "seconds": 1, "timeout": 1,
                "cases": [{"name": c, "kind": "node", "operators": ["Relu-14"]} for c in cases],
                "runtimes": {name: {"installed": True, "version": "1", "seconds": 1, "restarts": 0,
                                    "totals": {}, "cells": [{"state": s} for s in states]}}}

    merged = scoreboard_page.merge([board(["a", "b", "c"], "fast", ["pass", "fail", "pass"]),
                                    board(["a"], "slow", ["pass"])])
    assert [c["name"] for c in merged["cases"]] == ["a", "b", "c"]
    assert merged["runtimes"]["fast"]["totals"]["fail"] == 1
    slow = merged["runtimes"]["slow"]
    assert [c["state"] for c in slow["cells"]] == ["pass", "unrun", "unrun"]
    assert slow["totals"]["pass"] == 1 and slow["totals"]["unrun"] == 2


def test_cases_no_runtime_can_pass_are_excluded_outside_the_repository(tmp_path):
    """Run as an installed command from elsewhere, the kit still excludes Bernoulli's random
    expectations (they once showed as onnxkit's wrong answers on the committed board)."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-m", "onnxkit", "conformance", "-b", "reference",
                           "-k", "^test_bernoulli$|^test_relu$", "--jobs", "1", "--out", "rep"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "1 passed, 0 failed, 0 errors, 1 skipped of 2 cases" in proc.stdout
    report = json.loads((tmp_path / "rep" / "conformance-reference.json").read_text())
    states = {r["name"]: r["status"] for r in report["cases"]}
    assert states == {"test_bernoulli": "skip", "test_relu": "pass"}
