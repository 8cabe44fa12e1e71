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


def check_feeds(declared: list[ValueInfoProto], optional: set[str],
                feeds: Mapping[str, Any]) -> dict[str, Any]:
    """Validated feeds: every required input present, known names only, dtypes and ranks right."""
    if not isinstance(feeds, Mapping):
        raise InputError(f"input_feed must be a dict of name -> value, got {type(feeds).__name__}")
    by_name = {vi.name: vi for vi in declared}
    unknown = [n for n in feeds if n not in by_name]
    if unknown:
        raise InputError(
            f"unknown input name(s) {', '.join(map(repr, unknown))}; the model's inputs are: "
            f"{', '.join(repr(vi.name) for vi in declared if vi.name not in optional)}"
        )
    missing = [vi.name for vi in declared if vi.name not in feeds and vi.name not in optional]
    if missing:
        raise InputError(f"missing input(s) {', '.join(map(repr, missing))}: give a value for each")
    return {name: check_value(by_name[name], value) for name, value in feeds.items()}


def check_value(vi: ValueInfoProto, value: Any) -> Any:
    kind = vi.type.WhichOneof("value")
    if kind == "tensor_type":
        return _check_tensor(vi, value)
    if kind == "sequence_type" and not isinstance(value, (list, tuple)):
        raise InputError(f"input {vi.name!r} expects {type_string(vi.type)}, got {describe_value(value)}")
    if kind == "sequence_type":
        return list(value)
    if kind == "map_type" and not isinstance(value, dict):
        raise InputError(f"input {vi.name!r} expects {type_string(vi.type)}, got {describe_value(value)}")
    return value


def _check_tensor(vi: ValueInfoProto, value: Any) -> np.ndarray:
    tt = vi.type.tensor_type
    if not isinstance(value, np.ndarray):
        if isinstance(value, (list, tuple, dict)) or value is None:
            raise InputError(
                f"input {vi.name!r} expects {type_string(vi.type)} as a numpy array, "
                f"got {describe_value(value)}"
            )
        value = np.asarray(value)
    if tt.elem_type != TensorProto.UNDEFINED:
        try:
            expected = np_dtype(tt.elem_type)
        except (KeyError, ValueError, TypeError):
            raise InputError(f"input {vi.name!r} is declared as {type_string(vi.type)}, an element "
                             f"type onnxkit cannot hold") from None
        if expected == np.dtype(object) and value.dtype.kind in "OUS":
            value = value.astype(object)
        elif value.dtype != expected:
            raise InputError(
                f"input {vi.name!r} expects {type_string(vi.type)} ({expected}), got an array of "
                f"{value.dtype}; convert it with .astype(np.{expected})"
            )
    dims = shape_of(vi.type)
    if dims is not None:
        if value.ndim != len(dims):
            raise InputError(
                f"input {vi.name!r} expects rank {len(dims)} (shape {dims}), got rank "
                f"{value.ndim} (shape {list(value.shape)})"
            )
        for axis, (want, got) in enumerate(zip(dims, value.shape)):
            if isinstance(want, int) and want > 0 and want != got:
                raise InputError(
                    f"input {vi.name!r} expects dimension {axis} to be {want} (shape {dims}), "
                    f"got shape {list(value.shape)}"
                )
    return value
