"""The onnxkit command under hostile arguments, files and models.

Every bad argument must end in one line on stderr (``onnxkit CMD: error: ...``) and a
non-zero exit, never a traceback, a hang or lost data. Most cases call ``main`` in this
process; the ones that could hang (a FIFO, a device) or that check the real exit status
run ``python -m onnxkit`` as a subprocess under a timeout.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit.cli import main
from tests.hostile.fifos import unblocked

DEMO = """
<ir_version: 8, opset_import: ["" : 18], producer_name: "hand">
demo (float[N, 3] x) => (float[N, 3] y, float[N, 3] z) {
  y = Relu(x)
  z = Add(y, x)
}
"""
# raw bytes a terminal must never receive from a model string
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u200b-\u200f]")


@pytest.fixture
def demo(tmp_path):
    path = tmp_path / "demo.onnx"
    onnx.save(onnxkit.load(DEMO), str(path))
    return str(path)


def cli(capsys, *args):
    status = main([str(a) for a in args])
    out = capsys.readouterr()
    return status, out.out, out.err


def assert_one_line_error(status, err, command, fragment, expected_status=2):
    assert status == expected_status, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"onnxkit {command}: error: "), err
    assert fragment in lines[0], err
    assert "Traceback" not in err and not RAW.search(err)


def _npy_header(shape, descr="<f4", version=1) -> bytes:
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    text += " " * (64 - (10 + len(text) + 1) % 64) + "\n"
    size = struct.pack("<H" if version == 1 else "<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + size + text.encode()


# --- 1. bad values of every option: refused before the model loads, one line, status 2 ---

BAD_OPTIONS = [
    ("run", ["--repeat", "abc"], "argument --repeat/-r: 'abc' is not a whole number"),
    ("run", ["--repeat", "-1"], "from 0 to 100,000"),
    # --repeat 10**20, which ran for ever, is tried in a subprocess under a timeout (below)
    ("run", ["--repeat", "100001"], "100001 is out of range: give a whole number from 0 to 100,000"),
    ("run", ["--repeat", "1.5"], "'1.5' is not a whole number"),
    ("run", ["--top", "0"], "argument --top: 0 is out of range: give a whole number 1 or more"),
    ("run", ["--top", "x"], "argument --top: 'x' is not a whole number"),
    ("run", ["--level", "9"], "argument --level/-O: 9 is out of range: give a whole number from 0 to 3"),
    ("run", ["-O", "-1"], "argument --level/-O: -1 is out of range"),
    ("run", ["--seed", "-1"], "argument --seed: -1 is out of range"),
    ("run", ["--seed", str(2**64)], "argument --seed: 18446744073709551616 is out of range"),
    ("run", ["--rtol", "nan"], "argument --rtol: 'nan': give a finite number, 0 or more"),
    ("run", ["--atol", "-1"], "argument --atol: '-1': give a finite number, 0 or more"),
    ("run", ["--atol", "inf"], "argument --atol: 'inf': give a finite number"),
    ("run", ["--rtol", "abc"], "argument --rtol: 'abc' is not a number"),
    ("run", ["--executor", "gpu9"], "argument --executor/-e: invalid choice: 'gpu9'"),
    ("run", ["--dim", "N=abc"], "--dim N=abc: 'abc' is not a whole number"),
    ("run", ["--dim", "N=-1"], "--dim N=-1: -1 is out of range: give a whole number from 0 to 2,147,483,647"),
    ("run", ["--dim", f"N={10**20}"], "is out of range"),
    ("run", ["--dim", "N"], "--dim 'N' must look like NAME=VALUE"),
    ("run", ["--dim", "=3"], "--dim '=3' must look like NAME=VALUE"),
    ("run", ["--dim", "N="], "--dim 'N=' must look like NAME=VALUE"),
    ("run", ["--dim", "M=3"], "--dim 'M': the model's inputs have no such symbolic dimension (they have: N)"),
    ("run", ["--dim", "N=2", "--dim", "N=3"], "--dim 'N' is given twice"),
    ("run", ["--input", "x"], "--input 'x' must look like NAME=VALUE"),
    ("run", ["--input", "y=whatever.npy"], "--input y 'whatever.npy': no such file"),
    ("run", ["--compare", "no_such_runtime_xyz"], "unknown backend 'no_such_runtime_xyz'"),
    ("optimize", ["-O", "5"], "argument -O/--level: 5 is out of range"),
    ("optimize", ["--seed", "-3"], "argument --seed: -3 is out of range"),
    ("optimize", ["--rtol", "nan"], "argument --rtol: 'nan'"),
    ("conformance", ["--jobs", "0"], "argument --jobs/-j: 0 is out of range: give a whole number from 1 to 256"),
    ("conformance", ["--jobs", str(10**9)], "argument --jobs/-j: 1000000000 is out of range"),
    ("conformance", ["--jobs", "many"], "argument --jobs/-j: 'many' is not a whole number"),
    ("conformance", ["-k", "(unclosed"], "-k '(unclosed' is not a valid regular expression"),
    ("conformance", ["--kind", "bogus"], "argument --kind: invalid choice: 'bogus'"),
    ("info", ["--example", "bogus"], "argument --example: invalid choice: 'bogus'"),
]


@pytest.mark.parametrize("command, extra, fragment", BAD_OPTIONS,
                         ids=[f"{c}-{' '.join(e)[:40]}" for c, e, _ in BAD_OPTIONS])
def test_bad_option_values_are_one_line_errors(demo, tmp_path, capsys, monkeypatch, command, extra,
                                               fragment):
    from onnxkit.cli import conformance

    def must_not_run(*args, **kwargs):  # nor read every case, nor start --jobs processes
        raise AssertionError("the bad argument was not refused")

    monkeypatch.setattr(conformance, "select_cases", must_not_run)
    monkeypatch.setattr(conformance, "run_suite", must_not_run)
    model = {"run": [demo], "optimize": [demo], "info": [], "conformance": ["--out", tmp_path / "r"]}
    status, out, err = cli(capsys, command, *model[command], *extra)
    assert_one_line_error(status, err, command, fragment, expected_status=2 if "unknown backend"
                          not in fragment else 1)
    assert "out y" not in out  # refused before the model ran


def test_conformance_filter_matching_nothing_is_an_error(monkeypatch, tmp_path, capsys):
    from onnxkit.cli import conformance

    monkeypatch.setattr(conformance, "select_cases", lambda pattern, kinds: [])  # reading all is slow
    status, _, err = cli(capsys, "conformance", "-k", "^nothing$", "--out", tmp_path / "r")
    assert_one_line_error(status, err, "conformance", "no case matches -k '^nothing$'")


def test_model_path_and_example_are_exclusive(demo, capsys):
    status, _, err = cli(capsys, "info", demo, "--example", "squeezenet")
    assert_one_line_error(status, err, "info", "give a model path or --example NAME, not both")
    status, _, err = cli(capsys, "info")
    assert_one_line_error(status, err, "info", "give a model path or --example NAME")


# --- 2. files: only regular files are read; a FIFO or device never hangs ---

@pytest.fixture
def odd_paths(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with unblocked(fifo) as fifo_path:
        # /dev/null, not /dev/zero: a reader that ignores the kind of file would read
        # /dev/zero until memory ran out
        yield {"folder": (str(tmp_path), "is a folder, not a regular file"),
               "fifo": (fifo_path, "is a FIFO (named pipe), not a regular file"),
               "device": ("/dev/null", "is a character device, not a regular file"),
               "missing": (str(tmp_path / "missing.npy"), "no such file"),
               "nul": ("a\x00b.npy", "cannot use it"),
               "long": ("L" * 5000 + ".npy", "cannot use it (File name too long)")}


@pytest.mark.parametrize("kind", ["folder", "fifo", "device", "missing", "nul", "long"])
def test_model_and_input_files_must_be_regular(demo, odd_paths, capsys, kind):
    path, fragment = odd_paths[kind]
    status, _, err = cli(capsys, "info", path)
    assert_one_line_error(status, err, "info", "model ")
    assert fragment in err
    status, _, err = cli(capsys, "run", demo, "--input", f"x={path}")
    assert_one_line_error(status, err, "run", "--input x ")
    assert fragment in err
    status, _, err = cli(capsys, "optimize", path)
    assert_one_line_error(status, err, "optimize", fragment)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_files_are_one_line_errors(demo, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.ones((1, 3), np.float32))
    (tmp_path / "x.npy").chmod(0)
    status, _, err = cli(capsys, "run", demo, "--input", f"x={tmp_path / 'x.npy'}")
    assert_one_line_error(status, err, "run", "cannot open it (Permission denied)")


def test_input_for_no_such_input_names_the_model_inputs(demo, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.ones((1, 3), np.float32))
    status, _, err = cli(capsys, "run", demo, "--input", f"y={tmp_path / 'x.npy'}")
    assert_one_line_error(status, err, "run", "--input 'y': the model has no such input (its inputs: 'x')")
    status, _, err = cli(capsys, "run", demo, "--input", f"x={tmp_path / 'x.npy'}",
                         "--input", f"x={tmp_path / 'x.npy'}")
    assert_one_line_error(status, err, "run", "--input 'x' is given twice")


def test_files_written_must_be_files(demo, tmp_path, capsys):
    (tmp_path / "plain").write_text("")
    status, _, err = cli(capsys, "run", demo, "-o", tmp_path / "plain")
    assert_one_line_error(status, err, "run", "is a file, not a folder")
    status, _, err = cli(capsys, "optimize", demo, tmp_path)  # the output is a folder
    assert_one_line_error(status, err, "optimize", "is a folder: give a file path")
    os.mkfifo(tmp_path / "fifo")
    with unblocked(tmp_path / "fifo"):
        status, _, err = cli(capsys, "optimize", demo, "--json", tmp_path / "fifo")
    assert_one_line_error(status, err, "optimize", "is a FIFO (named pipe): give a file path")
    status, _, err = cli(capsys, "conformance", "-k", "^test_relu$", "--out", tmp_path / "plain")
    assert_one_line_error(status, err, "conformance", "is not a folder")


def test_paths_to_write_are_checked_before_the_work(demo, tmp_path, capsys):
    status, out, err = cli(capsys, "optimize", demo, tmp_path / "missing" / "out.onnx")
    assert_one_line_error(status, err, "optimize", "the folder")
    assert out == ""  # refused before optimizing, not after
    status, out, err = cli(capsys, "run", demo, "-o", "L" * 5000)
    assert_one_line_error(status, err, "run", "(5000 chars)': cannot make the folder (File name too long)")
    assert len(err) < 400 and out == ""  # a huge argument is cut, not repeated


def test_optimize_output_may_replace_its_input(demo, capsys):
    status, out, _ = cli(capsys, "optimize", "-O1", demo, demo)
    assert status == 0 and "wrote" in out
    x = np.array([[-1, 2, -3]], np.float32)
    y, z = onnxkit.Session(demo).run(None, {"x": x})
    np.testing.assert_array_equal(y, [[0, 2, 0]])
    np.testing.assert_array_equal(z, [[-1, 4, -3]])


# --- 3. .npy files: bounded by their header, never unpickled ---

def _npy_cases(tmp_path):
    good = tmp_path / "good.npy"
    np.save(good, np.ones((1, 3), np.float32))
    data = good.read_bytes()
    files = {
        "not_npy": (b"hello, this is not an array", "not a .npy file"),
        "empty": (b"", "not a .npy file"),
        "truncated": (data[:-4], "(12 bytes) but the file holds 8 bytes of data"),
        "trailing": (data + b"\0" * 4, "(12 bytes) but the file holds 16 bytes of data"),
        "absurd": (_npy_header((2_000_000_000_000,)) + b"\0" * 16,
                   "shape [2000000000000] of float32 (8,000,000,000,000 bytes), more than the"),
        "absurd_2d": (_npy_header((10**6, 10**6, 3)), "more than the"),
        "negative": (_npy_header((-2, 3)), "declares an invalid shape (-2, 3)"),
        "code": (_npy_header("(__import__('os').getpid(),)"), "the .npy header is malformed"),
        "version3": (_npy_header((1, 3), version=3) + b"\0" * 12, "format version 3.0 is not supported"),
        "structured": (_npy_header((3,), descr="[('a', '<f4')]") + b"\0" * 12, "structured"),
        "object": (_npy_header((1,), descr="|O") + b"\0" * 8, "the array holds Python objects"),
        "header_too_big": (b"\x93NUMPY\x02\x00" + struct.pack("<I", 10**6) + b" " * 10**6,
                           "the .npy header is malformed"),
    }
    return files


@pytest.mark.parametrize("case", ["not_npy", "empty", "truncated", "trailing", "absurd", "absurd_2d",
                                  "negative", "code", "version3", "structured", "object",
                                  "header_too_big"])
def test_malformed_npy_is_refused_before_allocating(demo, tmp_path, capsys, case):
    content, fragment = _npy_cases(tmp_path)[case]
    path = tmp_path / f"{case}.npy"
    path.write_bytes(content)
    status, out, err = cli(capsys, "run", demo, "--input", f"x={path}")
    assert_one_line_error(status, err, "run", f"--input x={path}: ")
    assert fragment in err
    assert "out y" not in out


class _Marker:
    """Unpickling this creates ``path``: the marker that a pickle was run."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_pickled_object_array_is_never_unpickled(demo, tmp_path, capsys):
    marker = tmp_path / "unpickled"
    path = tmp_path / "evil.npy"
    np.save(path, np.array([_Marker(str(marker))], dtype=object), allow_pickle=True)
    status, _, err = cli(capsys, "run", demo, "--input", f"x={path}")
    assert_one_line_error(status, err, "run", "the array holds Python objects, stored as a pickle")
    assert not marker.exists()


