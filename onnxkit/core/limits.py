"""Safety limits every plan and run respects (configurable per Session).

Two kinds of memory bound: ``max_tensor_bytes`` caps any one tensor; ``max_run_bytes``
caps what one run holds at once (``MemoryBudget``): every value a kernel made and that
is still live, loop-carried and scan-accumulated values included. Kernels that can blow
up check the size they are about to allocate with ``check_allocation``, which consults
both; the evaluator charges every result it stores, so an allocation nobody checked
still stops the run at the node that made it.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from onnxkit.errors import LimitExceededError, describe_node

GiB = 1024**3
_RUN_BYTES_CAP = 8 * GiB


def physical_memory() -> int | None:
    """Bytes of memory this process may use: the machine's RAM, or the container's
    cgroup limit where that is smaller; None where neither can be read."""
    total = None
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        total = _windows_memory()
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit() and (total is None or int(text) < total):
            total = int(text)
    return total if total and total > 0 else None


def _windows_memory() -> int | None:
    try:
        import ctypes

        class MemoryStatus(ctypes.Structure):
            _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                        ("ullTotalPhys", ctypes.c_ulonglong)] + [
                (n, ctypes.c_ulonglong) for n in ("ullAvailPhys", "ullTotalPageFile",
                                                  "ullAvailPageFile", "ullTotalVirtual",
                                                  "ullAvailVirtual", "ullAvailExtendedVirtual")]

        status = MemoryStatus()
        status.dwLength = ctypes.sizeof(MemoryStatus)
        if ctypes.windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
            return int(status.ullTotalPhys)
    except Exception:  # noqa: BLE001 - not Windows, or no answer: no figure
        return None
    return None


def run_bytes_for(memory: int | None) -> int:
    """The default run budget on a machine with ``memory`` bytes: the smaller of 8 GiB and
    half of it (8 GiB where the memory is unknown)."""
    return _RUN_BYTES_CAP if memory is None else min(_RUN_BYTES_CAP, memory // 2)


def default_run_bytes() -> int:
    return run_bytes_for(physical_memory())


@dataclass(frozen=True)
class Limits:
    """Bounds that keep an untrusted model from exhausting the machine.

    max_tensor_bytes   largest tensor a declared shape or a kernel may allocate
    max_run_bytes      most bytes the values of one run may hold at once (nested bodies,
                       loop state and scan outputs included); default: the smaller of
                       8 GiB and half the machine's memory
    max_loop_iterations  most loop iterations in one run, nested Loop / Scan / SequenceMap included
    max_graph_depth    deepest nesting of subgraphs and function calls
    """

    max_tensor_bytes: int = 8 * GiB
    max_run_bytes: int = field(default_factory=default_run_bytes)
    max_loop_iterations: int = 1_000_000
    max_graph_depth: int = 64


DEFAULT_LIMITS = Limits()


class MemoryBudget:
    """The bytes one run's values hold, against ``Limits.max_run_bytes``.

    The evaluator charges each value a kernel returns (``value_bytes``) and releases it
    when the value dies; control-flow kernels charge what they keep between body runs.
    A value counts its own bytes, views included (a Reshape's output counts as much as its
    input while both live): the count errs towards more, never towards less.
    """

    __slots__ = ("limit", "live", "max_tensor_bytes")

    def __init__(self, limits: Limits):
        self.limit = int(limits.max_run_bytes)
        self.max_tensor_bytes = int(limits.max_tensor_bytes)  # read by ``check_allocation``
        self.live = 0

    def check(self, nbytes: int, what: str, node=None) -> None:
        """Raise when ``nbytes`` more would not fit (``node``: the node to name)."""
        if self.live + nbytes > self.limit:
            raise self.exceeded(nbytes, what, node)

    def charge(self, nbytes: int, what: str, node=None) -> None:
        """Count ``nbytes`` more as live (raising, uncounted, when they do not fit)."""
        live = self.live + nbytes
        if live > self.limit:
            raise self.exceeded(nbytes, what, node)
        self.live = live

    def release(self, nbytes: int) -> None:
        self.live -= nbytes

    def exceeded(self, nbytes: int, what: str, node=None) -> LimitExceededError:
        """The error for ``nbytes`` more that do not fit (built only when raised)."""
        where = f"{describe_node(node)}: " if node is not None else ""
        return LimitExceededError(
            f"{where}{what} would take {nbytes:,} bytes while the run already holds "
            f"{self.live:,}: over the run's memory budget max_run_bytes={self.limit:,} (set "
            f"Limits(max_run_bytes=...) to change it)"
        )


_CURRENT: ContextVar[Limits] = ContextVar("onnxkit_limits", default=DEFAULT_LIMITS)
_BUDGET: ContextVar[MemoryBudget | None] = ContextVar("onnxkit_budget", default=None)


def current_limits() -> Limits:
    """The limits of the run in progress on this thread (defaults outside a run)."""
    return _CURRENT.get()


def current_budget() -> MemoryBudget | None:
    """The memory budget of the run in progress on this thread (None outside a run)."""
    return _BUDGET.get()


def using_limits(limits: Limits, budget: MemoryBudget | None = None):
    """Make ``limits`` (and a run's ``budget``) current; returns the token ``reset_limits``
    takes."""
    return _CURRENT.set(limits), _BUDGET.set(budget)


def reset_limits(token) -> None:
    limits, budget = token
    _BUDGET.reset(budget)
    _CURRENT.reset(limits)


def check_allocation(shape, dtype, what: str = "tensor") -> None:
    """Raise before allocating a tensor larger than the current ``max_tensor_bytes``, or
    larger than what is left of the current run's memory budget."""
    count = 1
    for d in shape:
        if int(d) < 0:
            raise LimitExceededError(f"{what} would have a negative dimension: {list(map(int, shape))}")
        count *= int(d)
    size = count * np.dtype(dtype).itemsize
    budget = _BUDGET.get()
    limit = current_limits().max_tensor_bytes if budget is None else budget.max_tensor_bytes
    if size > limit:
        raise LimitExceededError(
            f"{what} of shape {list(map(int, shape))} would take {size:,} bytes, over the "
            f"limit max_tensor_bytes={limit:,}"
        )
    if budget is not None and budget.live + size > budget.limit:
        raise budget.exceeded(size, f"{what} of shape {list(map(int, shape))}")
