"""Check what a user passes to ``Session.run`` against what the graph declares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
from onnx import TensorProto, ValueInfoProto

from onnxkit.errors import InputError
from onnxkit.runtime.values import describe_value, np_dtype, shape_of, type_string


@dataclass(frozen=True)
class NodeArg:
    """An input or output as onnxruntime describes it: name, shape and type string."""

    name: str
    shape: list | None
    type: str

    @classmethod
    def from_value_info(cls, vi: ValueInfoProto) -> "NodeArg":
        return cls(vi.name, shape_of(vi.type), type_string(vi.type))


class FeedChecker:
    """Checks what a user passes to ``Session.run`` (every required input present, known
    names only, dtypes and ranks right), with what it reads of the declared inputs worked
    out once: a Session builds one, so a run does not walk the inputs' protos again
    (5.4 -> ~1.5 us per run for one input, on the development VM)."""

    def __init__(self, declared: list[ValueInfoProto], optional: set[str]):
        self._expected = {vi.name: _Expected(vi) for vi in declared}
        self._required = [vi.name for vi in declared if vi.name not in optional]
        self._shown = ", ".join(repr(vi.name) for vi in declared if vi.name not in optional)

    def __call__(self, feeds: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(feeds, Mapping):
            raise InputError("input_feed must be a dict of name -> value, got "
                             f"{type(feeds).__name__}")
        expected = self._expected
        unknown = [n for n in feeds if n not in expected]
        if unknown:
            raise InputError(f"unknown input name(s) {', '.join(map(repr, unknown))}; the "
                             f"model's inputs are: {self._shown}")
        missing = [n for n in self._required if n not in feeds]
        if missing:
            raise InputError(f"missing input(s) {', '.join(map(repr, missing))}: give a value "
                             "for each")
        return {name: expected[name].check(value) for name, value in feeds.items()}


class _Expected:
    """What one declared input accepts: its kind, element dtype and dims, read once."""

    def __init__(self, vi: ValueInfoProto):
        self.name, self.kind, self.type = vi.name, vi.type.WhichOneof("value"), type_string(vi.type)
        self.dtype, self.bad_elem, self.dims = None, False, None
        if self.kind == "tensor_type":
            elem = vi.type.tensor_type.elem_type
            if elem != TensorProto.UNDEFINED:
                try:
                    self.dtype = np_dtype(elem)
                except (KeyError, ValueError, TypeError):
                    self.bad_elem = True
            self.dims = shape_of(vi.type)

    def check(self, value: Any) -> Any:
        if self.kind == "tensor_type":
            return self._tensor(value)
        if self.kind == "sequence_type" and not isinstance(value, (list, tuple)):
            raise InputError(f"input {self.name!r} expects {self.type}, got "
                             f"{describe_value(value)}")
        if self.kind == "sequence_type":
            return list(value)
        if self.kind == "map_type" and not isinstance(value, dict):
            raise InputError(f"input {self.name!r} expects {self.type}, got "
                             f"{describe_value(value)}")
        return value

    def _tensor(self, value: Any) -> np.ndarray:
        if not isinstance(value, np.ndarray):
            if isinstance(value, (list, tuple, dict)) or value is None:
                raise InputError(f"input {self.name!r} expects {self.type} as a numpy array, "
                                 f"got {describe_value(value)}")
            value = np.asarray(value)
        if self.bad_elem:
            raise InputError(f"input {self.name!r} is declared as {self.type}, an element "
                             f"type onnxkit cannot hold")
        expected = self.dtype
        if expected is not None:
            if expected == np.dtype(object) and value.dtype.kind in "OUS":
                value = value.astype(object)
            elif value.dtype != expected:
                raise InputError(
                    f"input {self.name!r} expects {self.type} ({expected}), got an array of "
                    f"{value.dtype}; convert it with .astype(np.{expected})"
                )
        dims = self.dims
        if dims is not None:
            if value.ndim != len(dims):
                raise InputError(
                    f"input {self.name!r} expects rank {len(dims)} (shape {dims}), got rank "
                    f"{value.ndim} (shape {list(value.shape)})"
                )
            for axis, (want, got) in enumerate(zip(dims, value.shape)):
                if isinstance(want, int) and want > 0 and want != got:
                    raise InputError(
                        f"input {self.name!r} expects dimension {axis} to be {want} (shape "
                        f"{dims}), got shape {list(value.shape)}"
                    )
        return value
