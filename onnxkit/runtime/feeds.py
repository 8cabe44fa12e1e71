"""Check what a user passes to ``Session.run`` against what the graph declares.

Each declared input type becomes a checker, built once per Session:

| declared    | accepted                                                               |
|-------------|------------------------------------------------------------------------|
| tensor(T)   | a numpy array of T (scalars become arrays), of the declared rank and dims |
| seq(E)      | a list (or tuple) whose every element E accepts (tensors: numpy arrays) |
| map(K, V)   | a dict with K keys (int / numpy integer, or str) and values V accepts; |
|             | a tensor(T) value may also be a Python or numpy scalar of T's kind     |
| optional(E) | None, or what E accepts                                                |

A bad element is named by its place, e.g. ``s[2]`` or ``m['a']``, with what was given
and what is accepted.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any

import numpy as np
from onnx import TensorProto, TypeProto, ValueInfoProto

from onnxkit.errors import InputError, listed, quoted, shown
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
    names only, each value of its declared kind, element type and rank), with what it
    reads of the declared inputs worked out once: a Session builds one, so a run does not
    walk the inputs' protos again."""

    def __init__(self, declared: list[ValueInfoProto], optional: set[str]):
        self._expected = {vi.name: _checker(vi.type, vi.name) for vi in declared}
        self._required = [vi.name for vi in declared if vi.name not in optional]
        self._shown = listed(vi.name for vi in declared if vi.name not in optional)

    def __call__(self, feeds: Mapping[str, Any]) -> dict[str, Any]:
        if type(feeds) is not dict and not isinstance(feeds, Mapping):
            raise InputError("input_feed must be a dict of name -> value, got "
                             f"{type(feeds).__name__}")
        expected = self._expected
        unknown = [n for n in feeds if n not in expected]
        if unknown:
            raise InputError(f"unknown input name(s) {listed(map(str, unknown))}; the "
                             f"model's inputs are: {self._shown}")
        missing = [n for n in self._required if n not in feeds]
        if missing:
            raise InputError(f"missing input(s) {listed(missing)}: give a value "
                             "for each")
        return {name: expected[name].check(value, None) for name, value in feeds.items()}


class _Place:
    """Where a nested value sits: the input, its declared type and the path to it."""

    __slots__ = ("name", "type", "path")

    def __init__(self, name: str, type_: str, path: str = ""):
        self.name, self.type, self.path = name, type_, path

    def at(self, step: str) -> "_Place":
        return _Place(self.name, self.type, self.path + step)

    def error(self, problem: str) -> InputError:
        return InputError(f"input {quoted(self.name)} expects {self.type}: "
                          f"{shown(self.name)}{self.path} {problem}")


def _checker(tp: TypeProto, name: str):
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        return _Tensor(tp, name)
    if kind == "sequence_type":
        return _Sequence(tp, name)
    if kind == "map_type":
        return _Map(tp, name)
    if kind == "optional_type":
        return _Optional(tp, name)
    return _Anything()  # sparse tensors, or an input declared without a type


class _Anything:
    def check(self, value: Any, place: _Place | None) -> Any:
        return value


class _Tensor:
    """tensor(T): its element dtype and dims, read once."""

    def __init__(self, tp: TypeProto, name: str):
        self.name, self.type = name, type_string(tp)
        self.dtype, self.bad_elem = None, False
        elem = tp.tensor_type.elem_type
        if elem != TensorProto.UNDEFINED:
            try:
                self.dtype = np_dtype(elem)
            except (KeyError, ValueError, TypeError):
                self.bad_elem = True
        self.dims = shape_of(tp)
        self.strings = self.dtype == np.dtype(object)
        # the shape, where every dimension is a fixed size (one comparison per run)
        fixed = self.dims is not None and all(isinstance(d, int) and d > 0 for d in self.dims)
        self.shape = tuple(self.dims) if fixed else None
        self.accepted = "a numpy array" + (f" of {self.dtype}" if self.dtype is not None else "")

    def check(self, value: Any, place: _Place | None) -> np.ndarray:
        if place is not None:
            return self._element(value, place)
        if not isinstance(value, np.ndarray):
            if isinstance(value, (list, tuple, dict)) or value is None:
                raise InputError(f"input {quoted(self.name)} expects {self.type} as a numpy array, "
                                 f"got {describe_value(value)}")
            value = np.asarray(value)
        if self.bad_elem:
            raise InputError(f"input {quoted(self.name)} is declared as {self.type}, an element "
                             f"type onnxkit cannot hold")
        value, wrong = self._fit(value)
        if wrong is None:
            return value
        kind, axis, want = wrong
        dims, name = self.dims, quoted(self.name)
        if kind == "dtype":
            raise InputError(f"input {name} expects {self.type} ({want}), got an array of "
                             f"{value.dtype}; convert it with .astype(np.{want})")
        if kind == "rank":
            raise InputError(f"input {name} expects rank {len(dims)} (shape {dims}), got rank "
                             f"{value.ndim} (shape {list(value.shape)})")
        raise InputError(f"input {name} expects dimension {axis} to be {want} (shape "
                         f"{dims}), got shape {list(value.shape)}")

    def _fit(self, value: np.ndarray) -> tuple[np.ndarray, tuple | None]:
        """``value`` (strings as object arrays) and what does not fit the declared type:
        None, or ("dtype", None, dtype) / ("rank", None, None) / ("dim", axis, size)."""
        expected = self.dtype
        if value.dtype is expected and value.shape == self.shape:
            return value, None  # the common case: the declared dtype and fixed shape
        if expected is not None:
            if self.strings and value.dtype.kind in "OUS":
                value = value.astype(object)
            elif value.dtype != expected:
                return value, ("dtype", None, expected)
        dims = self.dims
        if dims is not None:
            if value.ndim != len(dims):
                return value, ("rank", None, None)
            for axis, (want, got) in enumerate(zip(dims, value.shape)):
                if isinstance(want, int) and want > 0 and want != got:
                    return value, ("dim", axis, want)
        return value, None

    def _element(self, value: Any, place: _Place) -> np.ndarray:
        """A tensor inside a sequence, map or optional: a numpy array (or numpy scalar)."""
        if isinstance(value, np.generic):
            value = np.asarray(value)
        if not isinstance(value, np.ndarray):
            raise place.error(f"is {_described(value)}, not {self.accepted}")
        if self.bad_elem:
            raise place.error(f"cannot be held: {self.type} is an element type onnxkit "
                              f"cannot hold")
        value, wrong = self._fit(value)
        if wrong is None:
            return value
        kind, axis, want = wrong
        dims, shape = self.dims, list(value.shape)
        if kind == "dtype":
            raise place.error(f"is an array of {value.dtype}, not {want}; convert it "
                              f"with .astype(np.{want})")
        if kind == "rank":
            raise place.error(f"has rank {value.ndim} (shape {shape}); the rank must be "
                              f"{len(dims)} (shape {dims})")
        raise place.error(f"has shape {shape}; dimension {axis} must be {want} (shape {dims})")

    def scalar(self, value: Any, place: _Place) -> Any:
        """A map's value: a Python or numpy scalar of T's kind, or an array of T, as given."""
        if isinstance(value, np.ndarray):
            return self._element(value, place)
        accepts, described = _SCALARS.get(None if self.dtype is None else self.dtype.kind,
                                          _SCALARS[None])
        if accepts(value):
            return value
        raise place.error(f"is {_described(value)}, not {described} for {self.type} (or "
                          f"{self.accepted})")


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_number(v) -> bool:
    return _is_int(v) or isinstance(v, (float, np.floating))


