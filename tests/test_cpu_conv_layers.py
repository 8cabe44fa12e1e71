"""A Conv layer's facts are worked out once and looked up by value (``_conv_layer``),
and a node's later calls find its layer by the identity of what they pass (``recall``).

Each test compares the ``cpu`` kernel's output with the reference kernel (numpy, its own
padding and products), and checks what the memo holds: one decision per layer shape,
none shared between layers that differ in anything the path depends on, and no
remembered layer served to a call that differs from the remembered one (attribute
values, weights, bias, residual, shape, tuning flag, an id another array took over).
"""

from __future__ import annotations

import numpy as np
import pytest

from onnxkit.kernels.cpu import _conv_layer, _tuning, conv
from onnxkit.kernels.cpu._buffers import as_constant as _constant  # an initializer
from onnxkit.ops.fused.fused_conv import fused_conv as reference_fused_conv
from onnxkit.ops.nn.conv import conv as reference_conv

RNG = np.random.default_rng(11)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.fixture
def decisions(monkeypatch):
    """Empty memo; counts how often a layer's path is decided."""
    _tuning.forget()
    calls = []
    real = conv._route
    monkeypatch.setattr(conv, "_route", lambda L, X, W: calls.append(X.shape) or real(L, X, W))
    yield calls
    _tuning.forget()


