"""Executors: which registries a plan draws kernels from, and how a kernel is called.

| name        | kernels                                                    |
|-------------|------------------------------------------------------------|
| reference   | readable numpy (``onnxkit.ops``)                           |
| cpu         | Numba kernels for the hot ops (``onnxkit.kernels.cpu``), reference for the rest |
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, Callable

from onnxkit.errors import ExecutorUnavailableError
from onnxkit.ops import load_reference_kernels
from onnxkit.ops.registry import Kernel, Registry


class Executor:
    """Calls kernels on host numpy arrays; subclasses may keep values elsewhere."""

    name = "reference"

    def __init__(self, registries: tuple[Registry, ...]):
        self.registries = registries

    def invoke(self, kernel: Kernel, args: list, attrs: dict, ctx) -> Any:
        if ctx is None:
            return kernel.fn(*args, **attrs)
        return kernel.fn(*args, ctx=ctx, **attrs)

    def execute(self, feeds: dict, run, replayable: bool = True) -> list:
        """One run: ``run(feeds moved to this executor)`` gives the graph's outputs.
        ``replayable``: nothing watches the nodes one by one (no trace), so an executor may
        replay a recorded run instead (the cuda executor's CUDA graphs)."""
        return run({name: self.to_executor(value) for name, value in feeds.items()})

    def to_executor(self, value):
        """A feed, moved to where this executor keeps values."""
        return value

    def to_host(self, value):
        """An output, moved back to host numpy."""
        return value

    def owns(self, value) -> bool:
        """True for values this executor keeps in its own form (e.g. device tensors)."""
        return False

    def trace_extra(self):
        """Executor-specific data about the node just run, for ``TraceEvent.extra``."""
        return None

    def running(self):
        """The context a whole run happens in (nothing here: numpy's BLAS keeps its threads;
        the reference's products round the same whatever order they sum in,
        ``onnxkit.ops.linalg._precision``)."""
        return nullcontext()


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
        from onnxkit.kernels.cpu import _buffers, _tuning, conv
        from onnxkit.runtime import blas_threads  # loads numpy's OpenBLAS by ctypes: cpu only

        super().__init__(registries)
        self.pool = _buffers.BufferPool()
        self.tune = None  # time the algorithms (True), or not; None: ONNXKIT_CPU_TUNE
        self._modules = (_buffers, blas_threads, _tuning)
        self._conv = conv

    def running(self):
        return _CpuRun(self)

    def trace_extra(self):
        """``{"algorithm": ...}`` for a Conv (``kernels.cpu._conv_rules``), else None."""
        algorithm = self._conv.ran()
        return None if algorithm is None else {"algorithm": algorithm}


class _CpuRun:
    """The context of one run on the cpu executor: the session's pool current, BLAS on
    one thread, the tuning flag fixed once. A class, not a generator (7.7 -> 2 us a run)."""

    __slots__ = ("executor", "tokens")

    def __init__(self, executor: CpuExecutor):
        self.executor = executor

    def __enter__(self):
        buffers, blas, tuning = self.executor._modules
        self.tokens = (buffers.using_pool(self.executor.pool),
                       tuning.begin_run(self.executor.tune), blas.one_thread())
        self.executor._conv.ran()  # (forgets an earlier run's last Conv: ``trace_extra``)

    def __exit__(self, *exc) -> bool:
        buffers, blas, tuning = self.executor._modules
        pool, tuned, threads = self.tokens
        blas.restore_threads(threads)
        tuning.end_run(tuned)
        buffers.release(pool)
        return False


def _reference() -> Executor:
    return Executor((load_reference_kernels(),))


def _cpu() -> Executor:
    from onnxkit.kernels.cpu import load_cpu_kernels

    return CpuExecutor((load_cpu_kernels(), load_reference_kernels()))


_FACTORIES: dict[str, Callable[[], Executor]] = {"reference": _reference, "cpu": _cpu}


def register_executor(name: str, factory: Callable[[], Executor]) -> None:
    _FACTORIES[name] = factory


def get_executor(name: str) -> Executor:
    if isinstance(name, Executor):
        return name
    if name == "cuda" and "cuda" not in _FACTORIES:
        try:
            import onnxkit.kernels.cuda  # noqa: F401  (registers the cuda executor)
        except ImportError as exc:
            raise ExecutorUnavailableError(f"the 'cuda' executor cannot load: {exc}") from exc
    if name not in _FACTORIES:
        raise ExecutorUnavailableError(
            f"unknown executor {name!r}; available: {', '.join(sorted(_FACTORIES))}"
        )
    return _FACTORIES[name]()


def executor_names() -> list[str]:
    return sorted(set(_FACTORIES) | {"cuda"})