@pytest.mark.parametrize("array, fragment", [
    (np.ones((1, 3), np.int64), "input 'x' expects tensor(float) (float32), got an array of int64"),
    (np.ones((1, 4), np.float32), "input 'x' expects dimension 1 to be 3"),
    (np.ones(3, np.float32), "input 'x' expects rank 2"),
    (np.array(["a", "b", "c"]), "got an array of <U1"),
])
def test_wrong_dtype_or_shape_names_the_input(demo, tmp_path, capsys, array, fragment):
    np.save(tmp_path / "x.npy", array)
    status, _, err = cli(capsys, "run", demo, "--input", f"x={tmp_path / 'x.npy'}")
    assert_one_line_error(status, err, "run", fragment, expected_status=1)


@pytest.mark.parametrize("layout", ["big_endian", "fortran"])
def test_valid_npy_layouts_are_read_exactly(demo, tmp_path, layout):
    x = np.array([[-1.5, 2.0, -3.0], [4.0, -5.0, 6.25]], np.float32)
    stored = x.astype(">f4") if layout == "big_endian" else np.asfortranarray(x)
    np.save(tmp_path / "x.npy", stored)
    out = tmp_path / "out"
    assert main(["run", demo, "--input", f"x={tmp_path / 'x.npy'}", "-o", str(out)]) == 0
    np.testing.assert_array_equal(np.load(out / "y.npy"), np.maximum(x, 0))
    np.testing.assert_array_equal(np.load(out / "z.npy"), np.maximum(x, 0) + x)


