"""Reshape and Slice on the cpu executor: the constant index inputs worked out once
(``_recall.recalled``), and the tuning flag read once per run.

Every output is compared with the reference kernel; the memo must never serve a call
whose index tensor is writable (its contents may change) or outlived its array (an id
another array may take over). The Conv layer's own recall is tested with the layers
(``test_cpu_conv_layers.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from onnxkit.kernels.cpu import _recall, _tuning, reshape_slice
from onnxkit.kernels.cpu._buffers import as_constant as _constant
from onnxkit.ops.tensor import reshape as ref_reshape, slice as ref_slice

RNG = np.random.default_rng(5)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_tuning_is_read_once_per_run(monkeypatch):
    monkeypatch.setenv("ONNXKIT_CPU_TUNE", "1")
    assert _tuning.tuning()
    with _tuning.tuning_of_run():
        monkeypatch.setenv("ONNXKIT_CPU_TUNE", "0")
        assert _tuning.tuning()  # the run's value
    assert not _tuning.tuning()


def test_index_inputs_that_are_constants_are_worked_out_once(monkeypatch):
    _recall._DERIVED.clear()
    built = []
    real = reshape_slice.target_shape
    monkeypatch.setattr(reshape_slice, "target_shape", lambda *a: built.append(1) or real(*a))
    shape = _constant(np.array([0, -1], np.int64))
    for data_shape in [(2, 3, 4), (2, 3, 4), (5, 2, 2), (5, 2, 2)]:
        data = f32(*data_shape)
        np.testing.assert_array_equal(reshape_slice.reshape(data, shape),
                                      ref_reshape.reshape(data, shape))
    assert len(built) == 2  # once per input shape: -1 depends on it


def test_a_writable_index_tensor_is_read_on_every_call():
    _recall._DERIVED.clear()
    data = f32(4, 6)
    shape = np.array([3, 8], np.int64)  # a user's feed or a computed value
    assert reshape_slice.reshape(data, shape).shape == (3, 8)
    shape[:] = [8, 3]
    assert reshape_slice.reshape(data, shape).shape == (8, 3)
    starts, ends = np.array([1], np.int64), np.array([3], np.int64)
    np.testing.assert_array_equal(reshape_slice.slice_(data, starts, ends), data[1:3])
    ends[0] = 4
    np.testing.assert_array_equal(reshape_slice.slice_(data, starts, ends), data[1:4])
    assert not _recall._DERIVED


@pytest.mark.parametrize("starts, ends, axes, steps", [
    ([1], [3], None, None), ([0, -1], [2, -10], [1, 0], [1, -2]), ([-100], [100], [-1], [3]),
    ([5], [1], [0], [-1]), ([0], [0], [1], None),
])
def test_slice_matches_the_reference_on_each_call(starts, ends, axes, steps):
    data = f32(6, 5)
    as_const = [None if v is None else _constant(np.array(v, np.int64))
                for v in (starts, ends, axes, steps)]
    for _ in range(2):  # the first call builds, the second recalls
        np.testing.assert_array_equal(reshape_slice.slice_(data, *as_const),
                                      ref_slice.slice_(data, *as_const))


def test_a_bad_index_is_refused_as_the_reference_refuses_it():
    data = f32(3, 3)
    for fn in (reshape_slice.slice_, ref_slice.slice_):
        with pytest.raises(ValueError, match="repeat an axis"):
            fn(data, _constant(np.array([0, 0], np.int64)), _constant(np.array([1, 1], np.int64)),
               _constant(np.array([0, 0], np.int64)))
    for fn in (reshape_slice.reshape, ref_reshape.reshape):
        with pytest.raises(ValueError, match="cannot reshape"):
            fn(data, _constant(np.array([4, 2], np.int64)))


def test_an_entry_leaves_with_its_array():
    import gc

    _recall._DERIVED.clear()
    shape = _constant(np.array([2, -1], np.int64))
    assert reshape_slice.reshape(f32(4, 3), shape).shape == (2, 6)
    assert len(_recall._DERIVED) == 1
    del shape
    gc.collect()
    assert not _recall._DERIVED  # no id of a freed array is left to match another
