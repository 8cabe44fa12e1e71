"""Numba kernels of the `cpu` executor, registered with ``@op(..., registry=CPU)``.

Ops without a kernel here run their reference kernel; a kernel here may itself hand
the configurations it does not cover to the reference kernel (it calls it directly),
so the two executors always give the same answers.

| module          | operators                                                        |
|-----------------|------------------------------------------------------------------|
| conv            | Conv, onnxkit::FusedConv (im2col or Winograd + BLAS; depthwise; 3-D) |
| conv_transpose  | ConvTranspose (BLAS + a Numba col2im for 2-D)                     |
| gemm, matmul    | Gemm, MatMul, onnxkit::FusedGemm / FusedMatMul (BLAS + epilogue) |
| einsum          | Einsum of two operands (one batched BLAS product)                |
| recurrent       | LSTM, GRU, RNN (the reference's loop, BLAS products)             |
| pool            | MaxPool, AveragePool                                             |
| batch_norm      | BatchNormalization (inference), onnxkit::FusedBatchNormalization |
| instance_norm   | InstanceNormalization                                            |
| activations     | Relu, LeakyRelu, Clip, HardSigmoid, HardSwish, Gelu, Erf,        |
|                 | Sigmoid, Tanh, Swish                                             |
| binary          | Add, Sub, Mul, Div, Sum                                          |
| softmax         | Softmax                                                          |
| layer_norm      | LayerNormalization, onnxkit::LayerNormalization / SkipLayerNormalization |
| rms_norm        | RMSNormalization, onnxkit::RMSNormalization                       |
| attention       | onnxkit::Attention                                               |
| tensor          | Gather, GatherND, Expand, Transpose, Concat                      |
| logical         | And, Or, Xor, Not, IsNaN, Where (numpy, small tensors)           |
| cast            | Cast between numpy's plain types                                 |
| reshape_slice   | Reshape, Slice (constant index inputs worked out once), Squeeze, |
|                 | Unsqueeze, Flatten (views)                                       |
| resize          | Resize (nearest / linear, 2-D)                                   |
| fused_quant     | onnxkit::MatMulIntegerToFloat / DynamicQuantizeMatMul / QuantizeDequantize (the chains' cpu kernels) |
| quantized       | QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear,         |
|                 | com.microsoft::QLinearAdd / QLinearMul                           |
| quantized_conv, | QLinearConv, ConvInteger; MatMulInteger, QLinearMatMul,          |
| quantized_matmul| com.microsoft::QGemm (exact integer sums: int32 dot products of  |
|                 | packed weights, ``_quantized_dots``; float64 BLAS past int32)    |
| quantized_pool  | com.microsoft::QLinearGlobalAveragePool, MaxPool of 8-bit types  |
| half            | no kernel of its own: float16 nodes of the ops in ``half.OPS``   |
|                 | run their float32 kernel between casts (a plan-time hook)        |

A kernel may carry a ``prepare`` hook (Conv, FusedConv, Reshape, Slice, the tree
ensembles): when the plan is built, ``kernel.prepare(node, attrs, constants, shapes)``
gives the node its own callable, which keeps what it works out (the algorithm, weights
transformed from initializers, index answers) on the plan's step
(``onnxkit.runtime.plan.prepare_kernel``). Nothing is kept in process-global memos.

The kernels share the cuda kernels' contract: a registered kernel has the name and the
signature of the operator's reference and cuda kernels, and the Numba kernel of an
operator the cuda executor also has takes its inputs, then the window geometry (kernel,
strides, dilations, pads, output size), then parameters, and its outputs last. (``im2col``
has no cuda counterpart, the implicit GEMM builds no columns, and keeps ``cols`` third,
where its code ran faster.) Index math comes from
``onnxkit.kernels.indexing`` (``for_cpu``), the helpers the cuda kernels compile with
``for_cuda``.

Threads: one pool, Numba's; the matrix products call oneMKL (numpy's OpenBLAS where
oneMKL is missing), one thread per call, from it (see ``_threads`` and ``_blas``).
Every kernel is compiled on its first use, with ``cache=True`` (a one-line notice says
so, ``_notice``); ``python -m onnxkit.kernels.cpu.warm`` compiles them all ahead of a
first session (CI does, so that its test workers do not compile the same kernels twice).
Numba checks only the timestamp of a kernel's own file, not of the helpers it inlines,
so the cache lives in a directory named after a hash of the sources compiled in
(``compiled_sources``: the modules using Numba, those they take constants from,
``onnxkit/kernels/indexing.py``, whose index helpers they inline, and
``onnxkit/kernels/activation_formulas.py``, whose formulas they compile):
``$NUMBA_CACHE_DIR/onnxkit-cpu-<hash>`` (``~/.cache/onnxkit/numba/...`` when
NUMBA_CACHE_DIR is unset). Editing a kernel starts a fresh cache instead of reusing
stale machine code; editing a module of plain Python keeps it. Thread count, small-work
threshold and BLAS library are read when a kernel runs: one cache serves every setting.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
from functools import lru_cache
from pathlib import Path

from onnxkit.ops.registry import Registry

CPU = Registry("cpu")


_USES_NUMBA = re.compile(r"^(from numba\b|import numba\b)", re.M)
_IMPORTS = re.compile(r"^from onnxkit\.([\w.]+) import (.*)$", re.M)
_CONSTANT = re.compile(r"\b_?[A-Z][A-Z0-9_]*\b|\($")


def compiled_sources() -> list[Path]:
    """The files whose code and constants the kernels compile in: this package's modules
    that use Numba, the package's modules they take constants from (UPPER_CASE names:
    a constant a kernel reads is frozen into its machine code), and so on, and the index
    helpers they inline. A kernel cannot call plain Python, so the modules of plain Python
    (the operators' drivers, the rules, the memos) are not among them: editing them
    keeps the cache."""
    here = Path(__file__).parent
    onnxkit = here.parents[1]
    todo = [p for p in sorted(here.glob("*.py")) if _USES_NUMBA.search(p.read_text())]
    seen: dict[Path, None] = {}
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen[path] = None
        for module, names in _IMPORTS.findall(path.read_text()):
            base = onnxkit / Path(*module.split("."))
            targets = [base / f"{n}.py" for n in re.findall(r"\w+", names)]
            if _CONSTANT.search(names):  # names continued on later lines count too
                targets.append(base.with_suffix(".py"))
            todo += [t for t in targets if t.parent == here and t.is_file()
                     and t.stem != "__init__"]
    return sorted(seen, key=str) + [here.parent / "indexing.py",
                                    here.parent / "activation_formulas.py"]


def _sources_hash() -> str:
    from onnxkit.kernels.cpu._blas_libraries import ILP64

    digest = hashlib.sha1()
    # compiled in: the width of the BLAS integers; not the thread count, the small-work
    # threshold or which library computes (all read when a kernel runs)
    digest.update(f"ILP64={ILP64}".encode())
    for path in compiled_sources():
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def cache_dir() -> str:
    """Where the compiled kernels of this version of the sources are cached."""
    root = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "onnxkit", "numba")
    return os.path.join(root, f"onnxkit-cpu-{_sources_hash()}")


def _use_cache_dir() -> None:
    """Point Numba's cache at ``cache_dir()`` before any kernel is decorated."""
    import numba

    numba.config.CACHE_DIR = cache_dir()


_use_cache_dir()


#: The modules holding registered cpu kernels (imported in this order): which operators
#: have one is this explicit list. A new kernel module is added here, one line
#: (``tests/test_cpu_modules.py`` checks that none on disk is left out).
KERNEL_MODULES = (
    "activations",
    "attention",
    "batch_norm",
    "binary",
    "cast",
    "conv",
    "conv_transpose",
    "einsum",
    "fused_quant",
    "gemm",
    "half",
    "instance_norm",
    "layer_norm",
    "logical",
    "matmul",
    "pool",
    "quantized",
    "quantized_conv",
    "quantized_matmul",
    "quantized_pool",
    "recurrent",
    "reduce_mean",
    "reshape_slice",
    "resize",
    "rms_norm",
    "softmax",
    "tensor",
    "trees",
)
#: modules of this package that are neither kernel modules nor private (``_name``)
NOT_KERNEL_MODULES = ("warm",)


@lru_cache(maxsize=None)
def load_cpu_kernels() -> Registry:
    for name in KERNEL_MODULES:
        importlib.import_module(f"{__name__}.{name}")
    from onnxkit.kernels.cpu import _notice

    _notice.install(CPU)
    return CPU
