"""onnxkit::MatMulIntegerToFloat and onnxkit::DynamicQuantizeMatMul: the chain that
``onnxruntime.quantization.quantize_dynamic`` writes for each MatMul, as one node.

    MatMulIntegerToFloat (A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias):
        product = MatMulInteger (A, B, a_zero_point, b_zero_point)          # int32, exact
        Y = Mul (Cast <to = float> (product), Mul (a_scale, b_scale))       # a_scale's type
        Y = Add (Y, bias)                                                   # when given

    DynamicQuantizeMatMul (A, B, b_scale, b_zero_point, bias):              # A is float
        a, a_scale, a_zero_point = DynamicQuantizeLinear (A)
        Y = MatMulIntegerToFloat (a, B, a_scale, b_scale, a_zero_point, b_zero_point, bias)

Each line is the standard operator's reference kernel, run in the chain's order, so the
result is the unfused chain's, bit for bit. The inputs and their order are those of
onnxruntime's com.microsoft operators of the same names.
https://onnx.ai/onnx/operators/onnx__MatMulInteger.html ; see docs/onnxkit-domain.md
"""

from onnx import helper

from onnxkit.ops.fused._common import standard
from onnxkit.ops.registry import op


def scaled(product, a_scale, b_scale, bias=None):
    """The chain after the integer product: Cast, the scales' product, Mul, Add."""
    to = helper.np_dtype_to_tensor_dtype(a_scale.dtype)
    scale = standard("Mul", 14)(a_scale, b_scale)
    Y = standard("Mul", 14)(standard("Cast", 13)(product, to=to), scale)
    return Y if bias is None else standard("Add", 14)(Y, bias)


@op("MatMulIntegerToFloat", 1, domain="onnxkit")
def matmul_integer_to_float(A, B, a_scale, b_scale, a_zero_point=None, b_zero_point=None,
                            bias=None):
    product = standard("MatMulInteger", 10)(A, B, a_zero_point, b_zero_point)
    return scaled(product, a_scale, b_scale, bias)


@op("DynamicQuantizeMatMul", 1, domain="onnxkit")
def dynamic_quantize_matmul(A, B, b_scale, b_zero_point=None, bias=None):
    a, a_scale, a_zero_point = standard("DynamicQuantizeLinear", 11)(A)
    return matmul_integer_to_float(a, B, a_scale, b_scale, a_zero_point, b_zero_point, bias)
