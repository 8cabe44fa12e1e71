"""Random but reproducible inputs for a model, from its declared input types."""

from __future__ import annotations

import math
from typing import Collection, Mapping

import numpy as np
from onnx import ModelProto, TensorProto

from onnxkit.errors import InputError, LimitExceededError, shown
from onnxkit.runtime.limits import current_limits
from onnxkit.runtime.values import np_dtype, shape_of, type_string


def random_feeds(model: ModelProto, seed: int = 0, dims: Mapping[str, int] | None = None,
                 given: Collection[str] = (), max_bytes: int | None = None) -> dict:
    """One array per graph input not in ``given``: normal floats, small non-negative ints,
    random bools.

    Symbolic dimensions take their value from ``dims`` (default 1). An input larger than
    ``max_bytes`` (default: the current limits' ``max_tensor_bytes``) is refused before it
    is allocated.
    """
    rng = np.random.default_rng(seed)
    dims = dict(dims or {})
    limit = current_limits().max_tensor_bytes if max_bytes is None else max_bytes
    initialized = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in initialized or vi.name in given:
            continue
        if vi.type.WhichOneof("value") != "tensor_type":
            raise InputError(f"input {shown(vi.name)!r} is {type_string(vi.type)}: "
                             f"give it explicitly")
        declared = shape_of(vi.type) or []
        shape = [d if isinstance(d, int) and d > 0 else dims.get(d, 1) for d in declared]
        elem = vi.type.tensor_type.elem_type
        try:
            itemsize = np_dtype(elem).itemsize
        except (KeyError, ValueError, TypeError):
            raise InputError(f"input {shown(vi.name)!r} is {type_string(vi.type)}, an element "
                             f"type onnxkit cannot make random values of: give it explicitly")
        size = math.prod(shape) * (itemsize or 1)
        if size > limit:
            raise LimitExceededError(f"a random input {shown(vi.name)!r} of shape {shape} would "
                                     f"take {size:,} bytes, more than the {limit:,}-byte limit")
        feeds[vi.name] = random_array(rng, elem, shape)
    return feeds


def symbolic_dims(model: ModelProto) -> set[str]:
    """The names of the symbolic dimensions of the model's (non-initializer) inputs."""
    initialized = {t.name for t in model.graph.initializer}
    return {d for vi in model.graph.input if vi.name not in initialized
            and vi.type.WhichOneof("value") == "tensor_type"
            for d in (shape_of(vi.type) or []) if isinstance(d, str)}


def random_array(rng: np.random.Generator, elem_type: int, shape: list[int]) -> np.ndarray:
    dtype = np_dtype(elem_type)
    if elem_type == TensorProto.STRING:
        return np.array([f"s{i}" for i in range(int(np.prod(shape)))], dtype=object).reshape(shape)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 10, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)
