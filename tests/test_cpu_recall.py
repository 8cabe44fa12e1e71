"""A node's later calls find what its first call worked out, by the identity of its inputs.

Conv layers (``_conv_layer.recall``) and the constant index inputs of Reshape and Slice
(``_recall.recalled``). Every output is compared with the reference kernel; the memo
must never serve a call whose inputs differ from the remembered ones in anything the
result depends on: attribute values, weights, shapes, the tuning flag, the contents of
a writable index tensor, or an array that merely took over a dead one's id.
"""

from __future__ import annotations

import numpy as np
import pytest

from onnxkit.kernels.cpu import _conv_layer, _recall, _tuning, conv, reshape_slice
from onnxkit.ops.fused.fused_conv import fused_conv as reference_fused_conv
from onnxkit.ops.nn.conv import conv as reference_conv
from onnxkit.ops.tensor import reshape as ref_reshape, slice as ref_slice

RNG = np.random.default_rng(5)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _constant(a):  # an initializer: read-only memory a session read from the model
    return np.frombuffer(a.tobytes(), a.dtype).reshape(a.shape)


@pytest.fixture
def keys(monkeypatch):
    """Empty memos; counts how often a Conv builds its layer key by value."""
    _tuning.forget()
    calls = []
    real = conv.layer_key
    monkeypatch.setattr(conv, "layer_key", lambda *a: calls.append(1) or real(*a))
    yield calls
    _tuning.forget()


def _check_fused(X, W, B=None, Z=None, **attrs):
    Y = conv.fused_conv(X, W, B, Z, **attrs)
    want = reference_fused_conv(X, W, B, Z, **attrs)
    np.testing.assert_allclose(Y, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_a_node_s_later_calls_skip_the_key_and_still_match_the_reference(keys):
    W, B = _constant(f32(8, 4, 3, 3)), _constant(f32(8))
    W2 = _constant(f32(8, 4, 3, 3))  # another node's weights
    pads, strides = [1, 1, 1, 1], [1, 1]  # a node's own attribute lists, run after run
    for _ in range(4):
        _check_fused(f32(1, 4, 6, 6), W, B, pads=pads, strides=strides, activation="Relu")
        X = f32(1, 4, 6, 6)
        np.testing.assert_allclose(conv.conv(X, W2, B, pads=pads, strides=strides),
                                   reference_conv(X, W2, B, pads=pads, strides=strides),
                                   rtol=1e-5, atol=1e-4)
    assert len(keys) == 2  # one per node (Conv and FusedConv), on its first call


@pytest.mark.parametrize("change", ["pads", "activation", "bias", "no bias", "residual",
                                    "input shape", "tuning"])
def test_a_call_that_differs_in_anything_is_not_served_the_remembered_layer(
        keys, monkeypatch, change):
    W, B = _constant(f32(6, 3, 3, 3)), _constant(f32(6))
    X = f32(1, 3, 7, 7)
    base = dict(pads=[1, 1, 1, 1], activation="Relu")
    _check_fused(X, W, B, **base)
    args = dict(X=X, W=W, B=B, Z=None, **base)
    if change == "pads":
        args["pads"] = [0, 0, 0, 0]  # same W and input: only the values differ
    elif change == "activation":
        args["activation"], args["activation_params"] = "LeakyRelu", [0.1]
    elif change == "bias":
        args["B"] = _constant(f32(6))
    elif change == "no bias":
        args["B"] = None
    elif change == "residual":
        args["Z"] = f32(1, 6, 7, 7)
    elif change == "input shape":
        args["X"] = f32(1, 3, 9, 9)
    else:
        monkeypatch.setenv("ONNXKIT_CPU_TUNE", "1")
    _check_fused(**args)
    assert len(keys) == 2


def test_an_array_that_took_over_a_dead_weight_s_id_finds_nothing(keys):
    """Ids are reused once an array is freed: the entry holds the weight weakly and
    checks that it is the very object called with."""
    X, old, new = f32(1, 2, 5, 5), _constant(f32(4, 2, 3, 3)), _constant(f32(4, 2, 3, 3))
    _check_fused(X, old, pads=[1, 1, 1, 1])
    entry = _conv_layer._RECENT.pop((id(old), X.shape))
    _conv_layer._RECENT[(id(new), X.shape)] = entry  # as if `new` had old's id
    assert _conv_layer.recall(X, new, None, False, ("NOTSET", None, 1, None, [1, 1, 1, 1],
                                                     None, "", None)) is None
    _check_fused(X, new, pads=[1, 1, 1, 1])


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
