"""Reference kernels of the quantization operators (default domain).

Linear quantization maps reals to a small integer or float type through a scale and a
zero point: q = saturate(round(x / scale) + zero_point), x ~ (q - zero_point) * scale.
The integer kernels (MatMulInteger, ConvInteger, QLinear*) accumulate exactly in wide
integers (or in float64, exact for these sizes) before any requantization.
https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html
"""
