"""The course's notebooks keep the shape docs/course.md promises and run under any runner.

Every notebook has a header (what you will learn, what you need, the time), a *Try it* whose
next cell checks the answer, and a takeaway. No saved output is an error (papermill fails a
notebook that holds one, whatever its tags), and a cell whose output nbval must not compare
says so both ways: the ``nbval-ignore-output`` tag and nbval's ``# NBVAL_IGNORE_OUTPUT``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def problems(nb: dict) -> list[str]:
    """What the notebook lacks, one line each (empty when it has everything)."""
    cells = nb["cells"]
    text = ["".join(c["source"]) for c in cells]
    found = []
    header = text[0] if cells and cells[0]["cell_type"] == "markdown" else ""
    for part in ("**You will learn**", "**You need**", "**Time:**"):
        if part not in header:
            found.append(f"the first cell has no {part}")
    tries = [i for i, c in enumerate(cells) if c["cell_type"] == "markdown" and "Try it" in text[i]]
    checked = [i for i in tries
               if any(c["cell_type"] == "code" and "def check_" in t and "print(check_" in t
                      for c, t in zip(cells[i + 1:i + 4], text[i + 1:i + 4]))]
    if not checked:
        found.append("no Try it followed by a check cell (def check_..., print(check_...))")
    if not any(c["cell_type"] == "markdown" and "take away" in t.lower() for c, t in zip(cells, text)):
        found.append("no takeaway ('What to take away')")
    for i, c in enumerate(cells):
        if c["cell_type"] != "code":
            continue
        if any(o.get("output_type") == "error" for o in c.get("outputs", [])):
            found.append(f"cell {i} holds an error output")
        if "raises-exception" in c.get("metadata", {}).get("tags", []):
            found.append(f"cell {i} is tagged raises-exception: papermill fails the notebook "
                         "on its error all the same")
        tagged = "nbval-ignore-output" in c.get("metadata", {}).get("tags", [])
        marked = text[i].lstrip().startswith("# NBVAL_IGNORE_OUTPUT")
        if tagged != marked:
            found.append(f"cell {i}: the nbval-ignore-output tag and the NBVAL_IGNORE_OUTPUT comment disagree")
    return found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_header_try_it_takeaway_and_no_error(path):
    assert problems(json.loads(path.read_text(encoding="utf-8"))) == []


def test_a_notebook_missing_its_parts_is_caught():
    bare = {"cells": [
        {"cell_type": "markdown", "source": ["# A title only"], "metadata": {}},
        {"cell_type": "code", "source": ["1 / 0"], "metadata": {},
         "outputs": [{"output_type": "error", "ename": "ZeroDivisionError"}]},
        {"cell_type": "code", "source": ["# NBVAL_IGNORE_OUTPUT\nprint(1)"], "metadata": {}, "outputs": []},
        {"cell_type": "code", "source": ["1 / 0"], "metadata": {"tags": ["raises-exception"]},
         "outputs": []},
    ]}
    found = problems(bare)
    assert len(found) == 8, found
    assert "cell 1 holds an error output" in found
    assert any(f.startswith("cell 3 is tagged raises-exception") for f in found)


def test_docs_course_lists_every_notebook():
    course = (Path(__file__).resolve().parents[1] / "docs" / "course.md").read_text(encoding="utf-8")
    assert NOTEBOOKS and [p.name for p in NOTEBOOKS if f"`{p.name}`" not in course] == []


# papermill runs every notebook in minutes (make test-papermill); here the quickest two
PAPERMILL = ["02-protobuf.ipynb", "11-quantization.ipynb"]


def _check_outputs(nb: dict) -> list[str]:
    """The printed text of each cell that prints a Try it's check (``print(check_...)``)."""
    return ["".join("".join(o.get("text", "")) for o in c.get("outputs", []) if o.get("name") == "stdout")
            for c in nb["cells"] if c["cell_type"] == "code" and "print(check_" in "".join(c["source"])]


@pytest.mark.slow
@pytest.mark.parametrize("name", PAPERMILL)
def test_notebook_runs_under_papermill(name, tmp_path):
    papermill = pytest.importorskip("papermill")
    source = NOTEBOOKS[0].parent / name
    out = tmp_path / name
    papermill.execute_notebook(str(source), str(out), cwd=str(source.parent), progress_bar=False,
                               kernel_name="python3")  # raises on any error output
    ran = json.loads(out.read_text(encoding="utf-8"))
    code = [c for c in ran["cells"] if c["cell_type"] == "code"]
    assert code and all(c["metadata"]["papermill"]["status"] == "completed" for c in code)
    saved = _check_outputs(json.loads(source.read_text(encoding="utf-8")))
    assert saved and _check_outputs(ran) == saved  # the checks say what the saved notebook says
