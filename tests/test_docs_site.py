"""The documentation site builds with ``mkdocs build --strict``: no broken link, no page of
docs/ missing from the nav (mkdocs.yml asks mkdocs to warn on both; strict makes it fail).
The course's executed notebooks are pages of it (mkdocs-jupyter, docs/hooks/notebooks.py),
their graph widgets drawn as static SVG."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install mkdocs)")
pytest.importorskip("mkdocs_jupyter", reason="mkdocs-jupyter is not installed (pip install -e '.[test]')")
SVG = "{http://www.w3.org/2000/svg}"


def mkdocs(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_site_builds_strict(tmp_path):
    proc = mkdocs("build", "--strict", "--site-dir", str(tmp_path / "site"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "index.html").exists()
    built = {p.stem for p in (ROOT / "docs").glob("*.md")}
    for page in built - {"index"}:
        assert (tmp_path / "site" / page / "index.html").exists(), f"{page}.md was not built"

    # every notebook is a page, with its saved outputs; each graph widget output is an SVG
    graphs = 0
    for nb_path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        page = tmp_path / "site" / "notebooks" / nb_path.stem / "index.html"
        assert page.exists(), f"{nb_path.name} was not built"
        html = page.read_text(encoding="utf-8")
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        saved = [o["data"]["image/svg+xml"] for c in nb["cells"] for o in c.get("outputs", [])
                 if "onnxkit-graph" in "".join(o.get("data", {}).get("image/svg+xml", ""))]
        shown = [base64.b64decode(b).decode() for b in
                 re.findall(r'<img [^>]*src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)]
        drawings = [s for s in shown if 'class="onnxkit-graph"' in s]
        assert len(drawings) == len(saved), nb_path.name
        for text in drawings:
            root = ET.fromstring(text)
            nodes = [g for g in root.iter(f"{SVG}g") if "onnxkit-node" in g.get("class", "").split()]
            assert len(nodes) == int(root.get("data-nodes")) > 0
        graphs += len(drawings)
    assert graphs >= 1, "no notebook shows a graph"
    # a notebook's link into docs/ (08's to the scoreboard) leads to that page of the site
    page = (tmp_path / "site" / "notebooks" / "08-conformance" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'href="\.\./\.\./scoreboard/"[^>]*>the scoreboard</a>', page)
    assert "../docs/" not in page


def test_strict_build_catches_an_unlisted_page_and_a_broken_link(tmp_path):
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    (tmp_path / "docs" / "stray.md").write_text("# Stray\n")
    with open(tmp_path / "docs" / "index.md", "a") as f:
        f.write("\n[broken](no-such-page.md)\n")
    # one build: strict mode reports every warning, then aborts
    proc = mkdocs("build", "--strict", "--site-dir", str(tmp_path / "site"), cwd=tmp_path)
    assert proc.returncode != 0
    assert "stray.md" in proc.stderr and "no-such-page.md" in proc.stderr, proc.stderr
