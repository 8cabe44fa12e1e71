"""onnxkit::Gelu: the opset-20 Gelu, for models of older opsets.

    Y = 0.5 * X * (1 + erf(X / sqrt(2)))                                 approximate="none"
    Y = 0.5 * X * (1 + tanh(sqrt(2 / pi) * (X + 0.044715 * X^3)))        approximate="tanh"

https://onnx.ai/onnx/operators/onnx__Gelu.html ; see docs/onnxkit-domain.md
"""

from onnxkit.ops.fused._common import standard
from onnxkit.ops.registry import op


@op("Gelu", 1, domain="onnxkit")
def gelu(X, *, approximate="none"):
    return standard("Gelu", 20)(X, approximate=approximate)
