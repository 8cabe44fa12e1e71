"""Exercise 5: read a model's bytes by hand, as protobuf writes them.

An .onnx file is a protobuf ModelProto (notebook 2). Each field is a key, then a value:

    key   = a varint: (field number << 3) | wire type
    wire type 0: a varint          1: 8 bytes          5: 4 bytes
    wire type 2: length-delimited: a varint length, then that many bytes (a string, bytes,
                 or a nested message such as ModelProto.graph, field 7)

A varint is 7 bits per byte, least significant group first; a byte's top bit (0x80) says
that another byte follows. 300 = 0b10_0101100 is written 0xAC 0x02.

Check your work:   python -m exercises.check 5.1
"""

from __future__ import annotations


def decode_varint(data: bytes, pos: int = 0) -> tuple[int, int]:
    """The unsigned varint that starts at ``data[pos]``, and the position just after it.

        value, shift = 0, 0
        loop: b = data[pos]; pos += 1; value |= (b & 0x7F) << shift; shift += 7
              stop after the first byte whose top bit is 0

    Bytes that end inside a varint (the last byte still has its top bit) are an error:
    raise ValueError, never IndexError.
    https://protobuf.dev/programming-guides/encoding/#varints
    """
    # ## Task 5.1
    raise NotImplementedError("Need to implement for Task 5.1")


def find_field(data: bytes, number: int) -> bytes | None:
    """The value of the first length-delimited field ``number`` among the top-level fields
    of the message ``data`` (None when there is none), skipping the other fields whatever
    their wire type (0, 1, 2 or 5). ``find_field(model_bytes, 2)`` is ModelProto's
    producer_name, as UTF-8 bytes; ``find_field(model_bytes, 7)`` the graph's bytes.
    https://protobuf.dev/programming-guides/encoding/#structure
    """
    # ## Task 5.2
    # Hint: decode_varint gives each key and each length; raise ValueError on a wire type
    # you do not know (3 and 4 are deprecated groups) or on a length past the end.
    raise NotImplementedError("Need to implement for Task 5.2")
