"""Record a run through the trace callback: what the graph viewer and the profile show.

    rec = TraceRecorder()
    sess.run(None, feeds, trace=rec)      # every node: kernel, time, input/output summaries
    onnxkit.show(sess, trace=rec)         # click a node: its tensors' shape, dtype and range
    Profile(rec)                          # time per node and per operator type

Values are summarized as they pass (shape, dtype, min, max, mean); ``keep_values=True``
also keeps the last value of every tensor, for ``TensorView``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from onnxkit.errors import listed, quoted
from onnxkit.runtime.trace import TraceEvent


@dataclass(frozen=True)
class Summary:
    """What a value looks like, without the value."""

    kind: str  # tensor | sequence | map | none | other
    dtype: str = ""
    shape: tuple = ()
    nbytes: int = 0
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    nan: int = 0
    length: int | None = None  # sequences and maps

    def __str__(self) -> str:
        if self.kind == "none":
            return "absent"
        if self.kind in ("sequence", "map"):
            return f"{self.kind} of {self.length}"
        if self.kind != "tensor":
            return self.dtype
        shape = "[" + ",".join(map(str, self.shape)) + "]"
        text = f"{self.dtype}{shape}"
        if self.min is not None:
            text += f" min={_num(self.min)} max={_num(self.max)} mean={_num(self.mean)}"
        if self.nan:
            text += f" nan={self.nan}"
        return text


def _num(x: float) -> str:
    return f"{x:.4g}"


def summarize(value: Any) -> Summary:
    if value is None:
        return Summary("none")
    if isinstance(value, list):
        return Summary("sequence", length=len(value), nbytes=sum(nbytes_of(v) for v in value))
    if isinstance(value, dict):
        return Summary("map", length=len(value))
    if not isinstance(value, np.ndarray):
        if hasattr(value, "__array__") and hasattr(value, "shape"):  # e.g. a device array
            value = np.asarray(value)
        else:
            return Summary("other", dtype=type(value).__name__)
    shape = tuple(int(d) for d in value.shape)
    dtype = str(value.dtype)
    stats = numeric_view(value)
    if stats is None or stats.size == 0:
        return Summary("tensor", dtype, shape, int(value.nbytes))
    finite = stats[np.isfinite(stats)] if stats.dtype.kind == "f" else stats
    nan = int(np.isnan(stats).sum()) if stats.dtype.kind == "f" else 0
    if finite.size == 0:
        return Summary("tensor", dtype, shape, int(value.nbytes), nan=nan)
    return Summary("tensor", dtype, shape, int(value.nbytes), float(finite.min()),
                   float(finite.max()), float(finite.mean(dtype=np.float64)), nan)


def numeric_view(value: np.ndarray) -> np.ndarray | None:
    """``value`` as float64 or int64 for statistics; None for strings and other objects."""
    kind = value.dtype.kind
    if kind == "b":
        return value.astype(np.int64)
    if kind in "iu":
        return value.astype(np.int64) if kind == "i" else value.astype(np.float64)
    if kind == "f" and value.dtype.itemsize >= 2 and value.dtype.name in ("float16", "float32", "float64"):
        return value.astype(np.float64)
    if kind == "c":
        return np.abs(value).astype(np.float64)
    try:  # ml_dtypes (bfloat16, float8, int4...) convert through float32
        return value.astype(np.float32).astype(np.float64)
    except (TypeError, ValueError):
        return None


def nbytes_of(value: Any) -> int:
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, list):
        return sum(nbytes_of(v) for v in value)
    return 0


@dataclass(frozen=True)
class Record:
    """One node execution, kept small."""

    step: int
    path: str
    name: str
    op_type: str
    domain: str
    kernel: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    elapsed: float
    input_summaries: tuple[Summary, ...] = ()
    output_summaries: tuple[Summary, ...] = ()

    @property
    def key(self) -> tuple[str, tuple[str, ...]]:
        """Which node this was: outputs are unique inside one graph."""
        return (self.path, self.outputs)

    @property
    def qualified_op(self) -> str:
        return self.op_type if self.domain in ("", "ai.onnx") else f"{self.domain}::{self.op_type}"

    @classmethod
    def of(cls, event: TraceEvent, step: int = 0, summaries: bool = True) -> "Record":
        node = event.node
        ins = tuple(summarize(v) for v in event.inputs) if summaries else ()
        outs = tuple(summarize(v) for v in event.outputs) if summaries else ()
        return cls(step, event.path, node.name, node.op_type, node.domain, event.kernel,
                   tuple(node.input), tuple(node.output), float(event.elapsed), ins, outs)


class TraceRecorder:
    """A trace callback that keeps a ``Record`` per node execution (and values, if asked).

    ``max_records`` bounds memory for long loops: later executions are still timed and
    counted by node (``by_node``), but no longer kept one by one.
    """

    def __init__(self, keep_values: bool = False, summaries: bool = True,
                 max_records: int = 100_000):
        self.keep_values = keep_values
        self.summaries = summaries
        self.max_records = max_records
        self.records: list[Record] = []
        self.values: dict[tuple[str, str], Any] = {}  # (graph path, value name) -> last value
        self.dropped = 0
        self.steps = 0
        self._by_node: dict[tuple, list[Record]] = {}
        self._counts: dict[tuple, int] = {}
        self._times: dict[tuple, float] = {}

    def __call__(self, event: TraceEvent) -> None:
        rec = Record.of(event, self.steps, self.summaries)
        self.steps += 1
        if len(self.records) < self.max_records:
            self.records.append(rec)
        else:
            self.dropped += 1
        runs = self._by_node.setdefault(rec.key, [])
        if len(runs) < 2:
            runs.append(rec)
        else:  # keep the first and the latest execution of each node
            runs[1] = rec
        self._counts[rec.key] = self._counts.get(rec.key, 0) + 1
        self._times[rec.key] = self._times.get(rec.key, 0.0) + rec.elapsed
        if self.keep_values:
            for name, value in zip(event.node.input, event.inputs):
                if name:
                    self.values[(event.path, name)] = value
            for name, value in zip(event.node.output, event.outputs):
                if name:
                    self.values[(event.path, name)] = value

    def clear(self) -> None:
        self.records.clear()
        self.values.clear()
        self._by_node.clear()
        self._counts.clear()
        self._times.clear()
        self.dropped = 0
        self.steps = 0

    def calls(self, key: tuple) -> int:
        return self._counts.get(key, 0)

    def seconds(self, key: tuple) -> float:
        return self._times.get(key, 0.0)

    def last(self, key: tuple) -> Record | None:
        runs = self._by_node.get(key)
        return runs[-1] if runs else None

    def keys(self) -> list[tuple]:
        return list(self._by_node)

    def value(self, name: str, path: str = "") -> Any:
        """The last value named ``name`` (needs ``keep_values=True``)."""
        if not self.keep_values:
            raise ValueError("this recorder keeps no values: create it with keep_values=True")
        try:
            return self.values[(path, name)]
        except KeyError:
            known = [n for p, n in self.values if p == path]
            raise KeyError(f"no value {quoted(name)} in the trace (graph {quoted(path or 'main')}); "
                           f"values seen: {listed(known) or 'none'}") from None

    def __len__(self) -> int:
        return self.steps

    def __bool__(self) -> bool:  # an empty recorder is still a callback (``trace or default``)
        return True

    def __repr__(self) -> str:
        return (f"<onnxkit TraceRecorder: {self.steps} node executions, "
                f"{len(self._by_node)} distinct nodes>")