# a map value's numpy kind -> (what it accepts as a scalar, how a message says so)
_SCALARS = {
    None: (lambda v: True, "a value"),
    "i": (_is_int, "an int or numpy integer"),
    "u": (_is_int, "an int or numpy integer"),
    "f": (_is_number, "a number (int, float or numpy scalar)"),
    "V": (_is_number, "a number (int, float or numpy scalar)"),
    "b": (lambda v: isinstance(v, (bool, np.bool_)), "a bool"),
    "O": (lambda v: isinstance(v, str), "a str"),
}


class _Sequence:
    """seq(E): a list whose every element E accepts."""

    def __init__(self, tp: TypeProto, name: str):
        self.name, self.type = name, type_string(tp)
        self.elem = _checker(tp.sequence_type.elem_type, name)

    def check(self, value: Any, place: _Place | None) -> list:
        if not isinstance(value, (list, tuple)):
            if place is None:
                raise InputError(f"input {quoted(self.name)} expects {self.type} as a list, got "
                                 f"{_described(value)}")
            raise place.error(f"is {_described(value)}, not a list")
        place = place or _Place(self.name, self.type)
        return [self.elem.check(v, place.at(f"[{i}]")) for i, v in enumerate(value)]


class _Map:
    """map(K, V): a dict whose keys are K and whose values V accepts."""

    def __init__(self, tp: TypeProto, name: str):
        self.name, self.type = name, type_string(tp)
        key = tp.map_type.key_type
        self.string_keys = key == TensorProto.STRING
        self.key_name = "str" if self.string_keys else (
            f"{np_dtype(key)} (int or numpy integer)" if key != TensorProto.UNDEFINED else None)
        self.value = _checker(tp.map_type.value_type, name)

    def check(self, value: Any, place: _Place | None) -> dict:
        if not isinstance(value, dict):
            if place is None:
                raise InputError(f"input {quoted(self.name)} expects {self.type} as a dict, got "
                                 f"{_described(value)}")
            raise place.error(f"is {_described(value)}, not a dict")
        place = place or _Place(self.name, self.type)
        checked = {}
        for key, item in value.items():
            if self.key_name is not None and not (
                    isinstance(key, str) if self.string_keys else _is_int(key)):
                raise place.error(f"has the key {shown(repr(key))} ({type(key).__name__}); "
                                  f"its keys must be {self.key_name}")
            where = place.at(f"[{shown(repr(key))}]")
            checker = self.value
            checked[key] = (checker.scalar(item, where) if isinstance(checker, _Tensor)
                            else checker.check(item, where))
        return checked


class _Optional:
    """optional(E): None (empty), or what E accepts."""

    def __init__(self, tp: TypeProto, name: str):
        self.elem = _checker(tp.optional_type.elem_type, name)
        self.name, self.type = name, type_string(tp)

    def check(self, value: Any, place: _Place | None) -> Any:
        if value is None:
            return None
        try:
            return self.elem.check(value, place or _Place(self.name, self.type))
        except InputError as exc:
            raise InputError(f"{exc}; or None, for an empty optional") from None


def _described(value: Any) -> str:
    """``describe_value`` with the Python type of a plain value spelled out."""
    if isinstance(value, (str, bytes)):
        shown = repr(value) if len(value) <= 20 else repr(value[:20])[:-1] + "...'"
        return f"a {type(value).__name__} ({shown})"
    if isinstance(value, (bool, int, float, complex)):
        return f"a Python {type(value).__name__} ({value!r})"
    if isinstance(value, np.generic):
        return f"a numpy {value.dtype} scalar"
    if isinstance(value, (list, tuple, dict)):
        return f"a {type(value).__name__} of {len(value)}"
    if isinstance(value, np.ndarray):
        return f"an array {describe_value(value)}"
    return describe_value(value)
