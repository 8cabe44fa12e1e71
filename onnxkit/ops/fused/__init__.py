"""Reference kernels of the ``onnxkit`` domain: the fused operators the optimizer emits.

Each is written as the standard operators it replaces, run one after the other, so the
reference executor gives exactly the unfused result; fast executors implement them as one
kernel. The domain is documented in docs/onnxkit-domain.md.
"""