def _check(X, W, B=None, Z=None, **attrs):
    Y = conv.fused_conv(X, W, B, Z, **attrs)
    want = reference_fused_conv(X, W, B, Z, **attrs)
    np.testing.assert_allclose(Y, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    return Y


@pytest.mark.parametrize("x_shape, w_shape, attrs", [
    ((1, 8, 1, 1), (16, 8, 1, 1), dict(activation="HardSigmoid",
                                       activation_params=[1 / 6, 0.5])),  # dot products
    ((1, 32, 4, 4), (32, 1, 3, 3), dict(group=32, pads=[1, 1, 1, 1])),  # depthwise
    ((1, 40, 8, 8), (40, 1, 5, 5), dict(group=40, pads=[2, 2, 2, 2])),  # channels-last
    ((1, 16, 12, 12), (16, 16, 3, 3), dict(pads=[1, 1, 1, 1], activation="Relu")),  # 3x3
    ((2, 6, 20, 20), (10, 3, 3, 3), dict(group=2, strides=[2, 2])),  # im2col + BLAS
    ((1, 4, 30), (6, 4, 3), dict(pads=[1, 1])),  # 1-D
])
def test_a_layer_is_decided_once_and_each_call_still_matches_the_reference(
        decisions, x_shape, w_shape, attrs):
    W = _constant(f32(*w_shape))
    B = f32(w_shape[0])
    for _ in range(3):  # new inputs each call, the same layer
        _check(f32(*x_shape), W, B, **attrs)
    assert len(decisions) == 1


def test_layers_of_one_shape_share_the_decision_not_the_weights(decisions):
    """Two weights, one layer shape (a ResNet's repeated blocks): one decision, and each
    call computes with its own weights and bias."""
    X = f32(1, 24, 3, 3)
    outputs = [_check(X, _constant(f32(12, 24, 3, 3)), f32(12), pads=[1, 1, 1, 1])
               for _ in range(2)]
    assert len(decisions) == 1
    assert not np.allclose(outputs[0], outputs[1])


@pytest.mark.parametrize("other", [
    dict(pads=[0, 0, 0, 0]),  # an attribute
    dict(pads=[1, 1, 1, 1], activation="Relu"),  # the activation
    dict(pads=[1, 1, 1, 1], Z=True),  # a residual input
    dict(pads=[1, 1, 1, 1], writable=True),  # W not a constant (no Winograd)
])
def test_anything_the_path_depends_on_makes_another_layer(decisions, other):
    X, W = f32(1, 16, 9, 9), f32(16, 16, 3, 3)
    _check(X, _constant(W), pads=[1, 1, 1, 1])
    Z = f32(1, 16, 9, 9) if other.pop("Z", False) else None
    _check(X, W if other.pop("writable", False) else _constant(W), Z=Z, **other)
    assert len(decisions) == 2


def test_tuning_on_and_off_are_separate_decisions_and_forget_drops_them(
        decisions, monkeypatch):
    X, W, B = f32(1, 12, 2, 2), _constant(f32(20, 12, 1, 1)), f32(20)
    _check(X, W, B)  # ONNXKIT_CPU_TUNE=0 under test: the static rule
    monkeypatch.setenv("ONNXKIT_CPU_TUNE", "1")
    _check(X, W, B)  # timed: both candidates run, the winner serves the layer
    _check(X, W, B)
    assert len(decisions) == 2
    layer = next(L for key, L in _conv_layer.LAYERS.items() if key[-1])
    assert layer.route is layer.candidates[_tuning.chosen(layer.pick_key)]
    _tuning.forget()
    assert not _conv_layer.LAYERS
    _check(X, W, B)
    assert len(decisions) == 3


def test_a_residual_of_the_wrong_shape_still_reaches_the_reference(decisions):
    from onnxkit.errors import OnnxkitError

    X, W = f32(1, 4, 5, 5), _constant(f32(6, 4, 3, 3))
    _check(X, W, Z=f32(1, 6, 3, 3))
    with pytest.raises((OnnxkitError, ValueError)):
        conv.fused_conv(X, W, None, f32(1, 6, 4, 4))


def test_with_tuning_off_a_layer_runs_the_static_rule_whatever_was_timed(decisions):
    X, W = f32(1, 12, 2, 2), _constant(f32(20, 12, 1, 1))
    _check(X, W)  # ONNXKIT_CPU_TUNE=0 under test: 4 pixels, the dot products
    layer, = _conv_layer.LAYERS.values()
    assert layer.default == "dots" and layer.route is layer.candidates["dots"]
    _tuning._CHOSEN[layer.pick_key] = "im2col"  # as if timed earlier, with tuning on
    _conv_layer.LAYERS.clear()
    _conv_layer._RECENT.clear()  # a layer new to both memos
    _check(X, W)
    layer, = _conv_layer.LAYERS.values()
    assert layer.route is layer.candidates["dots"]


# --- a node's later calls: the layer found by the identity of W, B and the attributes ---

@pytest.fixture
def keys(monkeypatch):
    """Empty memos; counts how often a Conv builds its layer key by value."""
    _tuning.forget()
    calls = []
    real = conv.layer_key
    monkeypatch.setattr(conv, "layer_key", lambda *a: calls.append(1) or real(*a))
    yield calls
    _tuning.forget()


def test_a_node_s_later_calls_skip_the_key_and_still_match_the_reference(keys):
    W, B = _constant(f32(8, 4, 3, 3)), _constant(f32(8))
    W2 = _constant(f32(8, 4, 3, 3))  # another node's weights
    pads, strides = [1, 1, 1, 1], [1, 1]  # a node's own attribute lists, run after run
    for _ in range(4):
        _check(f32(1, 4, 6, 6), W, B, pads=pads, strides=strides, activation="Relu")
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
    _check(X, W, B, **base)
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
    _check(**args)
    assert len(keys) == 2


def test_an_array_that_took_over_a_dead_weight_s_id_finds_nothing(keys):
    """Ids are reused once an array is freed: the entry holds the weight weakly and
    checks that it is the very object called with."""
    X, old, new = f32(1, 2, 5, 5), _constant(f32(4, 2, 3, 3)), _constant(f32(4, 2, 3, 3))
    _check(X, old, pads=[1, 1, 1, 1])
    entry = _conv_layer._RECENT.pop((id(old), X.shape))
    _conv_layer._RECENT[(id(new), X.shape)] = entry  # as if `new` had old's id
    assert _conv_layer.recall(X, new, None, False, ("NOTSET", None, 1, None, [1, 1, 1, 1],
                                                     None, "", None)) is None
    _check(X, new, pads=[1, 1, 1, 1])
