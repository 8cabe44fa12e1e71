"""One test per bug the fuzzers found: the smallest model that showed it, now a clear error."""

from __future__ import annotations

import os
import random
import re
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit import errors
from onnxkit.ops.text._linear_regex import LinearRegex

SMALL = onnxkit.Limits(max_tensor_bytes=4 * 1024**2)


def _one_node(op_type, inputs, outputs, opset=21, initializers=(), **attrs):
    node = helper.make_node(op_type, [i for i, _ in inputs], outputs, name="n", **attrs)
    graph = helper.make_graph([node], "g", [onnx.ValueInfoProto(name=i) for i, _ in inputs],
                              [onnx.ValueInfoProto(name=o) for o in outputs], initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model, {i: v for i, v in inputs}


def test_unknown_elem_type_in_a_declared_output_plans():
    model = onnxkit.load('<ir_version: 10, opset_import: ["" : 21]> g (float[2] x) => (float[2] y) { y = Relu(x) }')
    model.graph.output[0].type.tensor_type.elem_type = 29  # no ONNX version defines 29
    sess = onnxkit.Session(model)
    assert sess.get_outputs()[0].type == "tensor(unknown(29))"


def test_unknown_elem_type_in_a_declared_input_is_an_input_error():
    model = onnxkit.load('<ir_version: 10, opset_import: ["" : 21]> g (float[2] x) => (float[2] y) { y = Relu(x) }')
    model.graph.input[0].type.tensor_type.elem_type = 99
    with pytest.raises(errors.InputError, match="element type onnxkit cannot hold"):
        onnxkit.Session(model).run(None, {"x": np.zeros(2, np.float32)})


def _external(tmp_path, location):
    w = helper.make_tensor("w", TensorProto.FLOAT, [2], [1.0, 2.0])
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    entry = w.external_data.add()
    entry.key, entry.value = "location", location
    model, _ = _one_node("Relu", [("x", None)], ["y"])
    model.graph.initializer.append(w)
    path = tmp_path / "m.onnx"
    path.write_bytes(model.SerializeToString())
    return str(path)


@pytest.mark.parametrize("location, error, fragment", [
    ("data.bin\x00.txt", errors.UnsafeModelError, "NUL byte"),
    ("loop.bin", errors.ModelLoadError, "cannot be resolved"),
    ("x" * 300, errors.ModelLoadError, "x" * 20),
])
def test_odd_external_data_paths_are_load_errors(tmp_path, location, error, fragment):
    os.symlink(tmp_path / "loop.bin", tmp_path / "loop.bin")
    with pytest.raises(error, match=re.escape(fragment)):
        onnxkit.load(_external(tmp_path, location))


def test_nul_in_a_model_path_is_a_load_error():
    with pytest.raises(errors.ModelLoadError):
        onnxkit.load("model\x00.onnx")


def test_negative_initializer_dims_are_a_load_error():
    model, _ = _one_node("Relu", [("x", None)], ["y"])
    model.graph.initializer.append(TensorProto(name="w", data_type=TensorProto.UINT2,
                                               dims=[2**40, 2**31, -2, 0, 1, 2]))
    with pytest.raises(errors.ModelLoadError, match="negative dimension"):
        onnxkit.Session(model)


def test_dft_length_is_checked_before_allocating():
    x = np.zeros((1, 16, 1), np.float32)
    model, feeds = _one_node("DFT", [("x", x), ("n", np.array(2**31, np.int64))], ["y"], opset=20)
    with pytest.raises(errors.LimitExceededError, match="DFT spectrum"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)
    feeds["n"] = np.array(0, np.int64)
    with pytest.raises(errors.InputError, match="dft_length must be at least 1"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)


def test_gather_checks_the_product_of_data_and_indices():
    data = np.zeros((5, 5, 2, 3000, 5), np.uint16)
    indices = np.zeros((5, 5, 2, 3000, 5), np.int32)
    model, feeds = _one_node("Gather", [("d", data), ("i", indices)], ["y"], opset=1)
    with pytest.raises(errors.LimitExceededError, match="Gather output"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)


def test_regex_full_match_is_linear_in_the_text():
    x = np.array(["a" * 5000 + "!", "a" * 40], dtype=object)
    model, feeds = _one_node("RegexFullMatch", [("s", x)], ["y"], pattern="(a+)+$")
    start = time.monotonic()
    (y,) = onnxkit.Session(model).run(None, feeds)
    assert y.tolist() == [False, True] and time.monotonic() - start < 5


@pytest.mark.parametrize("pattern", [r"(a)\1", r"(?=a)a", r"(?>a)", r"a++", r"(a{1000}){1000}"])
def test_regex_constructs_re2_lacks_are_refused(pattern):
    model, feeds = _one_node("RegexFullMatch", [("s", np.array(["a"], dtype=object))], ["y"], pattern=pattern)
    with pytest.raises(errors.AttributeMismatchError, match="not a usable regular expression"):
        onnxkit.Session(model).run(None, feeds)


PATTERNS = [r"[a-z]+( [a-z]+)*", r"(a+)+$", r"^ab|cd$", r"(?i)hello\s\w+", r"a{2,3}b?", r"\bfoo\b.*",
            r".*\d+", r"[^abc]*", r"(x|y)*z{0,2}", r"a$\n?", r"(?s).+", r"(?m)^a$\n^b$", r"\d{3}-\d{4}",
            r"[\w.]+@\w+\.(com|org)", r"(ab)*?", r"a|", r"()*", r"(a*)*b", r"(?i)[a-c]+", r"\Aab\Z",
            r"\B.\B", r"é+", r"[\s\S]{2,}", r"(?a)\w+", r"[[:alpha:]]", r"x*?y+?"]


@pytest.mark.filterwarnings("ignore::FutureWarning")  # re warns about "[[" (a possible set)
@pytest.mark.parametrize("pattern", PATTERNS)
def test_linear_regex_agrees_with_python_re(pattern):
    rng = random.Random(pattern)
    ours, theirs = LinearRegex(pattern), re.compile(pattern)
    for _ in range(300):
        text = "".join(rng.choice("ab cdxyz-@.\n1234ABé_:[]") for _ in range(rng.randint(0, 8)))
        assert ours.fullmatch(text) == (theirs.fullmatch(text) is not None), (pattern, text)


def test_split_num_outputs_must_match_the_node_before_sizes_are_listed():
    model, feeds = _one_node("Split", [("x", np.zeros((5, 3), np.int64))], ["y"], opset=18,
                             axis=-2, num_outputs=10**9)
    with pytest.raises(errors.KernelError, match="num_outputs=1000000000, but the node has 1 outputs"):
        onnxkit.Session(model).run(None, feeds)


NESTED_LOOPS = '''<ir_version: 10, opset_import: ["" : 21]>
g (int64 M, float[1] x) => (float[1] y) {
  t = Constant <value = bool {1}> ()
  y = Loop (M, t, x) <body = outer (int64 i, bool c, float[1] a) => (bool c2, float[1] b) {
    c2 = Identity(c)
    b = Loop (M, c, a) <body = inner (int64 j, bool d, float[1] u) => (bool d2, float[1] v) {
      d2 = Identity(d)
      v = Identity(u)
    }>
  }>
}'''


def test_nested_loops_share_one_iteration_budget():
    """Each loop alone is within the limit; together they multiply (1M^3 would never end)."""
    sess = onnxkit.Session(NESTED_LOOPS, limits=onnxkit.Limits(max_loop_iterations=2000))
    x = np.ones(1, np.float32)
    assert sess.run(None, {"M": np.array(40), "x": x})[0].tolist() == [1.0]  # 40 + 1600 runs
    with pytest.raises(errors.LimitExceededError, match="nested ones included"):
        sess.run(None, {"M": np.array(1000), "x": x})
    assert sess.run(None, {"M": np.array(40), "x": x})[0].tolist() == [1.0]  # per run, not per session


@pytest.mark.parametrize("op_type, dtype", [("Add", np.float32), ("Equal", np.float32), ("And", bool),
                                            ("BitwiseAnd", np.int64), ("Mod", np.int64), ("Pow", np.float32),
                                            ("Max", np.float32), ("Sum", np.float32)])
def test_broadcasting_is_checked_before_numpy_allocates(op_type, dtype):
    """[N, 1] op [1, N] has N * N entries: 12 KB of inputs asked for 36 MB."""
    a, b = np.ones((3000, 1), dtype), np.ones((1, 3000), dtype)
    model, feeds = _one_node(op_type, [("a", a), ("b", b)], ["y"])
    with pytest.raises(errors.LimitExceededError, match="broadcast result of shape \\[3000, 3000\\]"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)


def test_where_checks_its_three_way_broadcast():
    feeds = [("c", np.ones((3000, 1, 1), bool)), ("x", np.ones((1, 3000, 1), np.float32)),
             ("y", np.ones((1, 1, 3000), np.float32))]
    model, feeds = _one_node("Where", feeds, ["z"])
    with pytest.raises(errors.LimitExceededError, match="broadcast result"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)


@pytest.mark.parametrize("op_type, opset, feeds, fragment", [
    ("STFT", 17, [("x", np.ones((1, 20000, 1), np.float32)), ("s", np.array(1, np.int64)), ("", None),
                  ("w", np.array(10000, np.int64))], "STFT frames"),
    ("GatherND", 13, [("d", np.ones((1, 3000), np.float32)), ("i", np.zeros((3000, 1), np.int64))],
     "GatherND output"),
    ("Attention", 23, [(n, np.ones((1, 1, 4000, 1), np.float32)) for n in "qkv"], "Attention scores"),
])
def test_quadratic_outputs_are_checked(op_type, opset, feeds, fragment):
    """Outputs that grow like the square of an input (overlapping frames, index tuples
    times slices, sequence x sequence scores) are checked before they are built."""
    node = helper.make_node(op_type, [n for n, _ in feeds], ["y"])
    graph = helper.make_graph([node], "g", [onnx.ValueInfoProto(name=n) for n, _ in feeds if n],
                              [onnx.ValueInfoProto(name="y")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    with pytest.raises(errors.LimitExceededError, match=fragment):
        onnxkit.Session(model, limits=SMALL).run(None, {n: v for n, v in feeds if n})


def test_tfidf_output_width_is_checked():
    model, feeds = _one_node("TfIdfVectorizer", [("x", np.ones((2, 3), np.int64))], ["y"], opset=9,
                             mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
                             ngram_counts=[0], ngram_indexes=[10**9], pool_int64s=[1])
    with pytest.raises(errors.LimitExceededError, match="TfIdfVectorizer output"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)


def test_external_data_longer_than_its_tensor_is_refused_before_reading(tmp_path):
    (tmp_path / "big.bin").write_bytes(bytes(1 << 16))
    with pytest.raises(errors.ModelLoadError, match="holds 65536 bytes, but dims \\[2\\] of FLOAT need 8"):
        onnxkit.load(_external(tmp_path, "big.bin"))


def test_string_concat_checks_its_broadcast():
    x, y = np.full((2, 3000, 1), "a", dtype=object), np.full((3000,), "b", dtype=object)
    model, feeds = _one_node("StringConcat", [("x", x), ("y", y)], ["z"])
    with pytest.raises(errors.LimitExceededError, match="broadcast result"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)


@pytest.mark.parametrize("attrs, fragment", [
    ({"ngram_counts": [2**63 - 1, 3], "max_gram_length": 2}, "ngram_counts"),
    ({"ngram_counts": [-(2**62)], "max_gram_length": 1}, "ngram_counts"),
    ({"ngram_counts": [0], "max_gram_length": 2**62}, "max_gram_length"),
])
def test_tfidf_attributes_that_would_loop_for_ever_are_refused(attrs, fragment):
    base = dict(mode="TF", min_gram_length=1, max_skip_count=0, ngram_indexes=[0], pool_int64s=[1])
    model, feeds = _one_node("TfIdfVectorizer", [("x", np.ones((2, 3), np.int64))], ["y"], opset=9,
                             **base, **attrs)
    start = time.monotonic()
    with pytest.raises(errors.AttributeMismatchError, match=fragment):
        onnxkit.Session(model).run(None, feeds)
    assert time.monotonic() - start < 5


def _expect_limit(model, feeds, fragment=None):
    with pytest.raises(errors.LimitExceededError, match=fragment):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)


X4 = np.ones((1, 1, 3, 4), np.float32)


def test_resize_tiny_scale_then_huge_scales_checks_each_axis():
    """The output is empty (1e-16 * 1 floors to 0), but each later axis asked for 5e7 samples."""
    scales = np.array([1e-16, 5e7, 5e7, 5e7], np.float32)
    model, feeds = _one_node("Resize", [("x", X4), ("", None), ("s", scales)], ["y"], opset=19)
    model.graph.input.pop(1)
    del feeds[""]
    with pytest.raises(errors.KernelError, match="too large for numpy"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)
    feeds["s"] = np.array([1e-16, 5e7, 1, 1], np.float32)  # empty: no resampling at all
    (y,) = onnxkit.Session(model, limits=SMALL).run(None, feeds)
    assert y.shape == (0, 50000000, 3, 4)
    feeds["s"] = np.array([1, 1, 250, 250], np.float32)  # 3 MB of float32 fits; the float64 one does not
    _expect_limit(model, feeds, "Resize intermediate")


def test_resize_refuses_negative_sizes():
    sizes = np.array([1000000, -2**63, 5, 2], np.int64)
    model, feeds = _one_node("Resize", [("x", X4), ("", None), ("", None), ("z", sizes)], ["y"],
                             opset=19, keep_aspect_ratio_policy="not_smaller")
    for _ in range(2):
        model.graph.input.pop(1)
    feeds.pop("")
    with pytest.raises(errors.KernelError, match="must not be negative"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)


def test_upsample_checks_its_output():
    model, feeds = _one_node("Upsample", [("x", X4), ("s", np.array([1, 1, 1000, 1000], np.float32))],
                             ["y"], opset=9)
    _expect_limit(model, feeds, "Resize")


def test_roi_align_output_width_is_checked():
    feeds = [("x", X4), ("r", np.array([[0, 0, 2, 2]], np.float32)), ("b", np.zeros(1, np.int64))]
    model, feeds = _one_node("RoiAlign", feeds, ["y"], opset=16, output_width=1000000)
    _expect_limit(model, feeds, "RoiAlign")


def test_max_unpool_kernel_shape_must_fit_the_input():
    x = np.ones((1, 5, 2, 5, 2), np.float16)
    feeds = [("x", x), ("i", np.zeros(x.shape, np.int64))]
    model, feeds = _one_node("MaxUnpool", feeds, ["y"], opset=11, kernel_shape=[255, -2, 1, 10**9, 4, 3],
                             strides=[2**40, 2**40, 2**40])
    with pytest.raises(errors.KernelError, match="kernel_shape has 6 values"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)
    model, feeds = _one_node("MaxUnpool", [("x", x), ("i", np.zeros(x.shape, np.int64))], ["y"],
                             opset=11, kernel_shape=[1, 1, 1], strides=[2**20, 1, 1])
    _expect_limit(model, feeds, "MaxUnpool")


def test_lrn_huge_size_does_not_pad_the_channels():
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 2, 2)
    model, feeds = _one_node("LRN", [("x", x)], ["y"], size=2**32 - 1)
    (y,) = onnxkit.Session(model, limits=SMALL).run(None, feeds)
    square_sum = (x * x).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(y, x / (1 + 0.0001 / (2**32 - 1) * square_sum) ** 0.75, rtol=1e-6)


def test_max_pool_padding_is_checked():
    x = np.ones((1, 1, 3, 3), np.float32)
    model, feeds = _one_node("MaxPool", [("x", x)], ["y"], kernel_shape=[1, 1], pads=[0, 0, 100000, 100000])
    _expect_limit(model, feeds, "padded input")


def test_instance_norm_scale_must_be_per_channel():
    feeds = [("x", np.ones((1, 1, 3000), np.float32)), ("s", np.ones((3, 1, 3000), np.float32)),
             ("b", np.zeros(1, np.float32))]
    model, feeds = _one_node("InstanceNormalization", feeds, ["y"], opset=1)
    with pytest.raises(errors.KernelError, match="one value per channel"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)


def test_layer_norm_scale_cannot_enlarge_x():
    feeds = [("x", np.ones((3000, 1), np.float32)), ("s", np.ones(3000, np.float32))]
    model, feeds = _one_node("LayerNormalization", feeds, ["y"], opset=17)
    with pytest.raises(errors.KernelError, match="does not broadcast to X"):
        onnxkit.Session(model, limits=SMALL).run(None, feeds)


@pytest.mark.parametrize("op_type, feeds, attrs", [
    ("MatMul", [("a", np.ones((3000, 1, 1, 1), np.float32)), ("b", np.ones((3000, 1, 1), np.float32))], {}),
    ("MatMul", [("a", np.ones((3000, 1), np.float32)), ("b", np.ones((1, 3000), np.float32))], {}),
    ("Einsum", [("a", np.ones(3000, np.float32)), ("b", np.ones(3000, np.float32))], {"equation": "i,j->ij"}),
    ("Einsum", [("a", np.ones(3000, np.float32)), ("b", np.ones(3000, np.float32))], {"equation": "i,j"}),
    ("MatMulInteger", [("a", np.ones((3000, 1), np.uint8)), ("b", np.ones((1, 3000), np.uint8))], {}),
    ("Gemm", [("a", np.ones((3000, 1), np.float32)), ("b", np.ones((1, 3000), np.float32))], {}),
])
def test_products_check_their_output_shape(op_type, feeds, attrs):
    model, feeds = _one_node(op_type, feeds, ["y"], **attrs)
    _expect_limit(model, feeds, "output")


def test_conv_output_is_checked():
    feeds = [("x", np.ones((1, 1, 3000), np.float32)), ("w", np.ones((3000, 1, 1), np.float32))]
    model, feeds = _one_node("Conv", feeds, ["y"])
    _expect_limit(model, feeds, "Conv output")
