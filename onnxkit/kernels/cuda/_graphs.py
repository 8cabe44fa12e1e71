"""Whole runs captured once into a CUDA graph and replayed: no per-node host cost.

A run of a model with static shapes launches the same kernels, with the same arguments,
on the same buffers every time; only the feeds' values change. So the second run of a
given feed signature (names, shapes, dtypes) is captured instead of run eagerly::

    feeds  -> copied into buffers of the graph's own pool   (on the graph's stream)
    run    -> every launch recorded, none executed           (``_device.launch``)
    graph  -> instantiated once, launched, outputs copied back

and every later run with that signature is three steps on one stream: copy the feeds in,
launch the graph, copy the outputs out. A run that a graph cannot replay — a copy
between host and device inside it (a host kernel reading device data, an array uploaded
each run), a sequence output, an error — is not captured: the executor notes why
(``CudaExecutor.graph_notes``) and runs that signature eagerly from then on.

Every buffer a captured launch touches is kept alive by the graph (its arguments are
held), and the pool the capture ran from is retired with it, so no other run can write
into the graph's buffers. Replays of one graph take turns (a lock): they share buffers.

On a real GPU the capture is the driver's stream capture (relaxed mode) on a stream that
does not synchronize with the legacy default stream, which eager runs use. Under numba's
simulator there is no stream capture; ``_Recorded`` replays the recorded launches one by
one instead, so the same executor logic runs in the simulator tests.
"""

from __future__ import annotations

import threading
import time
from contextlib import nullcontext

import numpy as np

from onnxkit.kernels.cuda import _device
from onnxkit.kernels.cuda._device import (CaptureBroken, DeviceTensor, can_live_on_device,
                                          set_capture, simulated, unwrap)


class Capture:
    """What a run being captured launched (arguments kept alive for the graph's life)."""

    def __init__(self, stream):
        self.stream = stream
        self.kept: list = []  # every launch's arguments: the device memory the graph uses
        self.launches: list = []  # (kernel, blocks, threads, args, barriers), simulator only
        self.checks: list = []  # (flag tensor, fail): error checks read after each replay
        self.count = 0

    def add(self, kernel, blocks, threads, args, barriers) -> None:
        self.count += 1
        self.kept.append(args)
        if self.stream is None:  # the simulator: replayed launch by launch
            self.launches.append((kernel, blocks, threads, args, barriers))
        else:
            kernel[blocks, threads, self.stream](*args)


class _Driver:
    """Stream capture through the CUDA driver API (``cuda.bindings``)."""

    def __init__(self):
        from cuda.bindings import driver
        from numba import cuda

        self.driver = driver
        handle = self._check(driver.cuStreamCreate(driver.CUstream_flags.CU_STREAM_NON_BLOCKING))
        self.handle = handle
        self.stream = cuda.external_stream(int(handle))  # numba launches and copies go here

    def _check(self, result):
        err, *rest = result if isinstance(result, tuple) else (result,)
        if int(err) != 0:
            name = self.driver.cuGetErrorName(err)[1]
            raise RuntimeError(f"CUDA driver call failed: {name.decode() if name else err}")
        return rest[0] if len(rest) == 1 else tuple(rest)

    def begin(self) -> Capture:
        from numba import cuda

        cuda.synchronize()  # the eager runs' uploads and kernels are done before capture
        mode = self.driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED
        self._check(self.driver.cuStreamBeginCapture(self.handle, mode))
        return Capture(self.stream)

    def end(self, capture: Capture, keep: bool):
        graph = self._check(self.driver.cuStreamEndCapture(self.handle))
        if not keep:
            if graph is not None:
                self.driver.cuGraphDestroy(graph)
            return None
        try:
            return self._check(self.driver.cuGraphInstantiate(graph, 0))
        finally:
            self.driver.cuGraphDestroy(graph)

    def launch(self, instance) -> None:
        self._check(self.driver.cuGraphLaunch(instance, self.handle))

    def timed_launch(self, instance):
        """Launch between two events; ``elapsed(events)`` after a synchronize: GPU ms."""
        from numba import cuda

        events = cuda.event(), cuda.event()
        events[0].record(self.stream)
        self.launch(instance)
        events[1].record(self.stream)
        return events

    def elapsed(self, events) -> float:
        from numba import cuda

        return float(cuda.event_elapsed_time(*events))

    def copy_in(self, flat, array: np.ndarray) -> None:
        flat.copy_to_device(array, stream=self.stream)

    def copy_out(self, flat) -> np.ndarray:
        return flat.copy_to_host(stream=self.stream)

    def synchronize(self) -> None:
        self.stream.synchronize()

    def release(self, instance) -> None:
        try:
            self.driver.cuGraphExecDestroy(instance)
        except Exception:  # the context may be gone at interpreter exit
            pass


