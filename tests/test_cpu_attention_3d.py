"""onnxkit::Attention on 3-D inputs [b, s, heads * d] on the cpu executor: the short path of
``_attention_small.small_step_3d`` (an encoder layer, a step of T5's decoder), with Q, K
and V as they come out of a merged projection's Split (strided views), masks of each
broadcast shape, causality and grouped-query heads.

Oracle: the float64 attention of ``tests.test_cpu_attention_small`` and onnx.reference's
opset-23 Attention (where no row is emptied).
"""

import numpy as np
import pytest
from onnx import TensorProto
from onnx.reference import ReferenceEvaluator

from tests.test_cpu_attention_small import _heads, _model, _oracle, _run

RNG = np.random.default_rng(23)
F32 = TensorProto.FLOAT


def _split_views(b, s, width):
    """Q, K, V as views of one [b, s, 3 * width] tensor (a merged projection's Split)."""
    qkv = RNG.standard_normal((b, s, 3 * width)).astype(np.float32)
    return qkv[..., :width], qkv[..., width:2 * width], qkv[..., 2 * width:]


CASES = {  # name: (Q, K, V, mask or None, attributes)
    "bert-like, one mask for every head": (*_split_views(2, 16, 64),
                                           RNG.standard_normal((2, 1, 16, 16)).astype(np.float32),
                                           dict(q_num_heads=2, kv_num_heads=2)),
    "t5 position bias per head": (*_split_views(2, 5, 32),
                                  RNG.standard_normal((1, 4, 5, 5)).astype(np.float32),
                                  dict(q_num_heads=4, kv_num_heads=4, scale=1.0)),
    "causal, no mask": (*_split_views(1, 7, 24), None,
                        dict(q_num_heads=3, kv_num_heads=3, is_causal=1)),
    "a mask row per query": (*_split_views(3, 4, 16),
                             RNG.standard_normal((3, 2, 4, 4)).astype(np.float32),
                             dict(q_num_heads=2, kv_num_heads=2)),
}


@pytest.mark.parametrize("name", CASES)
def test_3d_attention_matches_the_oracle(name):
    Q, K, V, M, attrs = CASES[name]
    shapes = [list(x.shape) for x in (Q, K, V)] + ([list(M.shape)] if M is not None else [])
    feeds = {"Q": Q, "K": K, "V": V} | ({} if M is None else {"M": M})
    got, kernel = _run(_model(shapes, None if M is None else F32, **attrs), feeds)
    assert kernel == "cpu:onnxkit::Attention-1"
    q, k, v = (_heads(Q, attrs["q_num_heads"]), _heads(K, attrs["kv_num_heads"]),
               _heads(V, attrs["kv_num_heads"]))
    want = _oracle(q, k, v, M, bool(attrs.get("is_causal")), attrs.get("scale"))
    np.testing.assert_allclose(got, want.transpose(0, 2, 1, 3).reshape(got.shape),
                               rtol=1e-5, atol=1e-5)
    (ref,) = ReferenceEvaluator(_model(shapes, None if M is None else F32, domain="",
                                       **attrs)).run(None, feeds)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_grouped_query_3d_with_fewer_key_heads():
    Q = RNG.standard_normal((2, 3, 64)).astype(np.float32)
    K, V = (RNG.standard_normal((2, 6, 16)).astype(np.float32) for _ in range(2))
    attrs = dict(q_num_heads=4, kv_num_heads=1)
    got, kernel = _run(_model([[2, 3, 64], [2, 6, 16], [2, 6, 16]], **attrs),
                       {"Q": Q, "K": K, "V": V})
    assert kernel == "cpu:onnxkit::Attention-1"
    want = _oracle(_heads(Q, 4), _heads(K, 1), _heads(V, 1))
    np.testing.assert_allclose(got, want.transpose(0, 2, 1, 3).reshape(got.shape),
                               rtol=1e-5, atol=1e-5)
