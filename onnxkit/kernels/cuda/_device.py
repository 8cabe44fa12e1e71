"""Device tensors, the transfers that move them (each one counted), and kernel launches.

A ``DeviceTensor`` is a flat, contiguous buffer in GPU memory plus a logical shape:
kernels index it with the row-major offsets of ``onnxkit.kernels.indexing``, and a
Reshape is a new shape on the same buffer. It deliberately has no ``__array__``: numpy
cannot turn it into host data behind the executor's back, every copy goes through
``upload`` / ``download`` below and lands in the current node's ``NodeRecord``.

Everything that touches ``numba.cuda`` memory or launches a kernel is here, so the
simulator, a real GPU and the PTX compile check (``tests/cuda/ptx_check.py``) differ
only in these few functions.
"""

from __future__ import annotations

import math
import sys
import threading

import numpy as np

from onnxkit.core.values import describe_value
from onnxkit.errors import KernelInputError
from onnxkit.kernels.cuda._records import (  # noqa: F401 (kernels and the executor import them here)
    CaptureBroken, NodeRecord, Transfer, _note, _records, capturing, check_later, current_record,
    note_algorithm, set_capture)
from onnxkit.kernels.cuda._simulator import install as fix_simulator
from onnxkit.kernels.indexing import simulated  # noqa: F401 (the one test, for every cuda module)
from onnxkit.runtime.limits import check_allocation

#: dtypes a DeviceTensor may hold; anything else (strings, float16, bfloat16, float8,
#: complex) stays on the host and its nodes run their reference kernels there.
DEVICE_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float32, np.float64))
FLOAT_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64))


class HostFallback(Exception):
    """Raised by a CUDA kernel that cannot take these inputs; the executor then runs the
    operator's reference kernel on the host and records ``str(exc)`` as the reason."""


# ---------------------------------------------------------------- the tensor


class DeviceTensor:
    """``shape`` and ``dtype`` of a tensor whose elements live in ``flat`` (device, 1-D)."""

    __slots__ = ("flat", "shape", "dtype", "_host", "__weakref__")

    def __init__(self, flat, shape, dtype=None):
        self.flat = flat
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(flat.dtype if dtype is None else dtype)
        self._host = None  # the host copy, once downloaded (tensors are never written twice)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def reshape(self, *shape) -> "DeviceTensor":
        """The same buffer under another shape of the same size (no copy, no launch).

        Takes a shape like numpy: ``t.reshape((2, 3))`` or ``t.reshape(2, 3)``.
        """
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        shape = tuple(int(d) for d in shape)
        if math.prod(shape) != self.size:
            raise KernelInputError(f"cannot reshape {list(self.shape)} ({self.size} elements) "
                             f"to {list(shape)}")
        view = DeviceTensor(self.flat, shape, self.dtype)
        if self._host is not None:
            view._host = self._host.reshape(shape)
        return view

    def describe(self) -> str:
        return f"{self.dtype}{list(self.shape)} on cuda"

    def __repr__(self) -> str:
        return f"DeviceTensor({self.describe()})"


def unwrap(value):
    """The DeviceTensor a 0-d object array carries, else ``value``.

    The evaluator passes kernel results through ``np.asarray`` unless they are arrays,
    lists or dicts; that wraps a DeviceTensor in a 0-d object array. Undo it here.
    """
    if isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0:
        item = value.item()
        if isinstance(item, DeviceTensor):
            return item
    return value


def describe(value) -> str:
    """Like ``onnxkit.core.values.describe_value``, saying where a tensor lives."""
    value = unwrap(value)
    text = describe_value(value)
    return f"{text} on host" if isinstance(value, np.ndarray) else text


