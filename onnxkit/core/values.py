"""ONNX types and the Python values that carry them.

| ONNX            | onnxkit value                     |
|-----------------|-----------------------------------|
| tensor(T)       | ``numpy.ndarray`` (strings: dtype object, small floats: ml_dtypes) |
| sequence(T)     | ``list`` of values                |
| map(K, V)       | ``dict``                          |
| optional(T)     | the value, or ``None`` when empty |
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np
import onnx
from onnx import TensorProto, TypeProto
from onnx.helper import tensor_dtype_to_np_dtype


def np_dtype(elem_type: int) -> np.dtype:
    """The numpy dtype that holds an ONNX tensor element type."""
    if elem_type == TensorProto.STRING:
        return np.dtype(object)
    return np.dtype(tensor_dtype_to_np_dtype(elem_type))


def elem_type_name(elem_type: int) -> str:
    """``float``, ``int64``...; ``unknown(99)`` for a number no ONNX version defines."""
    if elem_type not in TensorProto.DataType.values():
        return f"unknown({elem_type})"
    return TensorProto.DataType.Name(elem_type).lower()


def type_string(tp: TypeProto) -> str:
    """onnxruntime's spelling: ``tensor(float)``, ``seq(tensor(int64))``, ``map(string,tensor(float))``."""
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        return f"tensor({_elem_name(tp.tensor_type.elem_type)})"
    if kind == "sparse_tensor_type":
        return f"sparse_tensor({_elem_name(tp.sparse_tensor_type.elem_type)})"
    if kind == "sequence_type":
        return f"seq({type_string(tp.sequence_type.elem_type)})"
    if kind == "map_type":
        return f"map({_elem_name(tp.map_type.key_type)},{type_string(tp.map_type.value_type)})"
    if kind == "optional_type":
        return f"optional({type_string(tp.optional_type.elem_type)})"
    return "unknown"


def _elem_name(elem_type: int) -> str:
    name = elem_type_name(elem_type)
    return {"float": "float", "double": "double", "undefined": "undefined"}.get(name, name)


def shape_of(tp: TypeProto) -> list | None:
    """Declared shape: ints for fixed dims, strings for symbolic ones, None when unknown."""
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return None
    dims = []
    for d in tp.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif d.HasField("dim_param"):
            dims.append(d.dim_param)
        else:
            dims.append(None)
    return dims


def describe_value(value) -> str:
    """A short description for error messages: ``float32[2, 3]``, ``sequence of 4``..."""
    if hasattr(value, "describe"):  # executor-owned values (e.g. device tensors) say where they live
        return value.describe()
    if isinstance(value, np.ndarray):
        return f"{value.dtype}{list(value.shape)}"
    if isinstance(value, list):
        return f"sequence of {len(value)}"
    if isinstance(value, dict):
        return f"map of {len(value)}"
    if value is None:
        return "None"
    return type(value).__name__


def value_bytes(value) -> int:
    """Bytes a value holds, as a run's memory budget counts them: a tensor's ``nbytes``
    (a string tensor counts its references only), the sum over a sequence's items or a
    map's values, 0 for an empty optional; an executor's own tensors say their ``nbytes``."""
    if type(value) is np.ndarray:
        return value.nbytes
    if isinstance(value, (list, tuple)):
        try:
            return sum(map(_NBYTES, value))
        except AttributeError:  # nested sequences, None, maps among the items
            return sum(map(value_bytes, value))
    if isinstance(value, dict):
        return sum(map(value_bytes, value.values()))
    return getattr(value, "nbytes", 0) if value is not None else 0


_NBYTES = attrgetter("nbytes")


def tensor_to_array(tensor: TensorProto, base_dir: str | None = None) -> np.ndarray:
    """A TensorProto as a numpy array (small float types come back as ml_dtypes).

    A tensor whose data does not match its dims or type is a ``ModelLoadError``.
    """
    from onnxkit.errors import ModelLoadError, quoted
    from onnxkit.core.limits import check_allocation

    if tensor.data_location == TensorProto.EXTERNAL:
        raise ModelLoadError(f"tensor {quoted(tensor.name)} still points at external data; load the model "
                             f"with onnxkit.load from its path")
    if any(d < 0 for d in tensor.dims):
        raise ModelLoadError(f"tensor {quoted(tensor.name)} has a negative dimension: dims {list(tensor.dims)}")
    try:
        check_allocation(list(tensor.dims), np_dtype(tensor.data_type) if tensor.data_type != TensorProto.STRING else np.uint8,
                         f"tensor {quoted(tensor.name)}")
        return onnx.numpy_helper.to_array(tensor, base_dir or "")
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, MemoryError) as exc:
        raise ModelLoadError(
            f"tensor {quoted(tensor.name)} (type {TensorProto.DataType.Name(tensor.data_type) if tensor.data_type in TensorProto.DataType.values() else tensor.data_type}, "
            f"dims {list(tensor.dims)}) is malformed: {exc}"
        ) from exc


def sparse_to_dense(sparse: onnx.SparseTensorProto) -> np.ndarray:
    """SparseTensorProto -> dense array (values scattered at their linear or ND indices)."""
    from onnxkit.errors import ModelLoadError, quoted
    from onnxkit.core.limits import check_allocation

    values = tensor_to_array(sparse.values)
    indices = tensor_to_array(sparse.indices).astype(np.int64)
    shape = tuple(sparse.dims)
    check_allocation(shape, values.dtype, f"sparse tensor {sparse.values.name!r}")
    dense = np.zeros(shape, dtype=values.dtype)
    try:
        if indices.ndim == 1:
            dense.reshape(-1)[indices] = values
        else:
            dense[tuple(indices.T)] = values
    except (IndexError, ValueError) as exc:
        raise ModelLoadError(f"sparse tensor {sparse.values.name!r}: indices do not fit dims "
                             f"{list(shape)}: {exc}") from exc
    return dense