def test_random_inputs_over_the_tensor_limit_are_refused(demo, capsys):
    status, _, err = cli(capsys, "run", demo, "--dim", "N=2000000000")  # 24 GB of float32
    assert_one_line_error(status, err, "run", "a random input 'x' of shape [2000000000, 3] would "
                          "take 24,000,000,000 bytes", expected_status=1)


# --- 4. output files: unique, safe, listed in outputs.json, never silently replaced ---

HOSTILE_NAMES = ["a/b", "a_b", "n\x00ul", "L" * 300, "..", "../up", "\x1b[31mred\u202eevil", "Y", "y",
                 "CON", "outputs"]


@pytest.fixture
def hostile(tmp_path):
    """Identity outputs with hostile names; model strings with escapes and bidi overrides."""
    nodes = [helper.make_node("Identity", ["x\x1b[1m"], [n], name=f"node\x1b]0;{i}\x07")
             for i, n in enumerate(HOSTILE_NAMES)]
    graph = helper.make_graph(
        nodes, "g\x1b[2J\u202e", [helper.make_tensor_value_info("x\x1b[1m", TensorProto.FLOAT, ["N\u202e", 3])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in HOSTILE_NAMES])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              producer_name="evil\x1b[2J\u202e", producer_version="\x9b31m")
    path = tmp_path / "hostile.onnx"
    path.write_bytes(model.SerializeToString())
    return str(path)


