"""The node cases are built once per onnx/numpy version and read back by later processes:
what a later process reads is what onnx's own case definitions give."""

from __future__ import annotations

import os
import subprocess
import sys

from pathlib import Path

import numpy as np

from onnxkit.conformance import case_file
from onnxkit.conformance.spec_cells import load_case

# in a fresh process (the in-process list is cached): how many cases, and one case's data
PROBE = """
import sys, numpy as np
from onnxkit.conformance.cases import node_cases
from onnxkit.conformance.case_file import path
import os
cases = node_cases()
case = next(c for c in cases if c.name == sys.argv[1])
(ins, outs), = case.data_sets
np.savez(sys.argv[2], *ins, *outs)
print(len(cases), os.path.exists(path()), case.rtol, case.atol,
      case.model.graph.node[0].op_type)
"""


def _probe(tmp_path, name: str, tag: str) -> tuple[list[str], list[np.ndarray]]:
    env = dict(os.environ)
    out = tmp_path / f"{tag}.npz"
    proc = subprocess.run([sys.executable, "-c", PROBE, name, str(out)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with np.load(out) as data:
        arrays = [data[f"arr_{i}"] for i in range(len(data.files))]
    return proc.stdout.split(), arrays


def test_a_damaged_file_is_built_again_then_read_by_later_processes(tmp_path, monkeypatch):
    name = "test_maxpool_3d_default"  # among the slowest to build: a 3-D pooling reference
    want = load_case(name, "maxpool")  # from onnx's definition of that one case
    monkeypatch.setenv("ONNXKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = Path(case_file.path())
    path.parent.mkdir(parents=True)
    path.write_bytes(case_file.MAGIC + b"\x05\x00")  # cut short, as a full disk leaves it

    built, arrays_1 = _probe(tmp_path, name, "built")
    size, inode = path.stat().st_size, path.stat().st_ino
    read, arrays_2 = _probe(tmp_path, name, "read")
    assert size > 1000 and path.stat().st_ino == inode  # written whole once, then only read
    assert built == read
    assert built[1] == "True" and (float(built[2]), float(built[3]), built[4]) == (
        want.rtol, want.atol, "MaxPool")
    (want_in,), (want_out,) = want.data_sets[0]
    for arrays in (arrays_1, arrays_2):
        np.testing.assert_array_equal(arrays[0], want_in)
        np.testing.assert_array_equal(arrays[1], want_out)
