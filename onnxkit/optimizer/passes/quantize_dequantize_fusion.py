"""A QuantizeLinear read only by a DequantizeLinear becomes one onnxkit node with it.

    before:  q = QuantizeLinear (x, s, z)                  # s: one float32, z: uint8 / int8
             y = DequantizeLinear (q, s2, z2)
    after:   y = onnxkit.QuantizeDequantize (x, s, z, s2, z2)

A QDQ model (``onnxruntime.quantization.quantize_static``, QDQ format) rounds every
activation to 8 bits this way; run in float, the pair is one pass over the tensor instead
of two and no 8-bit tensor in between. The kernel runs the two standard kernels, so the
result is the pair's to the bit. Per-tensor only: both scales one float32 value, 8-bit
zero points, no block quantization or output_dtype. The pass runs once, after level 2's
fixed point, so that a fusion of DequantizeLinear -> Conv -> QuantizeLinear groups (as
onnxruntime's QLinearConv) would see them first.
https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.pattern import RewriteRule, RulePass

_EIGHT_BIT = frozenset({TensorProto.UINT8, TensorProto.INT8})


def _pattern(op, x, s, z, s2):
    q = op.QuantizeLinear(x, s, z, _name="q")
    return op.DequantizeLinear(q, s2, _allow_other_inputs=True, _name="dq")


def _check(g, x, s, z, s2, q, dq):
    for scale in (s, s2):
        value = g.constant(scale)
        if value is None or value.size != 1 or value.dtype != np.float32:
            return f"the scale {scale!r} is not one float32 constant"
    if g.dtype(x) != TensorProto.FLOAT:
        return "the input is not float32"
    zero = g.constant(z)
    if zero is None or zero.size != 1 or g.dtype(z) not in _EIGHT_BIT:
        return f"the zero point {z!r} is not one 8-bit constant"
    z2 = dq.input[2] if len(dq.input) > 2 else ""
    if z2 and (g.constant(z2) is None or g.constant(z2).size != 1 or g.dtype(z2) != g.dtype(z)):
        return f"the DequantizeLinear's zero point {z2!r} is not one constant of the same type"
    for node, names in ((q, ("block_size", "output_dtype")), (dq, ("block_size", "output_dtype"))):
        for name in names:
            if attr(node, name, 0):
                return f"{node.op_type} {node.name!r} sets {name}"
    if attr(q, "saturate", 1) != 1:
        return "saturate = 0 (float8 only)"
    return None


def _rewrite(op, x, s, z, s2, q, dq):
    z2 = dq.input[2] if len(dq.input) > 2 else ""
    return op.QuantizeDequantize(x, s, z, s2, *([z2] if z2 else []), _domain="onnxkit")


def _detail(g, x, s, z, s2, q, dq):
    return f"{q.name!r} + {dq.name!r}"


RULES = (RewriteRule("QuantizeLinear+DequantizeLinear", _pattern, _rewrite, _check, _detail),)
PASS = RulePass("quantize_dequantize_fusion", RULES, __doc__)
PASS.repeat = False  # once, after the fixed point: Q/DQ groups stay visible to the fusions
