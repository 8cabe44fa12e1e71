"""float16 onnxkit::Attention on the cpu executor is computed in float32 and stored as float16.

Oracle: the same attention in float64 numpy on the float16 inputs, rounded to float16
once. A kernel that multiplies, scales or takes the softmax in float16 is off by
several units in the last place; tolerance here is one and a half (rtol 1.5 * 2**-10).
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnxkit import Session

F16 = TensorProto.FLOAT16


def _model(q_shape, k_shape, v_shape, out_shape, mask_shape=None, **attrs):
    names = ["Q", "K", "V"] + (["M"] if mask_shape else [])
    shapes = [q_shape, k_shape, v_shape] + ([mask_shape] if mask_shape else [])
    node = helper.make_node("Attention", names, ["Y"], domain="onnxkit", **attrs)
    graph = helper.make_graph(
        [node], "attention_fp16",
        [helper.make_tensor_value_info(n, F16, s) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("Y", F16, out_shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid("onnxkit", 1)])


def _oracle(q, k, v, mask=None, causal=False):
    """4-D float64 attention of float16 values, rounded once."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ np.swapaxes(k, 2, 3) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = s + mask.astype(np.float64)
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return (p / p.sum(axis=-1, keepdims=True) @ v).astype(np.float16)


@pytest.mark.parametrize("case", ["4d", "4d_mask_causal", "3d_heads"])
def test_fp16_attention_is_float32_math_rounded_once(case):
    rng = np.random.default_rng(3)
    half = lambda *s: (rng.standard_normal(s) * 2).astype(np.float16)  # noqa: E731
    if case == "3d_heads":
        q, k, v = half(2, 64, 32), half(2, 64, 32), half(2, 64, 32)
        model = _model([2, 64, 32], [2, 64, 32], [2, 64, 32], [2, 64, 32],
                       q_num_heads=2, kv_num_heads=2)
        feeds = {"Q": q, "K": k, "V": v}
        split = lambda x: x.reshape(2, 64, 2, 16).transpose(0, 2, 1, 3)  # noqa: E731
        expected = _oracle(split(q), split(k), split(v)).transpose(0, 2, 1, 3).reshape(2, 64, 32)
    else:
        q, k, v = half(2, 2, 64, 16), half(2, 2, 64, 16), half(2, 2, 64, 16)
        mask = half(2, 1, 64, 64) if case == "4d_mask_causal" else None
        causal = case == "4d_mask_causal"
        model = _model([2, 2, 64, 16], [2, 2, 64, 16], [2, 2, 64, 16], [2, 2, 64, 16],
                       mask_shape=None if mask is None else [2, 1, 64, 64], is_causal=int(causal))
        feeds = {"Q": q, "K": k, "V": v} | ({} if mask is None else {"M": mask})
        expected = _oracle(q, k, v, mask, causal)
    onnx.checker.check_model(model)
    (got,) = Session(model, executor="cpu", level=0).run(None, feeds)
    assert got.dtype == np.float16 and got.shape == expected.shape
    np.testing.assert_allclose(got.astype(np.float32), expected.astype(np.float32),
                               rtol=1.5 * 2.0 ** -10, atol=2.0 ** -14)
