"""Output buffers that are reused from one node (and one run) to the next.

A fresh numpy array of a few MiB is a fresh ``mmap``: every page faults on first write,
which can cost as much as the kernel that fills it. The ``cpu`` executor gives each
session a ``BufferPool``; kernels ask it for their outputs and scratch space::

    y = empty((n, m, h, w), np.float32)      # a pooled buffer when a run is under way

The pool owns one flat byte array per buffer and hands out views of it. A buffer is
free again when nothing but the pool refers to it: the evaluator dropped the value
after its last reader and no view of it is alive (a view keeps its base alive, so a
Reshape of a pooled value keeps the buffer busy). Reading the reference count is how
the pool knows; the runtime needs no hook for it.

Outside a run (a kernel called directly, as the tests do) ``empty`` is ``np.empty``.
"""

from __future__ import annotations

import bisect
import math
import sys
import threading
from contextvars import ContextVar

import numpy as np

# a free buffer's count: the pool's list entry + getrefcount's own argument
_FREE_REFS = 2
# below this, np.empty is faster than the pool and costs no page faults: malloc serves
# blocks under its mmap threshold (128 KiB) from memory it has mapped already
# (docs/cpu.md, "Measurements behind the kernels' designs")
SMALL = 1 << 16


class BufferPool:
    """Byte buffers keyed by size; ``take`` returns one nobody else holds, or a new one.

    A request takes a free buffer of exactly its size if there is one, else the smallest
    free one up to twice its size (so values of slightly different sizes, e.g. the
    growing outputs of DenseNet's Concat chain, share buffers), else a new one.
    """

    def __init__(self, max_bytes: int = 1 << 30):
        self.max_bytes = max_bytes  # above this, new buffers are not kept
        self.held_bytes = 0
        self.peak_bytes = 0
        self.new_buffers = 0
        self.reused = 0
        self._by_size: dict[int, list[np.ndarray]] = {}
        self._sizes: list[int] = []  # the keys of _by_size, sorted
        self._extent: dict[int, int] = {}  # id(buffer) -> bytes its values reach (``grow``)
        self._lock = threading.Lock()

    def take(self, nbytes: int, capacity: int = 0) -> np.ndarray:
        """A byte array of ``nbytes``, the start of a buffer of at least ``capacity``."""
        if capacity > nbytes:
            raw = self.take(capacity)
            root = raw if raw.base is None else raw.base
            with self._lock:
                if id(root) in self._extent:
                    self._extent[id(root)] = nbytes
            return raw[:nbytes]
        with self._lock:
            raw = self._free(nbytes)
            if raw is None:
                i = bisect.bisect_right(self._sizes, nbytes)
                while raw is None and i < len(self._sizes) and self._sizes[i] <= 2 * nbytes:
                    raw = self._free(self._sizes[i])
                    i += 1
            if raw is not None:
                self.reused += 1
                self._extent[id(raw)] = nbytes
                return raw[:nbytes]
            raw = np.empty(nbytes, dtype=np.uint8)
            self.new_buffers += 1
            if self.held_bytes + nbytes <= self.max_bytes:
                if nbytes not in self._by_size:
                    bisect.insort(self._sizes, nbytes)
                self._by_size.setdefault(nbytes, []).append(raw)
                self.held_bytes += nbytes
                self.peak_bytes = max(self.peak_bytes, self.held_bytes)
                self._extent[id(raw)] = nbytes
            return raw

    def grow(self, x: np.ndarray, nbytes: int):
        """The bytes of ``x``'s buffer from its start to ``nbytes``, if ``x`` starts the
        buffer, no value handed out reaches past ``x``'s end, and the buffer is that big;
        else None. ``x``'s own bytes are left as they are (a value that grows ``x`` in
        place, as Concat does, writes only past them)."""
        raw = x
        while isinstance(raw.base, np.ndarray):
            raw = raw.base
        with self._lock:
            # only pooled buffers have an extent (kept until ``clear``, so ids stay theirs)
            if (self._extent.get(id(raw)) != x.nbytes or raw.size < nbytes
                    or not x.flags.c_contiguous or x.ctypes.data != raw.ctypes.data):
                return None
            self._extent[id(raw)] = nbytes
            return raw[:nbytes]

    def _free(self, nbytes: int):
        for raw in self._by_size.get(nbytes, ()):
            if sys.getrefcount(raw) <= _FREE_REFS + 1:  # + the loop variable
                return raw
        return None

    def clear(self) -> None:
        with self._lock:
            self._by_size.clear()
            self._sizes.clear()
            self._extent.clear()
            self.held_bytes = 0

    def stats(self) -> dict:
        return {"buffers": sum(len(b) for b in self._by_size.values()),
                "held_bytes": self.held_bytes, "new_buffers": self.new_buffers,
                "reused": self.reused}


