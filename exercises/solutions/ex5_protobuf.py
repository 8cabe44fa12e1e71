"""Reference solutions of exercise 5 (see exercises/ex5_protobuf.py for the tasks)."""

from __future__ import annotations


def decode_varint(data: bytes, pos: int = 0) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        if pos >= len(data):
            raise ValueError("the bytes end inside a varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def find_field(data: bytes, number: int) -> bytes | None:
    pos = 0
    while pos < len(data):
        key, pos = decode_varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, pos = decode_varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = decode_varint(data, pos)
            if pos + length > len(data):
                raise ValueError(f"field {field}: {length} bytes past the end")
            if field == number:
                return bytes(data[pos:pos + length])
            pos += length
        else:
            raise ValueError(f"field {field}: unknown wire type {wire}")
    return None
