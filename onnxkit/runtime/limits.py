"""Safety limits every plan and run respects (configurable per Session)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from onnxkit.errors import LimitExceededError


@dataclass(frozen=True)
class Limits:
    """Bounds that keep an untrusted model from exhausting the machine.

    max_tensor_bytes   largest tensor a declared shape or a kernel may allocate
    max_loop_iterations  most loop iterations in one run, nested Loop / Scan / SequenceMap included
    max_graph_depth    deepest nesting of subgraphs and function calls
    """

    max_tensor_bytes: int = 8 * 1024**3
    max_loop_iterations: int = 1_000_000
    max_graph_depth: int = 64


DEFAULT_LIMITS = Limits()


_CURRENT: ContextVar[Limits] = ContextVar("onnxkit_limits", default=DEFAULT_LIMITS)


def current_limits() -> Limits:
    """The limits of the run in progress on this thread (defaults outside a run)."""
    return _CURRENT.get()


def using_limits(limits: Limits):
    """Make ``limits`` current; returns the token ``reset_limits`` takes."""
    return _CURRENT.set(limits)


def reset_limits(token) -> None:
    _CURRENT.reset(token)


def check_allocation(shape, dtype, what: str = "tensor") -> None:
    """Raise before allocating a tensor larger than the current ``max_tensor_bytes``."""
    count = 1
    for d in shape:
        if int(d) < 0:
            raise LimitExceededError(f"{what} would have a negative dimension: {list(map(int, shape))}")
        count *= int(d)
    size = count * np.dtype(dtype).itemsize
    limit = current_limits().max_tensor_bytes
    if size > limit:
        raise LimitExceededError(
            f"{what} of shape {list(map(int, shape))} would take {size:,} bytes, over the "
            f"limit max_tensor_bytes={limit:,}"
        )
