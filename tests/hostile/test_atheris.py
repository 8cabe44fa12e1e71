"""A short, bounded run of the atheris (libFuzzer) harness; skipped where atheris is missing."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("atheris")

HARNESS = os.path.join(os.path.dirname(__file__), "atheris_fuzz.py")


@pytest.mark.slow
def test_atheris_harness_finds_nothing_in_a_short_run(tmp_path):
    runs = 20_000 if os.environ.get("ONNXKIT_FUZZ") == "long" else 1_500
    proc = subprocess.run(
        [sys.executable, HARNESS, f"-atheris_runs={runs}", "-timeout=10", "-rss_limit_mb=3000",
         "-max_len=4096", f"-artifact_prefix={tmp_path}/"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
        env=dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"))
    done = [line for line in proc.stderr.splitlines() if line.startswith("Done ")]
    print(done[-1] if done else "atheris printed no summary")
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert not list(tmp_path.glob("crash-*")) and not list(tmp_path.glob("timeout-*"))