class _Recorded:
    """The simulator's stand-in: the captured launches, replayed in order."""

    def begin(self) -> Capture:
        return Capture(None)

    def end(self, capture: Capture, keep: bool):
        return list(capture.launches) if keep else None

    def launch(self, instance) -> None:
        for kernel, blocks, threads, args, barriers in instance:
            _device.launch(kernel, blocks, threads, *args, barriers=barriers)

    def timed_launch(self, instance):
        self.launch(instance)
        return None

    def elapsed(self, events) -> float | None:
        return None  # the simulator has no GPU time to report

    def copy_in(self, flat, array: np.ndarray) -> None:
        flat.copy_to_device(array)

    def copy_out(self, flat) -> np.ndarray:
        return flat.copy_to_host()

    def synchronize(self) -> None:
        pass

    def release(self, instance) -> None:
        pass


def backend():
    """The capture backend for this process: the driver's, or the simulator's."""
    return _Recorded() if simulated() else _Driver()


class RunGraph:
    """One captured run: its feed buffers, what it returns, and the graph to launch."""

    def __init__(self, driver, instance, feeds: dict, outputs: list, keep: list, launches: int,
                 checks: list = ()):
        self.driver = driver
        self.instance = instance
        self.feeds = feeds  # name -> the flat device buffer the graph reads it from
        self.outputs = outputs  # DeviceTensor (read back each replay) or a host constant
        self.keep = keep  # the captured launches' arguments and the retired pool
        self.launches = launches
        self.checks = list(checks)  # kernels' error flags, read after each replay
        self.replays = 0
        self.capture_ms = None  # host time of the captured pass: an eager run's host cost
        self.timed = False  # time each replay on the GPU (``gpu_ms``): for benchmarks
        self.gpu_ms = None
        self._lock = threading.Lock()

    def replay(self, feeds: dict) -> list:
        """The outputs for ``feeds`` (fresh host arrays), by one launch of the graph."""
        with self._lock:
            for name, flat in self.feeds.items():
                array = np.ascontiguousarray(feeds[name]).reshape(-1)
                if array.size:
                    self.driver.copy_in(flat, array)
                    _device._note("h2d", array.nbytes, f"feed {name!r}")
            events = self.driver.timed_launch(self.instance) if self.timed else None
            if not self.timed:
                self.driver.launch(self.instance)
            out = [self._read(v) for v in self.outputs]
            self.driver.synchronize()
            if events is not None:
                self.gpu_ms = self.driver.elapsed(events)
            self.replays += 1
            for flag, fail in self.checks:
                if self.driver.copy_out(flag.flat)[0]:
                    _device._note("d2h", flag.nbytes, "error check")
                    try:
                        fail()  # raises, naming what was wrong
                    except Exception as exc:  # say which kernel, as an eager run's node would
                        if exc.args and isinstance(exc.args[0], str):
                            exc.args = (f"{fail.what}: {exc.args[0]}",) + exc.args[1:]
                        raise
        return out

    def _read(self, value):
        if isinstance(value, DeviceTensor):
            if value.size == 0:
                return np.empty(value.shape, value.dtype)
            _device._note("d2h", value.nbytes, "output")
            return self.driver.copy_out(value.flat)[:value.size].reshape(value.shape)
        return np.array(value, copy=True)

    def __del__(self):
        if self.instance is not None:
            self.driver.release(self.instance)


def signature(feeds: dict):
    """The feed signature a graph is kept for; None when a feed cannot live on the device."""
    key = []
    for name, value in sorted(feeds.items()):
        if not can_live_on_device(value):
            return None
        key.append((name, tuple(value.shape), value.dtype.str))
    return tuple(key)


def capture(driver, feeds: dict, run, pool) -> RunGraph | str:
    """``run`` (the plan over device feeds) captured from ``pool``: its graph, or why not.

    The feeds get buffers of the pool that each replay copies into; every buffer the
    captured launches touch is kept by the graph.
    """
    device_feeds, flats = {}, {}
    for name, value in feeds.items():
        array = np.ascontiguousarray(value)
        flats[name] = flat = pool.take(max(array.size, 1), array.dtype)
        device_feeds[name] = DeviceTensor(flat, array.shape, array.dtype)
    recording = driver.begin()
    set_capture(recording)
    broken = None
    start = time.perf_counter()
    try:
        with _no_frees():
            outputs = run(device_feeds)
    except CaptureBroken as why:
        broken = f"not captured: the run made {why}"
    finally:
        set_capture(None)
        instance = driver.end(recording, keep=broken is None)
    if broken is not None:
        return broken
    outputs = [unwrap(v) for v in outputs]
    if not all(isinstance(v, (DeviceTensor, np.ndarray)) for v in outputs):
        driver.release(instance)
        return "not captured: an output is a sequence, map or optional"
    graph = RunGraph(driver, instance, flats, outputs, [recording.kept, pool, device_feeds],
                     recording.count, recording.checks)
    graph.capture_ms = 1e3 * (time.perf_counter() - start)
    return graph


def same(a, b) -> bool:
    """Bit for bit (NaN equal to NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
        a, b, equal_nan=a.dtype.kind in "fc")


def _no_frees():
    """No device memory freed while a capture is under way (numba frees lazily; a free can
    synchronize the device)."""
    from numba import cuda

    defer = getattr(cuda, "defer_cleanup", None)
    return defer() if defer is not None else nullcontext()
