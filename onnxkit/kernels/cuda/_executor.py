"""The ``cuda`` executor: tensors stay in GPU memory from node to node.

    Session.run(feeds):
        feeds -> to_executor: each uploaded once (h2d, counted as "feeds")
        each node -> invoke(kernel, args):
            a cuda kernel, some input on the device  -> runs on the device; host inputs
                it needs there are uploaded (counted; an array crosses once while it
                lives, so initializers cross once per session)
            a cuda kernel, every input on the host   -> its reference kernel on the host,
                nothing to copy (shape arithmetic, constants), except for the
                DEVICE_SOURCES (ConstantOfShape), whose outputs are data for the GPU
            a cuda kernel that declines (HostFallback: a dtype or attribute it does not
            take), or no cuda kernel                 -> device inputs downloaded (counted),
                the reference kernel runs on the host, and its outputs go back up
                (counted) when some input came from the device
        outputs -> to_host: each downloaded once (d2h, counted as "outputs")

Each call leaves a ``NodeRecord`` (placement, reason, transfers); ``last_record()`` is
the one a trace callback reads right after its node ran (``DeviceProfile`` does), and
``stats()`` sums them up. Context kernels that run on the host (If, Loop, Scan) see host
values, and their subgraph outputs are downloaded for them.
"""

from __future__ import annotations

import threading
import weakref
from collections import Counter
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from onnxkit.errors import KernelError, OnnxkitError
from onnxkit.kernels.cuda import _graphs
from onnxkit.kernels.cuda._device import (DevicePool, DeviceTensor, HostFallback, NodeRecord,
                                          _note, _records, _to_host, can_live_on_device,
                                          describe, download, synchronize, unwrap, upload)
from onnxkit.ops.registry import Kernel
from onnxkit.runtime.context import KernelContext
from onnxkit.runtime.executors import Executor

PHASES = ("feeds", "nodes", "outputs")


class UploadCache:
    """Device copies of host arrays, one per array object for as long as it lives.

    Values are never written after they are made (the kernel contract), so the copy of
    a live array stays right. Dead arrays are forgotten through weak references.
    """

    def __init__(self):
        self._entries: dict[int, tuple] = {}
        self._dead: list[int] = []
        self._lock = threading.Lock()

    def upload(self, array: np.ndarray, what: str) -> DeviceTensor:
        key = id(array)
        with self._lock:
            self._purge()
            entry = self._entries.get(key)
        if entry is not None and entry[0]() is array:
            return entry[1]
        tensor = upload(array, what)
        try:
            ref = weakref.ref(array, lambda _ref, key=key, dead=self._dead: dead.append(key))
        except TypeError:
            return tensor
        with self._lock:
            self._entries[key] = (ref, tensor)
        return tensor

    def _purge(self) -> None:
        while self._dead:
            key = self._dead.pop()
            entry = self._entries.get(key)
            if entry is not None and entry[0]() is None:
                del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)


@dataclass
class _HostContext(KernelContext):
    """``ctx`` of a context kernel running on the host: subgraph outputs come back as host
    arrays (downloads counted on the node that runs the subgraph)."""

    executor: Any = None

    def run(self, body, inputs=()) -> list:
        outputs = super().run(body, inputs)
        return [self.executor._host_value(v, f"subgraph output {i}") for i, v in enumerate(outputs)]


