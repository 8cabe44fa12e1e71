"""A corpus of hostile and broken models, each paired with the onnxkit error it must raise.

    python -m tests.hostile.corpus OUT_DIR     # writes every model as OUT_DIR/<name>.onnx

Each entry: name -> (builder, expected error class, fragment of the message, limits, feeds).
"""

from __future__ import annotations

import os
import sys

import numpy as np
from onnx import TensorProto, helper

from onnxkit import errors
from onnxkit.runtime.limits import Limits

F = TensorProto.FLOAT


def _model(nodes, inputs, outputs, initializers=(), opsets=(("", 18),), functions=()):
    graph = helper.make_graph(nodes, "hostile", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                              functions=list(functions))
    model.ir_version = 8
    return model


def _vi(name, shape=(2,), elem=F):
    return helper.make_tensor_value_info(name, elem, list(shape) if shape is not None else None)


def cycle():
    return _model([helper.make_node("Relu", ["b"], ["a"], name="first"),
                   helper.make_node("Relu", ["a"], ["b"], name="second")], [_vi("x")], [_vi("a")])


def missing_producer():
    return _model([helper.make_node("Relu", ["nowhere"], ["y"], name="orphan")], [_vi("x")], [_vi("y")])


def duplicate_outputs():
    return _model([helper.make_node("Relu", ["x"], ["y"], name="one"),
                   helper.make_node("Abs", ["x"], ["y"], name="two")], [_vi("x")], [_vi("y")])


def unknown_domain():
    return _model([helper.make_node("Relu", ["x"], ["y"], domain="com.evil", name="n")],
                  [_vi("x")], [_vi("y")])


def unknown_operator():
    return _model([helper.make_node("DefinitelyNotAnOp", ["x"], ["y"], name="mystery")],
                  [_vi("x")], [_vi("y")])


def attribute_type_mismatch():
    node = helper.make_node("LeakyRelu", ["x"], ["y"], name="leaky")
    node.attribute.append(helper.make_attribute("alpha", "a lot"))
    return _model([node], [_vi("x")], [_vi("y")])


def absurd_declared_shape():
    return _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", (100000, 100000, 100000))],
                  [_vi("y", None)])


def absurd_constant_of_shape():
    shape = helper.make_tensor("shape", TensorProto.INT64, [3], [100000, 100000, 100000])
    return _model([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="balloon")],
                  [], [_vi("y", None)], initializers=[shape])


def endless_loop():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
        [_vi("i", (), TensorProto.INT64), _vi("cond_in", (), TensorProto.BOOL)],
        [_vi("cond_out", (), TensorProto.BOOL)])
    trips = helper.make_tensor("trips", TensorProto.INT64, [], [2**62])
    cond = helper.make_tensor("cond", TensorProto.BOOL, [], [True])
    return _model([helper.make_node("Loop", ["trips", "cond"], [], body=body, name="forever")],
                  [], [], initializers=[trips, cond])


def self_recursive_function():
    fn = helper.make_function("evil", "Again", ["a"], ["b"],
                              [helper.make_node("Again", ["a"], ["b"], domain="evil")],
                              [helper.make_opsetid("", 18), helper.make_opsetid("evil", 1)])
    return _model([helper.make_node("Again", ["x"], ["y"], domain="evil", name="call")],
                  [_vi("x")], [_vi("y")], opsets=(("", 18), ("evil", 1)), functions=[fn])


def deeply_nested_if(depth: int = 25):
    """If inside If inside If...: a chain (the else branches are leaves, so the size is linear)."""
    inner = helper.make_graph([helper.make_node("Identity", ["x"], ["o0"])], "leaf", [], [_vi("o0")])
    for level in range(1, depth):
        leaf = helper.make_graph([helper.make_node("Identity", ["x"], [f"e{level}"])], "else", [],
                                 [_vi(f"e{level}")])
        node = helper.make_node("If", ["c"], [f"o{level}"], then_branch=inner, else_branch=leaf)
        inner = helper.make_graph([node], f"level{level}", [], [_vi(f"o{level}")])
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["e0"])], "else", [], [_vi("e0")])
    top = helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=leaf)
    return _model([top], [_vi("x"), _vi("c", (), TensorProto.BOOL)], [_vi("y")])


def malformed_initializer():
    w = helper.make_tensor("w", F, [4], [1.0, 2.0, 3.0, 4.0])
    w.raw_data = b"\x00\x01\x02"  # 3 bytes cannot hold 4 floats
    del w.float_data[:]
    return _model([helper.make_node("Add", ["x", "w"], ["y"])], [_vi("x", (4,))], [_vi("y", (4,))],
                  initializers=[w])


