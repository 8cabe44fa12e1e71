"""The Executor protocol: how a plan's kernels are called and where values live.

``Executor`` is also the reference executor itself (numpy kernels called as they are,
values on the host); the fast executors subclass it (``kernels/cpu/_executor.py``,
``kernels/cuda/_executor.py``). ``onnxkit.runtime.executors`` finds them by name.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from onnxkit.core.registry import Kernel, Registry


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
