"""onnxkit::Attention on the cpu executor at the sizes of a decoder step or a short
sequence: one compiled call (``_attention_small``), and past ``MAX_MACS`` the BLAS path.

Oracle: the attention in float64 numpy (grouped-query heads repeated, a row the mask or
causality leaves no key is 0, as the operator's reference gives), and onnx.reference's
opset-23 Attention where no row is emptied. The profiler names the kernel that ran:
``[reference]`` marks the cases the cpu kernel hands to the reference kernel.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from onnxkit import Session
from onnxkit.kernels.cpu._attention_small import MAX_MACS
from onnxkit.runtime.profile import Profiler

F32 = TensorProto.FLOAT


def _model(shapes, mask_type=None, domain="onnxkit", **attrs):
    names = ["Q", "K", "V"] + (["M"] if len(shapes) == 4 else [])
    types = [F32] * 3 + ([mask_type] if len(shapes) == 4 else [])
    node = helper.make_node("Attention", names, ["Y"], domain=domain, **attrs)
    graph = helper.make_graph(
        [node], "attention",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in zip(names, types, shapes)],
        [helper.make_tensor_value_info("Y", F32, None)])
    opsets = [helper.make_opsetid("", 23)] + ([helper.make_opsetid("onnxkit", 1)] if domain else [])
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def _heads(x, n):
    b, s, hidden = x.shape
    return x.reshape(b, s, n, hidden // n).transpose(0, 2, 1, 3)


def _oracle(q, k, v, mask=None, causal=False, scale=None):
    """4-D attention in float64; emptied rows 0."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    bias = np.zeros(q.shape[:2] + (q.shape[2], k.shape[2]))
    if mask is not None:
        bias = bias + (np.where(mask, 0, -np.inf) if mask.dtype == bool else mask)
    if causal:
        bias = bias + np.where(np.tril(np.ones(bias.shape[-2:], bool)), 0, -np.inf)
    s = q @ np.swapaxes(k, 2, 3) * scale + bias
    top = s.max(axis=-1, keepdims=True)
    dead = np.isneginf(bias.max(axis=-1, keepdims=True))
    p = np.exp(s - np.where(dead, 0, top))
    p = np.where(dead, 0, p / np.where(dead, 1, p.sum(axis=-1, keepdims=True)))
    return p @ v


def _run(model, feeds):
    sess = Session(model, executor="cpu", level=0)
    prof = Profiler(sess)
    (y,) = sess.run(None, feeds, trace=prof)
    return y, prof.rows()[0]["kernel"]


RNG = np.random.default_rng(11)


