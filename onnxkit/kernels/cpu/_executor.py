"""The ``cpu`` executor: Numba kernels first (``onnxkit.kernels.cpu``), reference kernels for
the rest. ``make_executor`` is what ``onnxkit.runtime.executors.BACKENDS`` names for "cpu"."""

from __future__ import annotations

from onnxkit.core.registry import Registry
from onnxkit.core.executor import Executor


class CpuExecutor(Executor):
    """Numba kernels first, reference kernels for the rest; outputs in reused buffers.

    Each executor (one per Session) owns a ``BufferPool``: while a run is under way, the
    pool is the current one, and the kernel's ``empty(shape, dtype)`` takes a buffer
    that no live value holds any more (see ``onnxkit.kernels.cpu._buffers``). During a
    run numpy's BLAS is set to one thread: the products and the kernels share Numba's
    threads instead (``onnxkit.kernels.cpu._blas``, ``onnxkit.runtime.blas_threads``).
    """

    name = "cpu"

    def __init__(self, registries: tuple[Registry, ...]):
        from onnxkit.kernels.cpu import _buffers, _route, _tuning
        from onnxkit.runtime import blas_threads  # loads numpy's OpenBLAS by ctypes: cpu only

        super().__init__(registries)
        self.pool = _buffers.BufferPool()
        self.tune = _tuning.asked()  # time the algorithms (True) or not: ONNXKIT_CPU_TUNE, read once
        self.tuning = _tuning.Tuning()  # this session's timed choices and their log
        self._modules = (_buffers, blas_threads, _tuning)
        self._taken = _route.taken

    def running(self):
        return _CpuRun(self)

    def trace_extra(self):
        """``{"algorithm": ...}``: what the node's cpu kernel took (``kernels.cpu._route``) -
        a Conv's algorithm (``_conv_rules``), or "reference" when it handed the node to the
        reference kernel; None when it noted nothing."""
        algorithm = self._taken()
        return None if algorithm is None else {"algorithm": algorithm}


class _CpuRun:
    """The context of one run on the cpu executor: the session's pool current, BLAS on
    one thread, the tuning flag fixed once. A class, not a generator: cheaper to enter
    and leave on every run."""

    __slots__ = ("executor", "tokens")

    def __init__(self, executor: CpuExecutor):
        self.executor = executor

    def __enter__(self):
        buffers, blas, tuning = self.executor._modules
        self.tokens = (buffers.using_pool(self.executor.pool),
                       tuning.begin_run(self.executor.tune, self.executor.tuning),
                       blas.one_thread())
        self.executor._taken()  # (forgets an earlier untraced run's last note: ``trace_extra``)

    def __exit__(self, *exc) -> bool:
        buffers, blas, tuning = self.executor._modules
        pool, tuned, threads = self.tokens
        blas.restore_threads(threads)
        tuning.end_run(tuned)
        buffers.release(pool)
        return False


def make_executor() -> CpuExecutor:
    """A fresh ``CpuExecutor`` (one per Session: it owns that session's buffer pool)."""
    from onnxkit.kernels.cpu import load_cpu_kernels
    from onnxkit.ops import load_reference_kernels

    return CpuExecutor((load_cpu_kernels(), load_reference_kernels()))