_CURRENT: ContextVar[BufferPool | None] = ContextVar("onnxkit_cpu_pool", default=None)


def using_pool(pool: BufferPool | None):
    """Make ``pool`` the one ``empty`` draws from; returns the token for ``release``."""
    return _CURRENT.set(pool)


def release(token) -> None:
    _CURRENT.reset(token)


def empty(shape, dtype=np.float32, capacity: int = 0) -> np.ndarray:
    """An uninitialized C-contiguous array, from the current pool when there is one.

    With ``capacity`` (bytes) the array starts a buffer at least that big, so that a value
    built by appending to it (``grown``) can grow in place.
    """
    if not isinstance(dtype, np.dtype):
        dtype = np.dtype(dtype)
    if type(shape) is not tuple:
        shape = tuple(shape)
    return empty_known(shape, dtype, math.prod(shape) * dtype.itemsize, capacity)


def empty_known(shape: tuple, dtype: np.dtype, nbytes: int, capacity: int = 0) -> np.ndarray:
    """``empty`` for a caller that knows the shape (a tuple), the dtype (an ``np.dtype``)
    and their byte size already, as a plan-time layer does: no conversions per call."""
    if nbytes < SMALL:  # (a negative size too: np.empty says what is wrong)
        return np.empty(shape, dtype)
    pool = _CURRENT.get()
    if pool is None:
        return np.empty(shape, dtype)
    # an array over the pooled bytes (its base): cheaper than .view().reshape()
    return np.ndarray(shape, dtype, pool.take(nbytes, capacity))


def grown(x: np.ndarray, shape) -> np.ndarray | None:
    """An array of ``shape`` (``x``'s dtype) whose first ``x.size`` values are ``x``'s,
    in ``x``'s own buffer (``BufferPool.grow``), or None when that is not possible."""
    pool = _CURRENT.get()
    if pool is None:
        return None
    nbytes = math.prod(int(d) for d in shape) * x.dtype.itemsize
    raw = pool.grow(x, nbytes)
    return None if raw is None else raw.view(x.dtype).reshape(shape)


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` as the kernels read it: a read-only view (``a`` itself when it is one).

    Numba compiles one signature per writable flag of each array argument. Inputs,
    weights, biases, residuals and masks come either way: an initializer or the spec
    suite's test data read-only; a folded BatchNorm, a missing bias's zeros, a node's
    output or an array the user feeds writable. Handed over as they came, each mix of
    flags was one more compilation of the kernel, in the warm-up or in
    a user's first run. Handed over read-only, one signature per dtype serves them all
    (``tests/test_cpu_signatures.py``). Outputs and scratch stay writable.
    """
    if not a.flags.writeable:
        return a
    view = a.view()
    view.setflags(write=False)  # a third of what ``view.flags.writeable = False`` costs
    return view


def zeros_read_only(n: int, dtype) -> np.ndarray:
    """A missing bias: ``n`` zeros, read-only (``read_only``)."""
    return read_only(np.zeros(n, dtype))
