"""The documentation site builds with ``mkdocs build --strict``: no broken link, no page of
docs/ missing from the nav (mkdocs.yml asks mkdocs to warn on both; strict makes it fail)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install mkdocs)")


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


def test_strict_build_catches_an_unlisted_page_and_a_broken_link(tmp_path):
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    (tmp_path / "docs" / "stray.md").write_text("# Stray\n")
    proc = mkdocs("build", "--strict", "--site-dir", str(tmp_path / "site"), cwd=tmp_path)
    assert proc.returncode != 0 and "stray.md" in proc.stderr
    (tmp_path / "docs" / "stray.md").unlink()
    with open(tmp_path / "docs" / "index.md", "a") as f:
        f.write("\n[broken](no-such-page.md)\n")
    proc = mkdocs("build", "--strict", "--site-dir", str(tmp_path / "site"), cwd=tmp_path)
    assert proc.returncode != 0 and "no-such-page.md" in proc.stderr