def test_outputs_get_unique_safe_files_and_a_manifest(hostile, tmp_path, capsys):
    x = np.array([[1.0, -2.0, 3.0]], np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out"
    status, _, err = cli(capsys, "run", hostile, "--input", f"x\x1b[1m={tmp_path / 'x.npy'}", "-o", out)
    assert status == 0, err
    manifest = json.loads((out / "outputs.json").read_text())
    assert [e["name"] for e in manifest["outputs"]] == HOSTILE_NAMES
    files = [e["file"] for e in manifest["outputs"]]
    assert len({f.lower() for f in files}) == len(files)  # distinct, even case-insensitively
    for f in files:
        assert re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,119}\.npy", f), f
        np.testing.assert_array_equal(np.load(out / f), x)
    assert sorted(os.listdir(out)) == sorted(files + ["outputs.json"])  # nothing outside


def test_existing_outputs_are_refused_unless_overwrite(demo, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "y.npy").write_bytes(b"precious")
    status, stdout, err = cli(capsys, "run", demo, "-o", out)
    assert_one_line_error(status, err, "run", "already holds y.npy; pass --overwrite to replace them")
    assert (out / "y.npy").read_bytes() == b"precious" and "out y" not in stdout
    x = np.array([[-1, 2, -3]], np.float32)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", demo, "-i", f"x={tmp_path / 'x.npy'}", "-o", str(out), "--overwrite"]) == 0
    np.testing.assert_array_equal(np.load(out / "y.npy"), [[0, 2, 0]])
    assert json.loads((out / "outputs.json").read_text())["outputs"][1]["file"] == "z.npy"


