"""Apply the schema to the wire: name every field of a serialized ONNX model.

    walk(model) -> [Field, ...]            the top-level fields of the ModelProto, in file order
        for each raw field (wire.iter_fields):
            descriptor = message.fields_by_number.get(number)     # from onnx's .proto
            message field -> walk its payload with the field's message type (children)
            packed numbers -> count them (and decode the first few)
            scalar        -> decode the value the way the field's type says

The descriptors come from onnx itself (``onnx.ModelProto.DESCRIPTOR``), so this view
follows whatever ``onnx.proto`` the installed onnx was built from.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import onnx
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from onnxkit.protobuf.wire import (I32, I64, LEN, VARINT, WIRE_TYPE_NAMES, WireError, as_signed,
                                   decode_varint, iter_fields)

MAX_DEPTH = 100  # protobuf's own default recursion limit
PREVIEW = 8      # numbers shown for a packed field, bytes shown for a bytes field

_FD = FieldDescriptor
_TYPE_NAMES = {
    _FD.TYPE_DOUBLE: "double", _FD.TYPE_FLOAT: "float", _FD.TYPE_INT64: "int64",
    _FD.TYPE_UINT64: "uint64", _FD.TYPE_INT32: "int32", _FD.TYPE_FIXED64: "fixed64",
    _FD.TYPE_FIXED32: "fixed32", _FD.TYPE_BOOL: "bool", _FD.TYPE_STRING: "string",
    _FD.TYPE_BYTES: "bytes", _FD.TYPE_UINT32: "uint32", _FD.TYPE_ENUM: "enum",
    _FD.TYPE_SFIXED32: "sfixed32", _FD.TYPE_SFIXED64: "sfixed64", _FD.TYPE_SINT32: "sint32",
    _FD.TYPE_SINT64: "sint64",
}
# the wire type each scalar type is written with when it is not packed
_WIRE_OF = {_FD.TYPE_DOUBLE: I64, _FD.TYPE_FIXED64: I64, _FD.TYPE_SFIXED64: I64,
            _FD.TYPE_FLOAT: I32, _FD.TYPE_FIXED32: I32, _FD.TYPE_SFIXED32: I32,
            _FD.TYPE_STRING: LEN, _FD.TYPE_BYTES: LEN, _FD.TYPE_MESSAGE: LEN}


@dataclass
class Field:
    """One field of a serialized message, named by the schema.

    ``size`` counts every byte of the field (tag, length prefix, payload); ``header_size``
    the tag and length prefix only. ``value`` is the decoded scalar (``str`` for strings,
    the first bytes for ``bytes``, the first numbers for a packed field, the enum's name
    for an enum); ``count`` is the number of elements of a packed field; ``children`` are
    the fields of a nested message.
    """

    offset: int
    field_number: int
    wire_type: int
    name: str
    type_name: str
    header_size: int
    size: int
    message: str
    value: Any = None
    count: int | None = None
    children: list["Field"] = field(default_factory=list)
    is_message: bool = False

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def payload_size(self) -> int:
        return self.size - self.header_size

    @property
    def wire_type_name(self) -> str:
        return WIRE_TYPE_NAMES.get(self.wire_type, str(self.wire_type))

    def walk(self, depth: int = 0) -> Iterator[tuple[int, "Field"]]:
        """This field and every field nested in it, depth first, with their depth."""
        yield depth, self
        for child in self.children:
            yield from child.walk(depth + 1)


def as_bytes(model) -> bytes:
    """The serialized bytes of a ModelProto (or any message); bytes are returned as they are."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString()
    raise TypeError(f"expected serialized bytes or a protobuf message, got {type(model).__name__}")


def walk(model, message: Descriptor | None = None) -> list[Field]:
    """The fields of ``model`` (a message or its serialized bytes), named by the schema.

    ``message`` is the descriptor of the top-level message: by default the message's own
    (a ModelProto when bytes are given).
    """
    if message is None:
        message = model.DESCRIPTOR if hasattr(model, "DESCRIPTOR") else onnx.ModelProto.DESCRIPTOR
    data = as_bytes(model)
    return _walk(data, 0, len(data), message, 0)


def iter_all(fields: list[Field]) -> Iterator[tuple[int, Field]]:
    """Every field of a walk, depth first, with its depth."""
    for f in fields:
        yield from f.walk()