class CudaExecutor(Executor):
    """Runs cuda kernels on device tensors, everything else on the host, counting copies."""

    name = "cuda"

    def __init__(self, registries, reference, synchronize_each_node: bool = True,
                 sources: frozenset = frozenset(), graphs: bool = True):
        super().__init__(registries)
        # replay static-shape runs as CUDA graphs (``_graphs``); never while each node is
        # synchronized for honest per-node times
        self.graphs = graphs and not synchronize_each_node
        self._graphs: dict = {}  # feed signature -> RunGraph, or the reason it has none
        self._runs: Counter = Counter()  # eager runs per feed signature
        self._graph_lock = threading.Lock()
        self._graph_driver = None
        self.sources = sources  # (domain, op_type) run on the device with host inputs
        self.reference = reference  # the registry host fallbacks take kernels from
        self.synchronize_each_node = synchronize_each_node  # honest per-node times
        self.uploads = UploadCache()
        self.pool = DevicePool()
        self._lock = threading.Lock()
        self._local = threading.local()
        self.reset_stats()

    # ------------------------------------------------------------ Executor interface

    def invoke(self, kernel: Kernel, args: list, attrs: dict, ctx) -> Any:
        record = NodeRecord(kernel.qualified_name, uploads=self.uploads, pool=self._pool())
        stack = _records()
        stack.append(record)
        try:
            result = self._dispatch(kernel, [unwrap(a) for a in args], attrs, ctx, record)
        finally:
            stack.pop()
            self._local.last = record
            self._add(record, "nodes")
        return result

    def to_executor(self, value):
        """A feed: uploaded now (not cached: the caller may refill the same array)."""
        if can_live_on_device(value):
            return self._outside("feeds", lambda: upload(value, "feed"))
        return value

    def to_host(self, value):
        """An output: a fresh host array (downloaded unless a host copy already exists)."""
        value = unwrap(value)
        if isinstance(value, DeviceTensor):
            return self._outside("outputs", lambda: _fresh_host(value))
        if isinstance(value, list):
            return [self.to_host(v) for v in value]
        if isinstance(value, dict):
            return {k: self.to_host(v) for k, v in value.items()}
        return value

    # ------------------------------------------------------------ whole runs

    def execute(self, feeds: dict, run, replayable: bool = True) -> list:
        """The outputs of one run: eager the first time a feed signature is seen, captured
        into a CUDA graph the second time, replayed from then on (``_graphs``)."""
        if not (self.graphs and replayable):
            return super().execute(feeds, run, replayable)
        key = _graphs.signature(feeds)
        if key is None:
            return super().execute(feeds, run, replayable)
        graph = self._graphs.get(key)
        if isinstance(graph, _graphs.RunGraph):
            return self._outside("graph", lambda: graph.replay(feeds))
        with self._graph_lock:
            self._runs[key] += 1
            capture = graph is None and self._runs[key] >= 2
            if capture:
                self._graphs[key] = "being captured"
        if not capture:
            return super().execute(feeds, run, replayable)
        try:
            graph, outputs = self._capture(feeds, run)
        except Exception as exc:  # no graph: this signature runs eagerly from now on
            self._graphs[key] = f"not captured: {type(exc).__name__}: {exc}"
            return super().execute(feeds, run, replayable)
        self._graphs[key] = graph  # a RunGraph, or why not (then eager from now on)
        return outputs

    def _capture(self, feeds: dict, run):
        """(RunGraph, or why there is none; this run's outputs).

        The run goes eagerly once more, from a pool of its own (so every buffer the capture
        needs is allocated before it; its outputs are this run's), then is captured from
        that pool, and the graph's first replay must give the eager outputs bit for bit.
        """
        if self._graph_driver is None:
            self._graph_driver = _graphs.backend()
        pool = DevicePool()
        self._local.pool = pool
        try:
            eager = [self.to_host(v) for v in super().execute(feeds, run, True)]
            graph = _graphs.capture(self._graph_driver, feeds, run, pool)
        finally:
            self._local.pool = None
        if isinstance(graph, _graphs.RunGraph):
            replayed = self._outside("graph", lambda: graph.replay(feeds))
            if not all(_graphs.same(a, b) for a, b in zip(eager, replayed)):
                graph = "not captured: the graph's replay disagreed with the eager run"
        return graph, eager

    def graphs_made(self) -> list:
        """The RunGraphs of this executor (their ``launches``, ``replays``, ``capture_ms``,
        and with ``timed`` set, the GPU time of the last replay, ``gpu_ms``)."""
        return [g for g in self._graphs.values() if isinstance(g, _graphs.RunGraph)]

    def graph_notes(self) -> dict:
        """Per feed signature ((name, shape, dtype), ...): how many launches its graph
        replays and how often it ran, or why it runs eagerly."""
        return {key: (f"CUDA graph of {g.launches} launches, replayed {g.replays} times"
                      if isinstance(g, _graphs.RunGraph) else g)
                for key, g in self._graphs.items()}

    # ------------------------------------------------------------ where a node runs

    def _dispatch(self, kernel: Kernel, args: list, attrs: dict, ctx, record: NodeRecord):
        if kernel.registry == "model-function":  # its body's nodes come through invoke
            return kernel.fn(*args, ctx=ctx, **attrs)
        host_kernel = kernel
        if kernel.registry == self.registries[0].name:
            if (any(isinstance(a, DeviceTensor) for a in args)
                    or (kernel.domain, kernel.op_type) in self.sources):
                try:
                    result = self._call(kernel, args, attrs, ctx, record)
                    if self.synchronize_each_node:
                        synchronize()
                    return result
                except HostFallback as why:
                    record.reason = str(why)
            else:
                record.reason = "no input on the device"
            host_kernel = self.reference.get(kernel.domain, kernel.op_type, kernel.since_version)
            if host_kernel is None:
                raise KernelError(f"{kernel.qualified_name} has no reference kernel to run on "
                                  f"the host ({record.reason})")
        elif not record.reason:
            record.reason = "no cuda kernel"
        record.placement = "host"
        left_device = any(isinstance(a, DeviceTensor) for a in args)
        host_args = [self._host_value(a, f"input {i}") for i, a in enumerate(args)]
        if ctx is not None:
            ctx = _HostContext(**{f.name: getattr(ctx, f.name) for f in fields(ctx)}, executor=self)
        result = self._call(host_kernel, host_args, attrs, ctx, record)
        if not left_device:  # shape arithmetic, constants: they stay where they were made
            return result
        if isinstance(result, tuple):  # the data came from the device: send it back up
            return tuple(_back_up(r, f"output {i}") for i, r in enumerate(result))
        return _back_up(result, "output 0")

    def _call(self, kernel: Kernel, args: list, attrs: dict, ctx, record: NodeRecord):
        try:
            if kernel.context:
                return kernel.fn(*args, ctx=ctx, **attrs)
            return kernel.fn(*args, **attrs)
        except HostFallback:
            raise
        except KernelError as exc:  # bad input: say where it ran and what it got
            if exc.args and isinstance(exc.args[0], str):
                exc.args = (f"{exc.args[0]} (inputs [{_shown(args)}] on the {record.placement})",
                            ) + exc.args[1:]
            raise
        except OnnxkitError:
            raise
        except Exception as exc:  # name where it ran and what it got (device-aware)
            shown = _shown(args)
            raise KernelError(
                f"kernel {kernel.qualified_name} failed on the {record.placement} with inputs "
                f"[{shown}]: {type(exc).__name__}: {exc}") from exc

    def _host_value(self, value, what: str):
        value = unwrap(value)
        if isinstance(value, DeviceTensor):
            return download(value, what)
        if isinstance(value, list):
            return [self._host_value(v, what) for v in value]
        return value

    # ------------------------------------------------------------ counting

    def _outside(self, phase: str, move):
        record = NodeRecord(f"<{phase}>", pool=self._pool())
        stack = _records()
        stack.append(record)
        try:
            return move()
        finally:
            stack.pop()
            self._add(record, phase)

    def _add(self, record: NodeRecord, phase: str) -> None:
        with self._lock:
            totals = self._totals
            for t in record.transfers:
                totals[f"{t.direction}_count"] += 1
                totals[f"{t.direction}_bytes"] += t.nbytes
                totals[f"{phase}_{t.direction}_bytes"] += t.nbytes
            if phase == "nodes":
                totals[f"{record.placement}_nodes"] += 1
                if record.placement == "host":
                    self._host_reasons[(record.kernel, record.reason)] += 1

    def _pool(self) -> DevicePool:
        """The pool this thread's run takes buffers from (a capture's own, or the session's)."""
        return getattr(self._local, "pool", None) or self.pool

    def owns(self, value) -> bool:
        return isinstance(value, DeviceTensor)

    def trace_extra(self):
        return self.last_record()

    def last_record(self) -> NodeRecord | None:
        """The record of the node this thread ran last (read it from a trace callback)."""
        return getattr(self._local, "last", None)

    def stats(self) -> dict:
        """Transfers and placements since the last ``reset_stats``.

        ``h2d_count / h2d_bytes / d2h_count / d2h_bytes``: every copy; ``feeds_h2d_bytes``,
        ``nodes_h2d_bytes``, ``nodes_d2h_bytes``, ``outputs_d2h_bytes``: by phase;
        ``cuda_nodes`` / ``host_nodes``: kernel calls; ``host_kernels``: {(kernel,
        reason): calls} for the calls that ran on the host.
        """
        with self._lock:
            out = {k: self._totals[k] for k in _STAT_KEYS}
            out["host_kernels"] = dict(self._host_reasons)
        return out

    def reset_stats(self) -> None:
        with self._lock:
            self._totals: Counter = Counter()
            self._host_reasons: Counter = Counter()

    def __repr__(self) -> str:
        return f"<CudaExecutor on {device_name()}>"


_STAT_KEYS = ("h2d_count", "h2d_bytes", "d2h_count", "d2h_bytes", "feeds_h2d_bytes",
              "nodes_h2d_bytes", "nodes_d2h_bytes", "outputs_d2h_bytes", "cuda_nodes",
              "host_nodes")


def _shown(args) -> str:
    return ", ".join(describe(a) if a is not None else "<absent>" for a in args)


def _back_up(value, what: str):
    """A host kernel's output, uploaded (counted) when the device can hold it."""
    if can_live_on_device(value):
        return upload(value, what)
    return value


def _fresh_host(tensor: DeviceTensor) -> np.ndarray:
    """A writable host copy for the caller (no transfer when one is already on the host)."""
    if tensor._host is not None:
        return tensor._host.copy()
    host = _to_host(tensor.flat).reshape(tensor.shape)
    _note("d2h", tensor.nbytes, "output")
    return host


def device_name() -> str:
    from numba import config, cuda

    if config.ENABLE_CUDASIM:
        return "the CUDA simulator"
    name = cuda.get_current_device().name
    return name.decode() if isinstance(name, bytes) else str(name)