# --- 5. terminal output: model strings never send escapes or bidi overrides ---

def test_info_and_run_show_escapes_not_raw_bytes(hostile, tmp_path, capsys):
    status, out, err = cli(capsys, "info", hostile)
    assert status == 0, err
    assert not RAW.search(out)
    assert "producer     evil\\x1b[2J\\u202e \\x9b31m" in out
    assert "x\\x1b[1m: tensor(float) [N\\u202e, 3]" in out
    assert "n\\x00ul: tensor(float) ?" in out
    status, out, err = cli(capsys, "run", hostile, "--profile", "--repeat", "1", "--top", "3")
    assert status == 0, err
    assert not RAW.search(out)
    assert "out \\x1b[31mred\\u202eevil: float32[1, 3]" in out


def test_optimize_and_conformance_show_escapes_not_raw_bytes(hostile, tmp_path, capsys):
    status, out, err = cli(capsys, "optimize", "-O2", "--details", hostile, tmp_path / "o.onnx")
    assert status == 0, err
    assert not RAW.search(out) and "wrote" in out
    status, out, err = cli(capsys, "conformance", "-k", "^test_relu$", "-j", "1",
                           "--backend", "\x1b[31mnope\u202e", "--out", tmp_path / "r")
    assert_one_line_error(status, err, "conformance", "unknown backend '\\x1b[31mnope\\u202e'",
                          expected_status=1)


def test_error_messages_with_model_strings_are_one_escaped_line(hostile, tmp_path, capsys):
    np.save(tmp_path / "x.npy", np.ones((1, 4), np.float32))
    status, _, err = cli(capsys, "run", hostile, "--input", f"x\x1b[1m={tmp_path / 'x.npy'}")
    assert_one_line_error(status, err, "run", "input 'x\\x1b[1m' expects dimension 1 to be 3",
                          expected_status=1)


# --- 6. the real command: exit status, stderr, and no hang (subprocess, with a timeout) ---

def test_the_command_fails_in_one_line_without_hanging(demo, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.npy"
    huge.write_bytes(_npy_header((2_000_000_000_000,)))
    cases = [(["run", demo, "--input", f"x={fifo}"], "is a FIFO (named pipe), not a regular file"),
             (["run", demo, "--dim", "N=abc"], "--dim N=abc: 'abc' is not a whole number"),
             (["run", demo, "--repeat", str(10**20)], "100000000000000000000 is out of range: "
                                                      "give a whole number from 0 to 100,000"),
             (["run", demo, "--input", f"x={huge}"], "more than the")]
    running = [subprocess.Popen([sys.executable, "-m", "onnxkit", *map(str, args)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for args, _ in cases]
    try:
        for (args, fragment), proc in zip(cases, running):
            out, err = proc.communicate(timeout=120)  # a hang fails here instead of blocking
            assert proc.returncode == 2, (args, err)
            assert fragment in err and "Traceback" not in err, (args, err)
            assert len(err.strip().splitlines()) == 1 and out == "", (args, err)
    finally:
        for proc in running:
            proc.kill()
            proc.wait()