def select(fields: list[Field], path: str) -> list[Field]:
    """Fields found by a dotted path of field names: ``select(fields, "graph.node.op_type")``."""
    found = list(fields)
    for i, part in enumerate(path.split(".")):
        pool = found if i == 0 else [c for f in found for c in f.children]
        found = [f for f in pool if f.name == part]
    return found


def _walk(data: bytes, start: int, end: int, message: Descriptor, depth: int) -> list[Field]:
    if depth > MAX_DEPTH:
        raise WireError(f"messages nested more than {MAX_DEPTH} deep at offset {start}")
    out = []
    for raw in iter_fields(data, start, end):
        desc = message.fields_by_number.get(raw.field_number)
        out.append(_field(data, raw, desc, message, depth))
    return out


def _field(data: bytes, raw, desc: FieldDescriptor | None, message: Descriptor, depth: int) -> Field:
    f = Field(raw.offset, raw.field_number, raw.wire_type, f"#{raw.field_number}", "unknown",
              raw.header_size, raw.size, message.name)
    if desc is None:  # not in the schema: keep the bytes, name nothing
        f.value = raw.value if raw.wire_type != LEN else _bytes_preview(data, raw.start, raw.end)
        return f
    f.name = desc.name
    if desc.type == _FD.TYPE_MESSAGE:
        f.type_name = _message_name(desc.message_type)
        if raw.wire_type == LEN:
            f.is_message = True
            f.children = _walk(data, raw.start, raw.end, desc.message_type, depth + 1)
            return f
    else:
        f.type_name = _TYPE_NAMES.get(desc.type, str(desc.type))
        expected = _WIRE_OF.get(desc.type, VARINT)
        if raw.wire_type == LEN and expected != LEN and desc.is_repeated:
            f.type_name += "[] packed"
            f.count, f.value = _packed(data, raw.start, raw.end, desc)
            return f
        if raw.wire_type == expected:
            if desc.is_repeated:
                f.type_name += "[]"
            f.value = _scalar(data, raw, desc)
            return f
    f.type_name += f" (wire type {raw.wire_type} does not match the schema)"
    return f


def _message_name(desc: Descriptor) -> str:
    outer = desc.containing_type
    return f"{outer.name}.{desc.name}" if outer is not None else desc.name


def _scalar(data: bytes, raw, desc: FieldDescriptor):
    t = desc.type
    if t in (_FD.TYPE_STRING, _FD.TYPE_BYTES):
        if t == _FD.TYPE_STRING:
            return bytes(data[raw.start:raw.end]).decode("utf-8", errors="replace")
        return _bytes_preview(data, raw.start, raw.end)
    return _number(raw.value, desc)


def _number(value: int, desc: FieldDescriptor):
    t = desc.type
    if t in (_FD.TYPE_INT64, _FD.TYPE_INT32, _FD.TYPE_SFIXED64):
        return as_signed(value, 64)
    if t == _FD.TYPE_SFIXED32:
        return as_signed(value, 32)
    if t in (_FD.TYPE_SINT32, _FD.TYPE_SINT64):
        return (value >> 1) ^ -(value & 1)
    if t == _FD.TYPE_BOOL:
        return bool(value)
    if t == _FD.TYPE_ENUM:
        known = desc.enum_type.values_by_number.get(as_signed(value, 64))
        return known.name if known is not None else as_signed(value, 64)
    if t == _FD.TYPE_FLOAT:
        return struct.unpack("<f", value.to_bytes(4, "little"))[0]
    if t == _FD.TYPE_DOUBLE:
        return struct.unpack("<d", value.to_bytes(8, "little"))[0]
    return value


def _packed(data: bytes, start: int, end: int, desc: FieldDescriptor) -> tuple[int, list]:
    """The element count of a packed run, and its first PREVIEW elements."""
    wire = _WIRE_OF.get(desc.type, VARINT)
    if wire in (I32, I64):
        width = 4 if wire == I32 else 8
        count = (end - start) // width
        head = [_number(int.from_bytes(data[p:p + width], "little"), desc)
                for p in range(start, min(end, start + PREVIEW * width), width)]
        return count, head
    # a varint ends at every byte whose high bit is clear
    count = int(np.count_nonzero(np.frombuffer(data, np.uint8, end - start, start) < 0x80))
    head, pos = [], start
    while pos < end and len(head) < PREVIEW:
        value, pos = decode_varint(data, pos)
        head.append(_number(value, desc))
    return count, head


def _bytes_preview(data: bytes, start: int, end: int) -> bytes:
    return bytes(data[start:min(end, start + PREVIEW)])
