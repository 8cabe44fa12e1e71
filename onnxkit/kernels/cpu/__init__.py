"""Numba kernels of the `cpu` executor, registered with ``@op(..., registry=CPU)``.

Ops without a kernel here run their reference kernel; a kernel here may itself hand
the configurations it does not cover to the reference kernel (it calls it directly),
so the two executors always give the same answers.

| module          | operators                                                        |
|-----------------|------------------------------------------------------------------|
| conv            | Conv, onnxkit::FusedConv (im2col + BLAS; depthwise direct)       |
| gemm, matmul    | Gemm, MatMul, onnxkit::FusedGemm / FusedMatMul (BLAS + epilogue) |
| pool            | MaxPool, AveragePool                                             |
| batch_norm      | BatchNormalization (inference)                                   |
| activations     | Relu, LeakyRelu, Clip, HardSigmoid, HardSwish, Gelu, Erf         |
| binary          | Add, Sub, Mul, Div, Sum                                          |
| softmax         | Softmax                                                          |
| layer_norm      | LayerNormalization, onnxkit::LayerNormalization / SkipLayerNormalization |
| attention       | onnxkit::Attention                                               |
| tensor          | Gather, Transpose, Concat                                        |
| resize          | Resize (nearest / linear, 2-D)                                   |

Every kernel is compiled with ``cache=True`` (``NUMBA_CACHE_DIR``); ``python -m
onnxkit.kernels.cpu.warm`` compiles them all ahead of a first session.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from onnxkit.kernels.cpu._threads import configure
from onnxkit.ops.registry import Registry

CPU = Registry("cpu")


@lru_cache(maxsize=None)
def load_cpu_kernels() -> Registry:
    configure()
    for mod in sorted(m.name for m in pkgutil.walk_packages(__path__, prefix=__name__ + ".")):
        name = mod.rsplit(".", 1)[-1]
        if not name.startswith("_") and name != "warm":
            importlib.import_module(mod)
    return CPU
