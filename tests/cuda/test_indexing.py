"""The shared index helpers: written once, compiled for both targets, and right.

The structural tests read the kernel sources (``ast``): each helper of
``indexing.HELPERS`` is compiled with ``for_cpu`` in some cpu kernel module and with
``for_cuda`` in some cuda kernel module, unless listed below with the reason. The value
tests check the helpers against brute force and numpy, as plain Python and compiled for
the CPU (the CUDA compile of the same functions is exercised by the simulator tests and
the PTX check). Runs in any process.
"""

import ast
import itertools
from pathlib import Path

import numpy as np
import pytest

from onnxkit.kernels import indexing as ix

KERNELS = Path(ix.__file__).parent
HELPER_NAMES = {fn.__name__ for fn in ix.HELPERS}

# Helpers a target does not compile, and why. Kept exact (the test fails when a listed
# helper gains a user, so the list cannot go stale): drop the entry when it does.
NO_CPU_USER = {
    "broadcast_offset": "the cpu executor broadcasts with numpy's ufuncs (binary.py) and reads "
                        "attention masks through numpy broadcast views: no cpu loop walks strides",
    "unravel_index": "no kernel of either executor needs a multi-index of its own yet",
    "ravel_index": "no kernel of either executor needs a multi-index of its own yet",
    "im2col_row_split": "the cpu im2col walks the rows in (c, i, j) order (im2col_row): nothing "
                        "starts from a row number",
    "im2col_col_split": "cpu loops walk output positions as nested (oh, ow) loops; only "
                        "one-thread-per-output kernels split a flat position",
    "transposed_source": "the cpu executor has no ConvTranspose kernel (the reference's "
                         "GEMM + col2im runs)",
    "pad_source": "the cpu executor has no Pad or Tile kernel (the reference's np.pad and "
                  "np.tile run)",
}
NO_CUDA_USER = {
    "unravel_index": NO_CPU_USER["unravel_index"],
    "ravel_index": NO_CPU_USER["ravel_index"],
    "im2col_row": "the implicit GEMM looks its rows up in conv.py's row_table and the direct "
                  "kernel walks the taps in nested loops: no cuda kernel numbers a row",
    "im2col_row_split": "it builds conv.py's row_table on the host, over numpy arrays (plain "
                        "Python, not compiled): no cuda kernel splits a row number any more",
}


def _compiles(target: str, compiler: str) -> dict[str, list[tuple[str, str | None]]]:
    """helper -> [(module file, name bound to the compiled helper)] for kernels/<target>/*.py.

    Counts ``compiler(helper)`` calls where both names are imported from
    ``onnxkit.kernels.indexing`` (so ``for_cuda(formula)`` of an activation is not one).
    """
    found: dict[str, list[tuple[str, str | None]]] = {}
    for path in sorted((KERNELS / target).glob("*.py")):
        tree = ast.parse(path.read_text(), filename=str(path))
        imported = {alias.asname or alias.name: alias.name for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom)
                    and node.module == "onnxkit.kernels.indexing" for alias in node.names}
        bound = {id(node.value): node.targets[0].id for node in ast.walk(tree)
                 if isinstance(node, ast.Assign) and len(node.targets) == 1
                 and isinstance(node.targets[0], ast.Name)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and imported.get(node.func.id) == compiler and len(node.args) == 1
                    and isinstance(node.args[0], ast.Name)
                    and imported.get(node.args[0].id) in HELPER_NAMES):
                found.setdefault(imported[node.args[0].id], []).append(
                    (path.name, bound.get(id(node))))
    return found


@pytest.mark.parametrize("target,compiler,exceptions", [
    ("cpu", "for_cpu", NO_CPU_USER), ("cuda", "for_cuda", NO_CUDA_USER)])
def test_every_helper_is_compiled_for_both_targets(target, compiler, exceptions):
    users = _compiles(target, compiler)
    missing = HELPER_NAMES - set(users)
    assert not missing - set(exceptions), (
        f"helpers no {target} kernel compiles with {compiler}(...): "
        f"{sorted(missing - set(exceptions))}")
    stale = set(exceptions) & set(users)
    assert not stale, {name: f"now compiled in {users[name]}: drop it from the exceptions"
                       for name in stale}
    assert set(exceptions) <= HELPER_NAMES  # no exception for a helper that does not exist


