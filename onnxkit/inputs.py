"""Random but reproducible inputs for a model, from its declared input types."""

from __future__ import annotations

from typing import Mapping

import numpy as np
from onnx import ModelProto, TensorProto

from onnxkit.errors import InputError
from onnxkit.runtime.values import np_dtype, shape_of, type_string


def random_feeds(model: ModelProto, seed: int = 0, dims: Mapping[str, int] | None = None) -> dict:
    """One array per graph input: normal floats, small non-negative ints, random bools.

    Symbolic dimensions take their value from ``dims`` (default 1).
    """
    rng = np.random.default_rng(seed)
    dims = dict(dims or {})
    initialized = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name in initialized:
            continue
        if vi.type.WhichOneof("value") != "tensor_type":
            raise InputError(f"input {vi.name!r} is {type_string(vi.type)}: give it explicitly")
        declared = shape_of(vi.type) or []
        shape = [d if isinstance(d, int) and d > 0 else dims.get(d, 1) for d in declared]
        feeds[vi.name] = random_array(rng, vi.type.tensor_type.elem_type, shape)
    return feeds


def random_array(rng: np.random.Generator, elem_type: int, shape: list[int]) -> np.ndarray:
    dtype = np_dtype(elem_type)
    if elem_type == TensorProto.STRING:
        return np.array([f"s{i}" for i in range(int(np.prod(shape)))], dtype=object).reshape(shape)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 10, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)
