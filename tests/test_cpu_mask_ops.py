"""The cpu kernels of the small ops transformers run on their masks and ids every step:
Cast, And / Or / Xor / Not, IsNaN, Where (``logical``, ``cast``), Gather, GatherND,
Expand and Transpose (``tensor``).

Oracle: onnxruntime on the same one-node model. The profiler names the kernel that ran:
the plain cases must run the cpu kernel itself, the others (``[reference]``) hand the
node to the reference kernel, and a bad input still gets the reference's onnxkit error.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

from onnxkit import Session
from onnxkit.errors import OnnxkitError
from onnxkit.runtime.profile import Profiler

ort = pytest.importorskip("onnxruntime")

TYPES = {np.dtype(np.bool_): TensorProto.BOOL, np.dtype(np.int64): TensorProto.INT64,
         np.dtype(np.int32): TensorProto.INT32, np.dtype(np.float32): TensorProto.FLOAT,
         np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.float64): TensorProto.DOUBLE}


def _model(op_type, inputs: dict, out_type, opset=17, **attrs):
    node = helper.make_node(op_type, list(inputs), ["Y"], **attrs)
    graph = helper.make_graph(
        [node], op_type.lower(),
        [helper.make_tensor_value_info(n, TYPES[v.dtype], v.shape) for n, v in inputs.items()],
        [helper.make_tensor_value_info("Y", out_type, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _run(model, feeds):
    sess = Session(model, executor="cpu", level=0)
    prof = Profiler(sess)
    (y,) = sess.run(None, feeds, trace=prof)
    return y, prof.rows()[0]["kernel"]


def _ort(model, feeds):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"]).run(None, feeds)[0]


RNG = np.random.default_rng(2)
MASK = (RNG.random((2, 9)) > 0.3).astype(np.int64)
FLOATS = np.array([[0.0, -0.0, 1.5, np.nan], [np.inf, -2.0, 0.25, 0.0]], np.float32)
CAUSAL = np.tril(np.ones((1, 1, 9, 9), bool))
B = RNG.random((2, 1, 1, 9)) > 0.5

CASES = {  # name: (op, inputs, output type, attributes, runs the reference kernel)
    "Cast int64 -> bool": ("Cast", {"x": MASK}, TensorProto.BOOL, dict(to=TensorProto.BOOL), False),
    "Cast int64 -> float": ("Cast", {"x": MASK}, TensorProto.FLOAT, dict(to=TensorProto.FLOAT), False),
    "Cast float -> bool (NaN, -0)": ("Cast", {"x": FLOATS}, TensorProto.BOOL,
                                     dict(to=TensorProto.BOOL), False),
    "Cast float -> int32": ("Cast", {"x": np.array([1.7, -2.9, 3.0], np.float32)},
                            TensorProto.INT32, dict(to=TensorProto.INT32), False),
    "Cast float -> float16": ("Cast", {"x": FLOATS}, TensorProto.FLOAT16,
                              dict(to=TensorProto.FLOAT16), False),
    "Cast same type": ("Cast", {"x": FLOATS}, TensorProto.FLOAT, dict(to=TensorProto.FLOAT), False),
    "Cast int64 -> string": ("Cast", {"x": MASK}, TensorProto.STRING,
                             dict(to=TensorProto.STRING), True),
    "And broadcast": ("And", {"a": CAUSAL, "b": B}, TensorProto.BOOL, {}, False),
    "Or": ("Or", {"a": B, "b": ~B}, TensorProto.BOOL, {}, False),
    "Xor": ("Xor", {"a": CAUSAL, "b": B}, TensorProto.BOOL, {}, False),
    "Not": ("Not", {"a": B}, TensorProto.BOOL, {}, False),
    "IsNaN": ("IsNaN", {"x": FLOATS}, TensorProto.BOOL, {}, False),
    "IsNaN float16": ("IsNaN", {"x": FLOATS.astype(np.float16)}, TensorProto.BOOL, {}, False),
    "Where mask": ("Where", {"c": CAUSAL & B, "x": np.zeros(1, np.float32),
                             "y": np.full(1, -np.inf, np.float32)}, TensorProto.FLOAT, {}, False),
    "Where scalars": ("Where", {"c": np.array(True), "x": np.array(1, np.int64),
                                "y": np.array(2, np.int64)}, TensorProto.INT64, {}, False),
    "Where large": ("Where", {"c": RNG.random((64, 64)) > 0.5,
                              "x": RNG.standard_normal((64, 64)).astype(np.float32),
                              "y": np.zeros((64, 64), np.float32)}, TensorProto.FLOAT, {}, False),
    "Where bias by heads (T5)": ("Where", {"c": RNG.random((2, 1, 16, 16)) > 0.2,
                                           "x": RNG.standard_normal((1, 4, 16, 16)).astype(
                                               np.float32),
                                           "y": np.array(np.finfo(np.float32).min, np.float32)},
                                 TensorProto.FLOAT, {}, False),
    "Gather embedding, negative ids": (
        "Gather", {"w": RNG.standard_normal((50, 8)).astype(np.float32),
                   "i": np.array([[3, -1], [0, 49]])}, TensorProto.FLOAT, {}, False),
    "Gather axis 1, int32 ids": (
        "Gather", {"w": RNG.standard_normal((3, 5, 2)).astype(np.float32),
                   "i": np.array([4, -5, 2], np.int32)}, TensorProto.FLOAT, dict(axis=1), False),
    "GatherND mask": ("GatherND", {"m": MASK.astype(bool),
                                   "i": np.stack(np.meshgrid(np.arange(2), np.arange(9),
                                                             indexing="ij"), -1)[:, None, None]},
                      TensorProto.BOOL, {}, False),
    "GatherND slices, negative": ("GatherND", {"d": RNG.standard_normal((4, 3, 2)).astype(
        np.float32), "i": np.array([[-1], [2]])}, TensorProto.FLOAT, {}, False),
    "GatherND batch_dims 1": ("GatherND", {"d": RNG.standard_normal((2, 3, 2)).astype(np.float32),
                                           "i": np.array([[1], [2]])}, TensorProto.FLOAT,
                              dict(batch_dims=1), True),
    "Expand keys to heads": ("Expand", {"k": RNG.standard_normal((2, 2, 1, 9, 4)).astype(
        np.float32), "s": np.array([2, 2, 2, 9, 4])}, TensorProto.FLOAT, {}, False),
    "Transpose heads": ("Transpose", {"x": RNG.standard_normal((2, 1, 4, 16)).astype(np.float32)},
                        TensorProto.FLOAT, dict(perm=[0, 2, 1, 3]), False),
    "Transpose, no perm": ("Transpose", {"x": RNG.standard_normal((2, 3, 4)).astype(np.float32)},
                           TensorProto.FLOAT, {}, False),
    "Expand to a larger rank and past shape": (
        "Expand", {"x": RNG.standard_normal((3, 1)).astype(np.float32),
                   "s": np.array([2, 1, 4])}, TensorProto.FLOAT, {}, False),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_onnxruntime(name):
    op_type, feeds, out_type, attrs, reference = CASES[name]
    model = _model(op_type, feeds, out_type, **attrs)
    got, kernel = _run(model, feeds)
    assert kernel.endswith(" [reference]") == reference, kernel
    assert kernel.startswith("cpu:")
    expected = _ort(model, feeds)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


BAD = {  # name: (op, inputs, output type, attributes, what the error names)
    "Gather id past the end": ("Gather", {"w": np.ones((5, 2), np.float32),
                                          "i": np.array([5])}, TensorProto.FLOAT, {}, "index 5"),
    "Gather id before the start": ("Gather", {"w": np.ones((5, 2), np.float32),
                                              "i": np.array([-6])}, TensorProto.FLOAT, {}, "-6"),
    "GatherND index out of range": ("GatherND", {"d": np.ones((4, 3), np.float32),
                                                 "i": np.array([[4, 0]])}, TensorProto.FLOAT, {},
                                    "out of range"),
    "Where shapes": ("Where", {"c": np.ones((2, 3), bool), "x": np.ones((4,), np.float32),
                               "y": np.ones((1,), np.float32)}, TensorProto.FLOAT, {}, "Where"),
    "And shapes": ("And", {"a": np.ones((2, 3), bool), "b": np.ones((2,), bool)},
                   TensorProto.BOOL, {}, "And"),
    "Transpose negative axis": ("Transpose", {"x": np.ones((2, 3), np.float32)},
                                TensorProto.FLOAT, dict(perm=[-1, 0]), "perm"),
    "Transpose repeated axis": ("Transpose", {"x": np.ones((2, 3), np.float32)},
                                TensorProto.FLOAT, dict(perm=[1, 1]), "perm"),
    "Expand shape": ("Expand", {"x": np.ones((3,), np.float32), "s": np.array([2, 4])},
                     TensorProto.FLOAT, {}, "Expand"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_inputs_get_the_reference_error(name):
    op_type, feeds, out_type, attrs, names = BAD[name]
    with pytest.raises(OnnxkitError, match=names):
        Session(_model(op_type, feeds, out_type, **attrs), executor="cpu", level=0).run(None, feeds)


def test_a_broadcast_past_the_tensor_limit_is_refused():
    """And of [N, 1] and [1, N] makes N * N values: checked before numpy allocates them."""
    import onnxkit

    a, b = np.ones((2048, 1), bool), np.ones((1, 2048), bool)
    model = _model("And", {"a": a, "b": b}, TensorProto.BOOL)
    sess = Session(model, executor="cpu", level=0,
                   limits=onnxkit.Limits(max_tensor_bytes=1 << 20))
    with pytest.raises(onnxkit.errors.LimitExceededError, match="max_tensor_bytes"):
        sess.run(None, {"a": a, "b": b})