def huge_initializer_dims():
    w = TensorProto(name="w", data_type=F, dims=[2**31, 2**31])
    return _model([helper.make_node("Add", ["x", "w"], ["y"])], [_vi("x")], [_vi("y", None)],
                  initializers=[w])


def too_many_inputs():
    return _model([helper.make_node("Relu", ["x", "x", "x"], ["y"], name="greedy")],
                  [_vi("x")], [_vi("y")])


def output_never_produced():
    return _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x")], [_vi("y"), _vi("ghost")])


def reshape_to_impossible_shape():
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [3, 5])
    return _model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="squash")],
                  [_vi("x", (2, 2))], [_vi("y", None)], initializers=[shape])


SMALL = Limits(max_tensor_bytes=64 * 1024**2, max_loop_iterations=10_000, max_graph_depth=16)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    length, out = len(payload), bytearray()
    key = (number << 3) | 2
    for value in (key, length):
        while True:
            byte = value & 0x7F
            value >>= 7
            out.append(byte | (0x80 if value else 0))
            if not value:
                break
    return bytes(out) + payload


def protobuf_bomb(depth: int = 400) -> bytes:
    """Raw bytes of a model whose If branches nest ``depth`` levels: deeper than protobuf
    decodes (helper.make_graph cannot even build it)."""
    graph = b""
    for _ in range(depth):
        attr = _field(1, b"then_branch") + bytes([0xA0, 0x01, 5]) + _field(6, graph)  # type = GRAPH
        node = _field(4, b"If") + _field(5, attr)
        graph = _field(1, node)
    opset = bytes([2 << 3, 18])  # OperatorSetIdProto.version = 18
    return bytes([1 << 3, 8]) + _field(7, graph) + _field(8, opset)
X2 = {"x": np.ones(2, np.float32)}

# name -> (builder, error class, message fragment, limits, feeds or None to stop after planning)
CORPUS = {
    "cycle": (cycle, errors.GraphError, "cycle", None, None),
    "missing_producer": (missing_producer, errors.GraphError, "'nowhere' is produced by no node", None, None),
    "duplicate_outputs": (duplicate_outputs, errors.GraphError, "output 'y' is already defined", None, None),
    "unknown_domain": (unknown_domain, errors.NotImplementedOpError, "does not import domain 'com.evil'", None, None),
    "unknown_operator": (unknown_operator, errors.NotImplementedOpError, "DefinitelyNotAnOp", None, None),
    "attribute_type_mismatch": (attribute_type_mismatch, errors.AttributeMismatchError, "'alpha' must be FLOAT", None, None),
    "absurd_declared_shape": (absurd_declared_shape, errors.LimitExceededError, "max_tensor_bytes", None, None),
    "absurd_constant_of_shape": (absurd_constant_of_shape, errors.LimitExceededError, "'balloon' (ConstantOfShape", SMALL, {}),
    "endless_loop": (endless_loop, errors.LimitExceededError, "max_loop_iterations", SMALL, {}),
    "self_recursive_function": (self_recursive_function, errors.LimitExceededError, "max_graph_depth", SMALL, None),
    "deeply_nested_if": (deeply_nested_if, errors.LimitExceededError, "max_graph_depth", SMALL, None),
    "malformed_initializer": (malformed_initializer, errors.ModelLoadError, "tensor 'w'", None, None),
    "huge_initializer_dims": (huge_initializer_dims, errors.LimitExceededError, "tensor 'w'", SMALL, None),
    "too_many_inputs": (too_many_inputs, errors.GraphError, "'greedy'", None, None),
    "output_never_produced": (output_never_produced, errors.GraphError, "'ghost' is produced by no node", None, None),
    "reshape_to_impossible_shape": (reshape_to_impossible_shape, errors.KernelError, "'squash'", None,
                                    {"x": np.ones((2, 2), np.float32)}),
}


def build(folder: str) -> list[str]:
    os.makedirs(folder, exist_ok=True)
    paths = []
    for name, (builder, *_rest) in CORPUS.items():
        path = os.path.join(folder, f"{name}.onnx")
        with open(path, "wb") as f:
            f.write(builder().SerializeToString())
        paths.append(path)
    return paths


if __name__ == "__main__":
    for p in build(sys.argv[1] if len(sys.argv) > 1 else "hostile-corpus"):
        print(p)
