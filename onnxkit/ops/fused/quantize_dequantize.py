"""onnxkit::QuantizeDequantize: a QuantizeLinear and the DequantizeLinear reading it, one
node (per-tensor scales; the "fake quantization" a QDQ model puts on every activation).

    q = QuantizeLinear (x, y_scale, y_zero_point)          # 8 bits: y_zero_point's type
    y = DequantizeLinear (q, x_scale, x_zero_point)

Both lines are the standard operators' reference kernels, so the result is the pair's, bit
for bit. https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html ; docs/onnxkit-domain.md
"""

from onnxkit.ops.fused._common import standard
from onnxkit.ops.registry import op


@op("QuantizeDequantize", 1, domain="onnxkit")
def quantize_dequantize(x, y_scale, y_zero_point, x_scale, x_zero_point=None):
    q = standard("QuantizeLinear", 13)(x, y_scale, y_zero_point)
    return standard("DequantizeLinear", 13)(q, x_scale, x_zero_point)
