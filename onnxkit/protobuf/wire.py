"""The protobuf wire format, byte by byte: varints, tags and the four wire types ONNX uses.

A serialized message is a flat run of fields. Each field is::

    tag      varint  (field_number << 3) | wire_type
    payload  wire type 0 VARINT : a varint (int32, int64, uint64, bool, enum)
             wire type 1 I64    : 8 bytes little-endian (double, fixed64)
             wire type 2 LEN    : a varint length, then that many bytes (string, bytes,
                                  a nested message, or a packed run of numbers)
             wire type 5 I32    : 4 bytes little-endian (float, fixed32)

A varint stores 7 bits per byte, least significant group first; the high bit of each
byte says "more bytes follow". Negative int32/int64 values take 10 bytes (two's
complement as uint64). Nothing in the bytes names a field: only the schema (the
``.proto`` descriptors) says that field 7 of a ModelProto is ``graph``.
https://protobuf.dev/programming-guides/encoding/
"""

from __future__ import annotations

from dataclasses import dataclass

from onnxkit.errors import ModelLoadError

VARINT, I64, LEN, SGROUP, EGROUP, I32 = 0, 1, 2, 3, 4, 5
WIRE_TYPE_NAMES = {VARINT: "varint", I64: "i64", LEN: "len", SGROUP: "sgroup", EGROUP: "egroup",
                   I32: "i32"}


class WireError(ModelLoadError, ValueError):
    """The bytes are not a well-formed protobuf message (truncated, bad tag, bad length).
    A ``ModelLoadError``, and a ``ValueError`` as it always was."""


def encode_varint(value: int) -> bytes:
    """7 bits per byte, low bits first, high bit set on every byte but the last.

    Negative numbers are encoded as their 64-bit two's complement (10 bytes), as
    protobuf does for int32 and int64 fields.
    """
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        low = value & 0x7F
        value >>= 7
        if value:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def decode_varint(data: bytes, pos: int = 0) -> tuple[int, int]:
    """The unsigned value of the varint at ``pos`` and the position just after it."""
    result, shift, start = 0, 0, pos
    while True:
        if pos >= len(data):
            raise WireError(f"truncated varint at offset {start}")
        byte = data[pos]
        result |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise WireError(f"varint at offset {start} is longer than 10 bytes")


def as_signed(value: int, bits: int = 64) -> int:
    """A varint's unsigned value read as a two's-complement signed integer."""
    value &= (1 << 64) - 1
    if bits == 32:
        value &= 0xFFFFFFFF
    return value - (1 << bits) if value >> (bits - 1) else value


def encode_tag(field_number: int, wire_type: int) -> bytes:
    return encode_varint((field_number << 3) | wire_type)


def split_tag(tag: int) -> tuple[int, int]:
    """``(field_number, wire_type)`` of a tag value: ``0x3a`` -> ``(7, 2)``."""
    return tag >> 3, tag & 7


@dataclass(frozen=True)
class RawField:
    """One field as the bytes give it, before any schema is applied.

    ``offset`` is where its tag starts; ``start``/``end`` delimit what follows the tag (for
    LEN: the bytes after the length prefix); ``value`` is the number of a VARINT, I32 or
    I64 field (raw bits: the schema says whether they are a float or a signed int).
    """

    offset: int
    field_number: int
    wire_type: int
    start: int
    end: int
    value: int | None = None

    @property
    def header_size(self) -> int:
        """Bytes of tag (+ length prefix) before the payload."""
        return self.start - self.offset

    @property
    def size(self) -> int:
        return self.end - self.offset


def iter_fields(data: bytes, start: int = 0, end: int | None = None):
    """Yield the RawFields of the message stored in ``data[start:end]``, in file order."""
    end = len(data) if end is None else end
    pos = start
    while pos < end:
        offset = pos
        tag, pos = decode_varint(data, pos)
        number, wire_type = split_tag(tag)
        if number == 0:
            raise WireError(f"field number 0 at offset {offset} (tag byte {data[offset]:#04x})")
        value = None
        if wire_type == VARINT:
            value, after = decode_varint(data, pos)
            payload = (pos, after)
        elif wire_type == I64:
            payload = (pos, pos + 8)
        elif wire_type == I32:
            payload = (pos, pos + 4)
        elif wire_type == LEN:
            length, pos = decode_varint(data, pos)
            payload = (pos, pos + length)
        else:
            raise WireError(f"wire type {wire_type} ({WIRE_TYPE_NAMES.get(wire_type, 'unknown')}) "
                            f"at offset {offset} is not used by ONNX")
        if payload[1] > end:
            raise WireError(f"field {number} at offset {offset} runs past the end of its "
                            f"message ({payload[1]} > {end})")
        if wire_type in (I32, I64):
            value = int.from_bytes(data[payload[0]:payload[1]], "little")
        pos = payload[1]
        yield RawField(offset, number, wire_type, payload[0], payload[1], value)
