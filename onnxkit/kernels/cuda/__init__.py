"""Numba CUDA kernels of the `cuda` executor, registered with ``@op(..., registry=CUDA)``.

    sess = onnxkit.Session("model.onnx", executor="cuda")

Feeds are copied to the GPU once, every tensor a cuda kernel makes stays there, outputs
come back once. Operators without a cuda kernel run their reference kernel on the host
with counted copies (``sess.executor.stats()``, ``DeviceProfile``). Without a GPU, set
``NUMBA_ENABLE_CUDASIM=1`` before Python starts to run the same kernels in numba's
simulator (slow: for tests). See docs/cuda.md.

The kernels share names and argument order with the reference and ``cpu`` kernels, and
their index math with the ``cpu`` kernels (``onnxkit.kernels.indexing``).
"""

from __future__ import annotations

import importlib
import os
from functools import lru_cache

from onnxkit.errors import ExecutorUnavailableError
from onnxkit.kernels.cuda._device import DeviceTensor, HostFallback  # noqa: F401 (public names)
from onnxkit.kernels.cuda._profile import DeviceProfile  # noqa: F401
from onnxkit.ops.registry import Registry
from onnxkit.runtime.executors import register_executor

CUDA = Registry("cuda")

#: The modules holding cuda kernels: which operators have one is this explicit list.
KERNEL_MODULES = (
    "unary", "binary", "cast", "shape_ops", "matmul", "conv", "pool", "batch_norm",
    "softmax", "layer_norm", "reduce", "transpose", "concat", "gather", "constant_of_shape",
    "attention", "slice", "expand", "pad", "compare", "lrn", "instance_norm", "conv_transpose",
)

#: Operators whose cuda kernel runs even when no input is on the device: their inputs are
#: shapes, their outputs data the GPU will read (made there instead of copied up each run).
DEVICE_SOURCES = frozenset({("", "ConstantOfShape")})


@lru_cache(maxsize=None)
def load_cuda_kernels() -> Registry:
    for name in KERNEL_MODULES:
        importlib.import_module(f"{__name__}.{name}")
    return CUDA


def unavailable_reason() -> str | None:
    """Why the cuda executor cannot run in this process, or None when it can."""
    from numba import config

    if config.ENABLE_CUDASIM:
        return None
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return ("NUMBA_ENABLE_CUDASIM is set, but numba was imported before it was: set it "
                "before Python starts (e.g. NUMBA_ENABLE_CUDASIM=1 python ...)")
    from numba import cuda

    detail = ""
    try:
        if cuda.is_available():
            return None
        from numba.cuda.cudadrv.driver import driver

        driver.get_device_count()
    except Exception as exc:  # the driver says why: no library, no device...
        detail = " ".join(str(exc).split())
    return ("no usable CUDA GPU in this process (numba.cuda.is_available() is False"
            f"{': ' + detail if detail else ''}). Run on a machine with an NVIDIA GPU and "
            "driver, or use numba's CUDA simulator (slow, for tests): start Python with "
            "NUMBA_ENABLE_CUDASIM=1")


def _numpy_compat() -> None:
    """numba-cuda 0.30 registers ``np.row_stack``, which numpy 2.5 removed: its first kernel
    compile then fails (AttributeError) for every kernel. Give numpy the alias back (it was
    ``np.vstack``) before numba-cuda's array typing loads; a no-op on older numpy."""
    import numpy as np

    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack


def make_executor(synchronize_each_node: bool = True, graphs: bool | None = None):
    """A fresh ``CudaExecutor`` (one per Session: it caches that session's uploads).

    ``graphs``: replay runs of static shapes as CUDA graphs (``_graphs``); by default on
    unless ``ONNXKIT_CUDA_GRAPHS=0``. Never while each node is synchronized.
    """
    if graphs is None:
        graphs = os.environ.get("ONNXKIT_CUDA_GRAPHS", "1") not in ("", "0")
    reason = unavailable_reason()
    if reason is not None:
        raise ExecutorUnavailableError(f"the 'cuda' executor is unavailable: {reason}")
    _numpy_compat()
    from numba import config

    config.CUDA_LOW_OCCUPANCY_WARNINGS = 0  # small models launch small grids, on purpose
    from onnxkit.kernels.cuda._executor import CudaExecutor
    from onnxkit.ops import load_reference_kernels

    reference = load_reference_kernels()
    return CudaExecutor((load_cuda_kernels(), reference), reference, synchronize_each_node,
                        DEVICE_SOURCES, graphs)


register_executor("cuda", make_executor)
