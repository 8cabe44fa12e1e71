"""A session keeps each weight once: as an array of its plan, not also inside a ModelProto.

    detach_weights(model) -> (skeleton, arrays)
        arrays:    initializer name -> numpy array (``tensor_to_array``), handed to the plan
        skeleton:  a new ModelProto, the model without its top-level initializers' data
                   (each keeps its name, type, dims and doc: a stub)
    attach_weights(skeleton, arrays) -> the whole model again, in a new ModelProto

Why a new proto, not the same one with its fields cleared: protobuf (upb) keeps a
message's memory in an arena that is freed only with the whole message, so clearing
``raw_data`` frees nothing. Building the skeleton apart and dropping the loaded model
gives that memory back: a session of a 100 MB model then holds 100 MB of weights, not
200 (and the plan's steps point into the skeleton's nodes, which keeps it alive, not
the weights). ``Session.model`` calls ``attach_weights`` on each access.
"""

from __future__ import annotations

from typing import Iterable

from onnx import ModelProto, TensorProto, numpy_helper

from onnxkit.runtime.values import tensor_to_array

# TensorProto fields that hold (or point to) the values; a stub has none of them.
DATA_FIELDS = frozenset({"raw_data", "float_data", "int32_data", "string_data", "int64_data",
                         "double_data", "uint64_data", "external_data", "data_location"})

_NOT_DATA = frozenset(TensorProto.DESCRIPTOR.fields_by_name) - DATA_FIELDS


def _copy_fields(src, dst, skip: Iterable[str] = ()) -> None:
    """Copy every set field of message ``src`` into the empty message ``dst``, but ``skip``.

    The skipped fields are never read: reading ``raw_data`` would copy a tensor's bytes
    (a large embedding would make a memory peak of its own during ``detach_weights``)."""
    skip = set(skip)
    for fd in src.DESCRIPTOR.fields:
        if fd.name in skip:
            continue
        if _repeated(fd):
            values = getattr(src, fd.name)
            if len(values):
                getattr(dst, fd.name).extend(values)
        elif src.HasField(fd.name):
            if fd.type == fd.TYPE_MESSAGE:
                getattr(dst, fd.name).CopyFrom(getattr(src, fd.name))
            else:
                setattr(dst, fd.name, getattr(src, fd.name))


def _repeated(fd) -> bool:
    """Newer protobuf has ``is_repeated``, older only ``label``."""
    flag = getattr(fd, "is_repeated", None)
    return bool(flag) if flag is not None else fd.label == fd.LABEL_REPEATED


def detach_weights(model: ModelProto) -> tuple[ModelProto, dict]:
    """(skeleton, arrays): see the module docstring. ``model`` is left as it was."""
    arrays = {t.name: tensor_to_array(t) for t in model.graph.initializer}
    skeleton = ModelProto()
    _copy_fields(model, skeleton, skip=("graph",))
    _copy_fields(model.graph, skeleton.graph, skip=("initializer",))
    for t in model.graph.initializer:
        _copy_fields(t, skeleton.graph.initializer.add(), skip=DATA_FIELDS)
    return skeleton, arrays


def attach_weights(skeleton: ModelProto, arrays: dict) -> ModelProto:
    """The model ``detach_weights`` took apart, whole again (a new proto each call)."""
    model = ModelProto()
    model.CopyFrom(skeleton)
    for t in model.graph.initializer:
        if t.name in arrays:
            _copy_fields(_tensor(arrays[t.name], t), t, skip=_NOT_DATA)
    return model


def _tensor(array, stub: TensorProto) -> TensorProto:
    """``array`` as a TensorProto of the stub's element type."""
    return numpy_helper.from_array(array.reshape(tuple(stub.dims)), stub.name)