def test_shared_helpers_are_used_where_they_are_compiled_and_never_copied():
    for target, compiler in (("cpu", "for_cpu"), ("cuda", "for_cuda")):
        for helper, places in _compiles(target, compiler).items():
            for module, name in places:
                source = ast.parse((KERNELS / target / module).read_text())
                loads = {n.id for n in ast.walk(source)
                         if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
                assert name is None or name in loads, f"{target}/{module}: {name} = " \
                    f"{compiler}({helper}) is never used"
        for path in (KERNELS / target).glob("*.py"):
            defined = {n.name for n in ast.walk(ast.parse(path.read_text()))
                       if isinstance(n, ast.FunctionDef)}
            assert not defined & HELPER_NAMES, f"{target}/{path.name} redefines " \
                f"{sorted(defined & HELPER_NAMES)}: import it from onnxkit.kernels.indexing"


def test_the_simulator_calls_a_helper_that_never_names_cuda_as_a_plain_function(monkeypatch):
    """Its device-function wrapper takes a module lock per call (docs/cuda.md, Testing)."""
    from numba import config

    from onnxkit.kernels.cuda import _scalar

    monkeypatch.setattr(config, "ENABLE_CUDASIM", 1)
    compile_for_cuda = ix.for_cuda.__wrapped__  # past the cache of the real compiles
    formulas = [f for f in vars(_scalar).values() if callable(f) and f is not _scalar.activation
                and getattr(f, "__module__", None) == _scalar.__name__]  # not the lookup
    for fn in list(ix.HELPERS) + formulas:
        assert compile_for_cuda(fn) is fn, fn.__name__

    def names_cuda(i):
        return cuda.threadIdx.x + i  # noqa: F821 - never run: only its names are read

    wrapped = compile_for_cuda(names_cuda)
    assert wrapped is not names_cuda and wrapped.__wrapped__ is names_cuda


# --- values -----------------------------------------------------------------------------


def test_window_taps_are_exactly_the_taps_inside():
    taps = ix.for_cpu(ix.window_taps)
    for start, dilation, kernel, size in itertools.product(range(-7, 8), (1, 2, 3), (1, 2, 4), (1, 3, 5)):
        inside = [j for j in range(kernel) if 0 <= start + j * dilation < size]
        for fn in (ix.window_taps, taps):
            first, stop = fn(start, dilation, kernel, size)
            if inside:
                assert (first, stop) == (inside[0], inside[-1] + 1)
            else:
                assert first >= stop


@pytest.mark.parametrize("shape,out_shape", [((3, 1), (2, 3, 4)), ((), (2, 2)), ((4,), (3, 4)),
                                             ((2, 1, 3), (2, 5, 3))])
def test_broadcast_offset_reads_what_numpy_broadcasting_reads(shape, out_shape):
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    want = np.broadcast_to(x, out_shape).reshape(-1)
    strides = ix.broadcast_strides(shape, out_shape)
    shape_arr = np.array(out_shape, dtype=np.int64)
    offset = ix.for_cpu(ix.broadcast_offset)
    for i, w in enumerate(want):
        assert x.reshape(-1)[ix.broadcast_offset(i, shape_arr, strides)] == w
        assert x.reshape(-1)[offset(i, shape_arr, strides)] == w


def test_transpose_strides_and_index_round_trip():
    x = np.arange(24).reshape(2, 3, 4)
    perm = (2, 0, 1)
    want = x.transpose(perm).reshape(-1)
    strides = ix.transpose_strides(x.shape, perm)
    out_shape = np.array([x.shape[p] for p in perm])
    got = [x.reshape(-1)[ix.broadcast_offset(i, out_shape, strides)] for i in range(x.size)]
    assert got == list(want)
    index = np.zeros(3, dtype=np.int64)
    ix.unravel_index(17, np.array(x.shape), index)
    assert tuple(index) == np.unravel_index(17, x.shape)
    assert ix.ravel_index(index, ix.contiguous_strides(x.shape)) == 17
    unravel, ravel = ix.for_cpu(ix.unravel_index), ix.for_cpu(ix.ravel_index)
    shape, strides = np.array(x.shape, dtype=np.int64), ix.contiguous_strides(x.shape)
    for ordinal in range(x.size):
        unravel(ordinal, shape, index)
        assert tuple(index) == np.unravel_index(ordinal, x.shape)
        assert ravel(index, strides) == ordinal


def test_im2col_rows_and_columns_round_trip():
    for row in range(3 * 2 * 3 * 4):
        parts = ix.im2col_row_split(row, 2, 3, 4)
        assert ix.im2col_row(*parts, 2, 3, 4) == row
    assert ix.im2col_col_split(17, 2, 3, 4) == np.unravel_index(17, (2, 3, 4))
    assert ix.conv_input_coord(3, 2, 2, 1, 2) == 3 * 2 - 1 + 2 * 2


def test_im2col_row_is_the_row_of_the_flattened_weight():
    w = np.arange(5 * 3 * 2 * 3 * 4).reshape(5, 3, 2, 3, 4)  # W[m, c, kd, kh, kw]
    flat = w.reshape(5, -1)  # W[m, row], the im2col GEMM's left operand
    row = ix.for_cpu(ix.im2col_row)
    for c, kd, kh, kw in itertools.product(range(3), range(2), range(3), range(4)):
        for fn in (ix.im2col_row, row):
            assert (flat[:, fn(c, kd, kh, kw, 2, 3, 4)] == w[:, c, kd, kh, kw]).all()
    assert ix.im2col_row(1, 0, 2, 1, 1, 3, 3) == (1 * 3 + 2) * 3 + 1  # 2-D: kernel_d = 1
    assert ix.im2col_row_split(16, 1, 3, 3) == (1, 0, 2, 1)
    for col in range(2 * 3 * 4):
        assert ix.im2col_col_split(col, 2, 3, 4) == np.unravel_index(col, (2, 3, 4))


def test_window_positions_by_hand():
    # output 4 of a stride-2 window with 1 padding row in front starts at input row 7
    assert ix.window_start(4, 2, 1) == 7
    assert ix.window_start(0, 2, 3) == -3  # in the padding
    # its tap 2 at dilation 3 reads 7 + 2*3
    assert ix.conv_input_coord(4, 2, 2, 1, 3) == 13
    start, coord = ix.for_cpu(ix.window_start), ix.for_cpu(ix.conv_input_coord)
    for o, j, s, p, d in itertools.product(range(5), range(4), (1, 2, 3), (0, 1, 4), (1, 2)):
        want = o * s + j * d - p
        assert ix.conv_input_coord(o, j, s, p, d) == coord(o, j, s, p, d) == want
        assert ix.window_start(o, s, p) + j * d == start(o, s, p) + j * d == want


def test_window_taps_by_hand():
    # size 5, kernel 3, dilation 2: a window starting at -3 reads -3, -1, 1 -> only tap 2
    assert ix.window_taps(-3, 2, 3, 5) == (2, 3)
    assert ix.window_taps(0, 1, 3, 5) == (0, 3)  # all inside
    assert ix.window_taps(3, 1, 3, 5) == (0, 2)  # reads 3, 4, 5 -> taps 0, 1
    assert ix.window_taps(4, 2, 3, 5) == (0, 1)  # reads 4, 6, 8
    first, stop = ix.window_taps(5, 1, 3, 5)  # starts past the end: no tap
    assert first >= stop


def test_broadcast_strides_refuses_what_does_not_broadcast():
    with pytest.raises(ValueError):
        ix.broadcast_strides((3,), (4,))
    assert ix.spatial3([5, 6], 1) == (1, 5, 6)


@pytest.mark.parametrize("mode,number", [("constant", 0), ("reflect", 1), ("edge", 2), ("wrap", 3)])
def test_pad_source_reads_what_np_pad_reads(mode, number):
    source = ix.for_cpu(ix.pad_source)
    for size, begin, end in itertools.product((2, 3, 5), (0, 1, 4, 9), (0, 2, 7)):
        extra = {"constant_values": -1} if mode == "constant" else {}
        padded = np.pad(np.arange(size), (begin, end), mode=mode, **extra)
        for o, want in enumerate(padded):
            assert ix.pad_source(o, begin, size, number) == source(o, begin, size, number) == want


def test_transposed_source_inverts_the_scatter():
    source = ix.for_cpu(ix.transposed_source)
    for stride, begin, dilation, size, j in itertools.product((1, 2, 3), (0, 1, 2), (1, 2),
                                                              (1, 4), range(3)):
        lands = {q * stride - begin + j * dilation: q for q in range(size)}
        for o in range(-2, 14):
            want = lands.get(o, -1)
            assert ix.transposed_source(o, j, stride, begin, dilation, size) == want
            assert source(o, j, stride, begin, dilation, size) == want
