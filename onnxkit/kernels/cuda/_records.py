"""What one kernel call did, for the executor to count: its copies between host and
device (``Transfer``), where it ran and what it chose (``NodeRecord``), kept per thread; and
the CUDA-graph capture under way on this thread, which no copy may happen inside."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Transfer:
    """One copy between host and device memory."""

    direction: str  # "h2d" or "d2h"
    nbytes: int
    what: str  # "input 0", "feed 'x'", "output 'y'", "subgraph output 1"...


@dataclass
class NodeRecord:
    """Where one kernel call ran, why, and what it copied."""

    kernel: str
    placement: str = "cuda"  # "cuda" or "host"
    reason: str = ""  # why a node with a cuda kernel ran on the host
    algorithm: str = ""  # the kernel's choice, e.g. "gemm 128x128" (shown by the profiler)
    transfers: list = field(default_factory=list)
    uploads: object = field(default=None, repr=False, compare=False)  # the executor's cache
    pool: object = field(default=None, repr=False, compare=False)  # the executor's DevicePool

    def bytes(self, direction: str) -> int:
        return sum(t.nbytes for t in self.transfers if t.direction == direction)

    def count(self, direction: str) -> int:
        return sum(1 for t in self.transfers if t.direction == direction)


_local = threading.local()


def _records() -> list:
    stack = getattr(_local, "records", None)
    if stack is None:
        stack = _local.records = []
    return stack


def current_record() -> NodeRecord | None:
    stack = _records()
    return stack[-1] if stack else None


class CaptureBroken(BaseException):
    """A run being captured into a CUDA graph did something a graph cannot replay (a copy
    between host and device, a host kernel reading device data). A BaseException so that
    no kernel's or evaluator's ``except Exception`` turns it into a model error: the
    executor catches it, drops the capture and runs the model eagerly."""


def capturing():
    """The capture under way on this thread (``_graphs.Capture``), or None."""
    return getattr(_local, "capture", None)


def set_capture(capture) -> None:
    _local.capture = capture


def check_later(flag, fail, what: str) -> bool:
    """Defer a kernel's error check while a run is captured into a CUDA graph: the graph
    reads ``flag`` after each replay and calls ``fail()`` (which raises; ``what`` names the
    kernel in its message) when it is set. False when nothing is being captured: the
    kernel checks now."""
    capture = capturing()
    if capture is None:
        return False
    fail.what = what
    capture.checks.append((flag, fail))
    return True


def note_algorithm(text: str) -> None:
    """Record what the running kernel chose (a tiling, direct or implicit GEMM)."""
    record = current_record()
    if record is not None:
        record.algorithm = text


def _note(direction: str, nbytes: int, what: str) -> None:
    if capturing() is not None:
        raise CaptureBroken(f"a {direction} copy of {what} ({nbytes} B)")
    record = current_record()
    if record is not None:
        record.transfers.append(Transfer(direction, int(nbytes), what))
