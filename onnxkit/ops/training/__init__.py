"""Reference kernels of the ``ai.onnx.preview.training`` domain.

Optimizers (Adagrad, Adam, Momentum) update any number of tensors in one call: their
inputs are R, T, then the tensors grouped by role (all X, then all G, ...). Gradient
differentiates part of the enclosing graph in reverse mode.
https://onnx.ai/onnx/operators/ (section ai.onnx.preview.training)
"""
