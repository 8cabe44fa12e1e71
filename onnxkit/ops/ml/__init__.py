"""Reference kernels of the ``ai.onnx.ml`` domain (classic machine learning).

Linear models, tree ensembles, SVMs, scalers and encoders as emitted by converters
such as skl2onnx. Where the spec leaves a corner open (binary classifiers with one
score column, post transforms) the kernels follow onnxruntime, the de-facto standard.
https://onnx.ai/onnx/operators/ (section ai.onnx.ml)
"""