def _f(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _bool(*shape, emptied=()):
    m = RNG.random(shape) > 0.3
    for index in emptied:
        m[index] = False
    return m


CASES = {  # name: (Q, K, V, mask or None, attributes, runs the reference kernel)
    "3d float mask": (_f(2, 16, 64), _f(2, 16, 64), _f(2, 16, 64), _f(2, 2, 16, 16),
                      dict(q_num_heads=2, kv_num_heads=2), False),
    "3d step, emptied rows": (_f(2, 4, 64), _f(2, 16, 64), _f(2, 16, 64),
                              _bool(2, 1, 4, 16, emptied=[(1, 0, 2)]),
                              dict(q_num_heads=4, kv_num_heads=4, scale=1.0), False),
    "3d grouped-query": (_f(2, 3, 64), _f(2, 9, 32), _f(2, 9, 32), None,
                         dict(q_num_heads=4, kv_num_heads=2), False),
    "4d past keys, bool mask": (_f(2, 4, 1, 16), _f(2, 4, 9, 16), _f(2, 4, 9, 16),
                                _bool(2, 1, 1, 9), {}, False),
    "4d causal, emptied rows": (_f(1, 2, 5, 8), _f(1, 2, 5, 8), _f(1, 2, 5, 8),
                                _bool(1, 1, 5, 5, emptied=[(0, 0, 0), (0, 0, 3)]),
                                dict(is_causal=1), False),
    "4d grouped-query, causal": (_f(1, 4, 6, 8), _f(1, 1, 6, 8), _f(1, 1, 6, 4), None,
                                 dict(is_causal=1), False),
    "4d BLAS path": (_f(1, 2, 128, 64), _f(1, 2, 128, 64), _f(1, 2, 128, 64),
                     _f(1, 1, 128, 128), {}, False),
    "4d grouped-query, BLAS size": (_f(1, 4, 128, 64), _f(1, 2, 128, 64), _f(1, 2, 128, 64),
                                    None, {}, True),
    "4d short mask": (_f(1, 2, 4, 8), _f(1, 2, 6, 8), _f(1, 2, 6, 8), _f(1, 1, 4, 3), {}, True),
}


@pytest.mark.parametrize("name", CASES)
def test_attention_matches_the_oracle(name):
    Q, K, V, M, attrs, reference = CASES[name]
    shapes = [list(x.shape) for x in (Q, K, V)] + ([list(M.shape)] if M is not None else [])
    mask_type = None if M is None else (TensorProto.BOOL if M.dtype == bool else F32)
    feeds = {"Q": Q, "K": K, "V": V} | ({} if M is None else {"M": M})
    got, kernel = _run(_model(shapes, mask_type, **attrs), feeds)
    assert kernel == "cpu:onnxkit::Attention-1" + (" [reference]" if reference else "")
    three_d = Q.ndim == 3
    q, k, v = ((_heads(Q, attrs["q_num_heads"]), _heads(K, attrs["kv_num_heads"]),
                _heads(V, attrs["kv_num_heads"])) if three_d else (Q, K, V))
    mask = M
    if M is not None and M.shape[-1] < k.shape[2]:  # a short mask: the missing keys -inf
        mask = np.pad(M, [(0, 0)] * 3 + [(0, k.shape[2] - M.shape[-1])],
                      constant_values=-np.inf)
    expected = _oracle(q, k, v, mask, bool(attrs.get("is_causal")), attrs.get("scale"))
    if three_d:
        expected = expected.transpose(0, 2, 1, 3).reshape(got.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    if M is None or M.dtype != bool or M.any(axis=-1).all():  # onnx.reference: NaN rows
        (ref,) = ReferenceEvaluator(_model(shapes, mask_type, domain="", **attrs)).run(None, feeds)
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_views_as_they_lie():
    """A Transpose view of [b, s, h, d] values and a strided K give the same answer as
    the contiguous tensors (read as they lie, or copied)."""
    q = _f(2, 3, 4, 16).transpose(0, 2, 1, 3)
    k = _f(2, 4, 7, 32)[..., ::2]
    v = _f(2, 4, 7, 16)
    got, kernel = _run(_model([[2, 4, 3, 16], [2, 4, 7, 16], [2, 4, 7, 16]]),
                       {"Q": q, "K": k, "V": v})
    assert kernel == "cpu:onnxkit::Attention-1"
    np.testing.assert_allclose(got, _oracle(q, k, v), rtol=1e-5, atol=1e-5)


def test_the_small_path_covers_the_cases_above():
    """The cases named small stay under the threshold, the BLAS ones above it."""
    def macs(name):
        Q, K, V, _, attrs, _ = CASES[name]
        if Q.ndim == 3:
            heads, kv = attrs["q_num_heads"], attrs["kv_num_heads"]
            return Q.shape[0] * heads * Q.shape[1] * K.shape[1] * (Q.shape[2] // heads
                                                                     + V.shape[2] // kv)
        return Q.shape[0] * Q.shape[1] * Q.shape[2] * K.shape[2] * (Q.shape[3] + V.shape[3])
    assert macs("3d float mask") < MAX_MACS and macs("4d past keys, bool mask") < MAX_MACS
    assert macs("4d BLAS path") >= MAX_MACS
