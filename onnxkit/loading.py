"""``onnxkit.load``: a path, bytes, a ModelProto or ONNX text -> a ModelProto.

Every model is untrusted input. External data is read only from files inside the
model's own folder (no absolute paths, no ``..``, no symlink that leaves it), with
offset and length checked against the file; every failure is a ``ModelLoadError``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Union

import onnx
from google.protobuf.message import DecodeError
from onnx import GraphProto, ModelProto, TensorProto

from onnxkit.errors import ModelLoadError, UnsafeModelError, clipped, quoted

ModelLike = Union[str, os.PathLike, bytes, bytearray, ModelProto]


def load(model: ModelLike, *, base_dir: str | os.PathLike | None = None) -> ModelProto:
    """Load ``model`` from a file path, serialized bytes, a ModelProto or ONNX text syntax."""
    if isinstance(model, ModelProto):
        proto = model
        if base_dir is not None:
            proto = _copy(model)
            load_external_data(proto, Path(base_dir))
        else:
            _refuse_unresolved_external(proto)
        return proto
    if isinstance(model, (bytes, bytearray, memoryview)):
        proto = parse_bytes(bytes(model), "the given bytes")
        if base_dir is not None:
            load_external_data(proto, Path(base_dir))
        else:
            _refuse_unresolved_external(proto)
        return proto
    if isinstance(model, (str, os.PathLike)):
        text = os.fspath(model)
        if isinstance(model, str) and _looks_like_text_syntax(text):
            return parse_text(text)
        path = Path(text)
        try:
            if not path.exists():
                raise ModelLoadError(f"no such model file: {text!r}")
            if path.is_dir():
                raise ModelLoadError(f"{text!r} is a folder, not an ONNX model file")
            data = path.read_bytes()
        except (OSError, ValueError) as exc:  # unreadable, or a NUL in the path
            raise ModelLoadError(f"cannot read the model file {text!r}: {exc}") from exc
        proto = parse_bytes(data, repr(text))
        load_external_data(proto, Path(base_dir) if base_dir is not None else path.parent)
        return proto
    raise ModelLoadError(
        f"cannot load a model from {type(model).__name__}; give a path, bytes, "
        f"an onnx.ModelProto or ONNX text syntax"
    )


def _copy(model: ModelProto) -> ModelProto:
    out = ModelProto()
    out.CopyFrom(model)
    return out


def _looks_like_text_syntax(text: str) -> bool:
    head = text.lstrip()[:200]
    return "\n" in text or head.startswith("<") or head.startswith("ir_version")


def parse_text(text: str) -> ModelProto:
    """ONNX text syntax (``<ir_version: 8, opset_import: ["" : 18]> g (float[N] x) => ...``)."""
    try:
        return onnx.parser.parse_model(text)
    except Exception as exc:  # the parser reports its own position (as bytes)
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", errors="replace")
        raise ModelLoadError(f"invalid ONNX text syntax: {clipped(detail)}") from exc


def parse_bytes(data: bytes, what: str) -> ModelProto:
    if not data:
        raise ModelLoadError(f"{what} is empty: an ONNX model file cannot be 0 bytes")
    proto = ModelProto()
    try:
        proto.ParseFromString(data)
    except (DecodeError, RuntimeError, ValueError, RecursionError, MemoryError) as exc:
        raise ModelLoadError(
            f"{what} is not a valid ONNX model (protobuf could not decode it: {exc}); "
            f"is the file truncated or of another format?"
        ) from exc
    if not proto.HasField("graph"):
        raise ModelLoadError(f"{what} decodes as protobuf but holds no graph: not an ONNX model")
    return proto


def model_tensors(model: ModelProto) -> Iterator[TensorProto]:
    """Every TensorProto of the model: initializers and tensor attributes, nested graphs too."""
    yield from _graph_tensors(model.graph)
    for fn in model.functions:
        for node in fn.node:
            yield from _node_tensors(node)


def _graph_tensors(graph: GraphProto) -> Iterator[TensorProto]:
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield sparse.values
        yield sparse.indices
    for node in graph.node:
        yield from _node_tensors(node)


def _node_tensors(node) -> Iterator[TensorProto]:
    for attr in node.attribute:
        if attr.HasField("t"):
            yield attr.t
        yield from attr.tensors
        if attr.HasField("g"):
            yield from _graph_tensors(attr.g)
        for g in attr.graphs:
            yield from _graph_tensors(g)


def _refuse_unresolved_external(model: ModelProto) -> None:
    for tensor in model_tensors(model):
        if tensor.data_location == TensorProto.EXTERNAL:
            raise ModelLoadError(
                f"tensor {quoted(tensor.name)} keeps its data in an external file, but the model was "
                f"given without a folder; load it from its path or pass base_dir="
            )


def load_external_data(model: ModelProto, base_dir: Path) -> None:
    """Read external tensor data into the model, confined to ``base_dir``."""
    root = base_dir.resolve()
    for tensor in model_tensors(model):
        if tensor.data_location != TensorProto.EXTERNAL:
            continue
        info = {e.key: e.value for e in tensor.external_data}
        location = info.get("location", "")
        target = safe_external_path(root, location, tensor.name)
        offset = _nonnegative_int(info.get("offset", "0"), "offset", tensor.name)
        try:
            size = target.stat().st_size
            length = (_nonnegative_int(info["length"], "length", tensor.name) if "length" in info
                      else size - offset)
            if offset > size or offset + length > size:
                raise ModelLoadError(
                    f"tensor {quoted(tensor.name)}: external data range offset={offset} length={length} "
                    f"runs past the end of {quoted(location)} ({size} bytes)"
                )
            _check_external_length(tensor, length)
            with open(target, "rb") as f:
                f.seek(offset)
                tensor.raw_data = f.read(length)
        except OSError as exc:  # a file that vanished or cannot be read: still a load error
            raise ModelLoadError(f"tensor {quoted(tensor.name)}: cannot read external data {quoted(location)}: "
                                 f"{exc}") from exc
        del tensor.external_data[:]
        tensor.data_location = TensorProto.DEFAULT


_PACKED = {TensorProto.INT4, TensorProto.UINT4, TensorProto.FLOAT4E2M1, TensorProto.INT2, TensorProto.UINT2}


def _check_external_length(tensor: TensorProto, length: int) -> None:
    """Refuse, before reading, data whose length does not fit the tensor's dims and type
    (a big file must not be read into memory for a tensor that cannot hold it)."""
    from onnxkit.core.limits import check_allocation

    check_allocation([length], "uint8", f"tensor {quoted(tensor.name)} external data")
    if tensor.data_type in _PACKED or tensor.data_type == TensorProto.STRING:
        return
    try:
        itemsize = onnx.helper.tensor_dtype_to_np_dtype(tensor.data_type).itemsize
    except (KeyError, ValueError, TypeError):
        return  # an unknown type: tensor_to_array reports it
    count = 1
    for d in tensor.dims:
        count *= int(d)
    if length != count * itemsize:
        raise ModelLoadError(
            f"tensor {quoted(tensor.name)}: external data holds {length} bytes, but dims "
            f"{list(tensor.dims)} of {TensorProto.DataType.Name(tensor.data_type)} need "
            f"{count * itemsize}"
        )


def safe_external_path(root: Path, location: str, tensor_name: str) -> Path:
    """The file ``location`` names, provided it lies inside ``root``."""
    if not location:
        raise UnsafeModelError(f"tensor {quoted(tensor_name)} is external but names no location")
    if "\x00" in location:
        raise UnsafeModelError(f"tensor {quoted(tensor_name)}: external data path {quoted(location)} "
                               "holds a NUL byte")
    if os.path.isabs(location) or location.startswith(("/", "\\")) or ":" in location[:3]:
        raise UnsafeModelError(
            f"tensor {quoted(tensor_name)}: external data path {quoted(location)} is absolute; only files "
            f"inside the model's folder are read"
        )
    parts = Path(location.replace("\\", "/")).parts
    if ".." in parts:
        raise UnsafeModelError(
            f"tensor {quoted(tensor_name)}: external data path {quoted(location)} climbs out with '..'"
        )
    try:
        target = (root / location).resolve()
        if root != target and root not in target.parents:
            raise UnsafeModelError(
                f"tensor {quoted(tensor_name)}: external data {quoted(location)} resolves to {quoted(target, 400)}, "
                f"outside the model's folder (a symlink?)"
            )
        if not target.is_file():
            raise ModelLoadError(f"tensor {quoted(tensor_name)}: external data file {quoted(location)} not found")
    except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop (RuntimeError < 3.13)
        raise ModelLoadError(f"tensor {quoted(tensor_name)}: external data path {quoted(location)} cannot be "
                             f"resolved: {exc}") from exc
    return target


def _nonnegative_int(text: str, what: str, tensor_name: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ModelLoadError(f"tensor {quoted(tensor_name)}: external data {what} {quoted(text)} "
                             "is not an integer") from None
    if value < 0:
        raise ModelLoadError(f"tensor {quoted(tensor_name)}: external data {what} {value} is negative")
    return value