def can_live_on_device(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype in DEVICE_DTYPES


# ---------------------------------------------------------------- memory (the backend)


def _to_device(array: np.ndarray):
    from numba import cuda

    return cuda.to_device(array)


def _copy_in(flat, array: np.ndarray) -> None:
    flat.copy_to_device(array)


def _device_array(n: int, dtype):
    from numba import cuda

    return cuda.device_array(n, dtype=dtype)


def _to_host(flat) -> np.ndarray:
    return flat.copy_to_host()


class DevicePool:
    """Device buffers reused from node to node and run to run (``cudaMalloc`` is slow).

    A buffer is free again when nothing but the pool refers to it: every DeviceTensor
    (and Reshape view) of it is gone. Kernels run in launch order on one stream, so a
    buffer handed out again is written only after the kernels that read it.
    """

    _FREE_REFS = 3  # the bucket's list, getrefcount's argument, the loop variable

    def __init__(self, max_bytes: int = 2 << 30):
        self.max_bytes = max_bytes  # buffers beyond this are not kept
        self.held_bytes = 0
        self.new_buffers = 0
        self.reused = 0
        self._buckets: dict[tuple, list] = {}
        self._lock = threading.Lock()

    def take(self, n: int, dtype: np.dtype):
        key = (n, np.dtype(dtype))
        nbytes = n * key[1].itemsize
        with self._lock:
            bucket = self._buckets.setdefault(key, [])
            for flat in bucket:
                if sys.getrefcount(flat) <= self._FREE_REFS:
                    self.reused += 1
                    return flat
            flat = _device_array(n, key[1])
            self.new_buffers += 1
            if self.held_bytes + nbytes <= self.max_bytes:
                bucket.append(flat)
                self.held_bytes += nbytes
            return flat


def _allocate(n: int, dtype):
    record = current_record()
    if record is not None and record.pool is not None and n:
        return record.pool.take(n, dtype)
    return _device_array(n, dtype)


def upload(array: np.ndarray, what: str = "input") -> DeviceTensor:
    """Copy a host array to a new DeviceTensor (one counted h2d transfer)."""
    if not array.flags.c_contiguous:
        array = array.copy(order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    record = current_record()
    if record is not None and record.pool is not None and array.size:
        flat = record.pool.take(array.size, array.dtype)
        _copy_in(flat, array.reshape(-1))
    else:
        flat = _to_device(array.reshape(-1))
    _note("h2d", array.nbytes, what)
    return DeviceTensor(flat, array.shape, array.dtype)


def download(tensor: DeviceTensor, what: str = "input") -> np.ndarray:
    """The host copy of a DeviceTensor (one counted d2h transfer, the first time only)."""
    if tensor._host is None:
        host = _to_host(tensor.flat).reshape(tensor.shape)
        _note("d2h", tensor.nbytes, what)
        host.flags.writeable = False  # shared by every later reader
        tensor._host = host
    return tensor._host


def empty(shape, dtype) -> DeviceTensor:
    """An uninitialized DeviceTensor (from the executor's pool during a run), checked
    first against the tensor limit and what is left of the run's memory budget."""
    shape = tuple(int(d) for d in shape)
    check_allocation(shape, dtype, "device tensor")
    return DeviceTensor(_allocate(math.prod(shape), np.dtype(dtype)), shape, dtype)


# ---------------------------------------------------------------- what kernels call


def device(value, what: str = "input") -> DeviceTensor | None:
    """A kernel's tensor argument on the device: uploaded (counted) when on the host.

    The executor caches uploads of host arrays (initializers cross once per session).
    """
    value = unwrap(value)
    if value is None or isinstance(value, DeviceTensor):
        return value
    array = np.asarray(value)
    if not can_live_on_device(array):
        raise HostFallback(f"{what} is {array.dtype}, a dtype the device does not hold")
    record = current_record()
    if record is not None and record.uploads is not None:
        return record.uploads.upload(array, what)
    return upload(array, what)


def host(value, what: str = "input"):
    """A kernel's argument on the host (shapes, axes, indices checks): downloaded if needed."""
    value = unwrap(value)
    if isinstance(value, DeviceTensor):
        return download(value, what)
    return value


def need_dtype(tensor, allowed, what: str = "input") -> None:
    """Fall back to the host unless ``tensor``'s dtype is one this kernel handles."""
    if tensor is not None and np.dtype(tensor.dtype) not in allowed:
        names = ", ".join(sorted(str(d) for d in allowed))
        raise HostFallback(f"{what} is {tensor.dtype}; this cuda kernel takes {names}")


# ---------------------------------------------------------------- launching


def block_size(n: int, most: int = 256) -> int:
    """Threads per block for ``n`` independent items (a warp multiple, smaller when simulated:
    the simulator runs every thread as a Python thread)."""
    if simulated():
        most = min(most, 64)
    return max(1, min(most, ((n + 31) // 32) * 32))


_SIMULATOR_LOCK = threading.Lock()
#: seconds between GIL hand-offs while the simulator runs a kernel whose threads meet at
#: ``cuda.syncthreads()`` (Python's default is 5 ms): its main thread polls the block's
#: threads in a busy loop, so each simulated thread waits a whole interval for its turn at
#: every barrier. Kernels without barriers keep the default: for them the short interval
#: only adds hand-offs (timings: the top of docs/cuda.md)
SIMULATOR_SWITCH_INTERVAL = 0.001


def launch(kernel, blocks, threads, *args, barriers: bool = True) -> None:
    """``kernel[blocks, threads](*args)``; the one place kernels are started. While a run
    is being captured into a CUDA graph (``_graphs``) the launch goes to the capture.

    The simulator cannot run two launches at once (it swaps a kernel's ``cuda`` module per
    launch), so there launches from several threads take turns; ``barriers``: the kernel's
    threads call ``cuda.syncthreads()`` (see SIMULATOR_SWITCH_INTERVAL).
    """
    capture = capturing()
    if capture is not None:  # recorded into the graph, not run now
        capture.add(kernel, blocks, threads, args, barriers)
        return
    if simulated():
        fix_simulator()
        with _SIMULATOR_LOCK:
            interval = sys.getswitchinterval()
            if barriers:
                sys.setswitchinterval(min(interval, SIMULATOR_SWITCH_INTERVAL))
            try:
                kernel[blocks, threads](*args)
            finally:
                sys.setswitchinterval(interval)
    else:
        kernel[blocks, threads](*args)


def launch_1d(kernel, n: int, *args, most: int = 256) -> None:
    """One thread per item: ``ceil(n / threads)`` blocks (nothing to do for ``n == 0``); the
    threads never wait for each other."""
    if n <= 0:
        return
    threads = block_size(n, most)
    launch(kernel, (n + threads - 1) // threads, threads, *args, barriers=False)


def synchronize() -> None:
    from numba import cuda

    cuda.synchronize()


def shape_tuple(shape) -> tuple:
    """A shape or strides as a tuple of Python ints, at least one long (kernels index it)."""
    values = tuple(int(v) for v in shape)
    return values if values else (1,)
