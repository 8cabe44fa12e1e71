"""A byte-level view of a serialized ONNX model, for teaching.

    from onnxkit.protobuf import dump, walk, size_breakdown
    print(dump(model))                   # every field: offset, tag, size, name, value
    fields = walk(model)                 # the same as a tree of Field objects
    print(size_breakdown(model))         # bytes of weights vs graph structure

``wire`` reads the protobuf wire format with no schema; ``view`` names the fields with
onnx's own descriptors (``onnx.ModelProto.DESCRIPTOR``); ``dump`` and ``sizes`` print.
"""

from onnxkit.protobuf.dump import dump, explain_tag, hexdump
from onnxkit.protobuf.sizes import SizeBreakdown, size_breakdown
from onnxkit.protobuf.view import Field, iter_all, select, walk
from onnxkit.protobuf.wire import WireError, decode_varint, encode_tag, encode_varint, iter_fields

__all__ = ["dump", "hexdump", "explain_tag", "walk", "select", "iter_all", "Field",
           "size_breakdown", "SizeBreakdown", "encode_varint", "decode_varint", "encode_tag",
           "iter_fields", "WireError"]
