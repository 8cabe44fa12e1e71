"""onnxkit.versioning, checked against onnx.defs and onnx.helper directly."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.defs
import pytest
from onnx import helper

import onnxkit
from onnxkit.versioning import (versions, VersionConversionError, changed_operators,
                                convert, coverage, diff, first_release_with_opset, format_history,
                                format_node_versions, format_support, implemented_versions,
                                latest_opset, model_versions, node_versions, releases, since_versions,
                                support_table, version_at)

OPSET11 = """
<ir_version: 6, opset_import: ["" : 11]>
g (float[2, 3] x) => (float[2] y, float[3, 2] r) {
  y = ReduceSum <axes = [1], keepdims = 0> (x)
  shape = Constant <value = int64[2] {3, 2}> ()
  r = Reshape (x, shape)
}"""


def schemas(op_type, domain=""):
    return sorted((s for s in onnx.defs.get_all_schemas_with_history()
                   if s.name == op_type and s.domain == domain), key=lambda s: s.since_version)


# --- IR version and opsets ------------------------------------------------------------

def test_releases_follow_onnx_version_table():
    rows = releases()
    assert [(r.onnx, r.ir_version, r.opset, r.ml_opset) for r in rows] == \
        [tuple(row[:4]) for row in helper.VERSION_TABLE]
    r = first_release_with_opset(18)
    assert (r.onnx, r.ir_version) == ("1.13.0", 8)
    assert first_release_with_opset(10 ** 6) is None
    assert latest_opset() == onnx.defs.onnx_opset_version()
    assert latest_opset("ai.onnx.ml") == onnx.defs.onnx_ml_opset_version()
    assert latest_opset("com.example") is None


def test_model_versions():
    mv = model_versions(OPSET11)
    assert (mv.ir_version, mv.opsets, mv.producer) == (6, {"": 11}, "")
    assert mv.min_ir_version == helper.find_min_ir_version_for([helper.make_opsetid("", 11)])
    assert str(mv).startswith("IR version 6")


# --- operator history ------------------------------------------------------------------

@pytest.mark.parametrize("op_type", ["Reshape", "Split", "ReduceSum", "Softmax", "Resize", "Clip"])
def test_versions_match_onnx_defs(op_type):
    history = versions(op_type)
    expected = schemas(op_type)
    assert [v.since_version for v in history] == [s.since_version for s in expected]
    assert since_versions(op_type) == [s.since_version for s in expected]
    for v, s in zip(history, expected):
        assert v.input_names == [p.name for p in s.inputs]
        assert set(v.attributes) == set(s.attributes)
        assert set(v.types) == {tc.type_param_str for tc in s.type_constraints}
    assert history[0].changes == ("first version",)


def test_attribute_that_became_an_input():
    by_version = {v.since_version: v for v in versions("ReduceSum")}
    assert "axes" in by_version[11].attributes and "axes" not in by_version[11].input_names
    assert by_version[13].input_names == ["data", "axes"]
    assert by_version[13].inputs[1] == "axes (optional)"
    assert "attribute 'axes' became input 'axes'" in by_version[13].changes
    assert "attribute 'noop_with_empty_axes' added (default 0)" in by_version[13].changes
    reshape = {v.since_version: v for v in versions("Reshape")}
    assert "attribute 'shape' became input 'shape'" in reshape[5].changes
    assert "attribute 'allowzero' added (default 0)" in reshape[14].changes
    split = {v.since_version: v for v in versions("Split")}
    assert "attribute 'split' became input 'split'" in split[13].changes
    assert "attribute 'num_outputs' added" in split[18].changes


def test_default_and_type_changes():
    softmax = {v.since_version: v for v in versions("Softmax")}
    assert softmax[11].attributes["axis"] == 1 and softmax[13].attributes["axis"] == -1
    assert "attribute 'axis' default 1 -> -1" in softmax[13].changes
    bf16 = "tensor(bfloat16)"
    s12, s13 = (onnx.defs.get_schema("Softmax", v) for v in (12, 13))
    assert bf16 not in s12.type_constraints[0].allowed_type_strs
    assert bf16 in s13.type_constraints[0].allowed_type_strs
    assert "T: + bfloat16" in softmax[13].changes
    assert versions("Upsample")[-1].deprecated and "deprecated" in versions("Upsample")[-1].changes


def test_diff_is_empty_when_only_the_meaning_changed():
    reduce = {v.since_version: v for v in versions("ReduceSum")}
    assert diff(reduce[1], reduce[11]) == []
    assert "ReduceSum-11: same signature" in format_history("ReduceSum")


def test_version_at_matches_get_schema():
    for op_type, opset in [("Reshape", 11), ("Reshape", 18), ("ReduceSum", 12), ("Gelu", 21)]:
        assert version_at(op_type, opset).since_version == onnx.defs.get_schema(op_type, opset).since_version
    with pytest.raises(KeyError, match="appears in opset 20"):
        version_at("Gelu", 19)
    with pytest.raises(KeyError, match="no operator"):
        versions("NoSuchOp")


# --- what a node means -----------------------------------------------------------------

def test_node_versions():
    rows = node_versions(OPSET11)
    by_op = {r.op_type: r for r in rows}
    assert by_op["Reshape"].since_version == onnx.defs.get_schema("Reshape", 11).since_version == 5
    assert by_op["ReduceSum"].since_version == 11
    assert by_op["ReduceSum"].latest == schemas("ReduceSum")[-1].since_version
    assert by_op["Reshape"].qualified == "ai.onnx::Reshape-5"
    assert "newer versions: 13" in by_op["ReduceSum"].note
    assert "Reshape" in format_node_versions(rows)


def test_node_versions_nested_and_custom():
    model = onnxkit.load("""
<ir_version: 8, opset_import: ["" : 18, "com.example" : 1]>
g (bool c, float[2] x) => (float[2] y) {
  y = If (c) <then_branch = t () => (float[2] a) { a = Relu (x) },
              else_branch = e () => (float[2] b) { b = com.example.Twice (x) }>
}""")
    rows = node_versions(model)
    assert [(r.path, r.op_type) for r in rows] == [("", "If"), ("If/then_branch", "Relu"),
                                                   ("If/else_branch", "Twice")]
    assert rows[1].since_version == 14 and rows[2].since_version is None
    assert "custom" in rows[2].note


# --- support table ---------------------------------------------------------------------

def test_support_table_against_the_registry():
    rows = {r.op_type: r for r in support_table(OPSET11)}
    assert rows["Reshape"].needed == 5 and rows["Reshape"].ok
    assert rows["Reshape"].implemented == tuple(implemented_versions("Reshape"))
    registry = onnxkit.Session(OPSET11).executor.registries[0]
    assert list(rows["ReduceSum"].implemented) == registry.versions("", "ReduceSum")
    assert "yes" in format_support(list(rows.values()))


def test_support_table_reports_what_is_missing():
    model = onnxkit.load("""
<ir_version: 8, opset_import: ["" : 18, "com.example" : 1]>
g (float[2] x) => (float[2] y) { y = com.example.Twice (x) }""")
    (row,) = support_table(model)
    assert (row.op_type, row.domain, row.ok, row.implemented) == ("Twice", "com.example", False, ())
    assert "NO" in format_support([row]) and "no onnxkit kernel" in row.note


def test_coverage_lists_every_onnx_operator():
    rows = coverage("reference")
    latest = {s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""}
    assert {r.op_type for r in rows} == latest
    gemm = next(r for r in rows if r.op_type == "Gemm")
    assert gemm.versions == tuple(s.since_version for s in schemas("Gemm"))
    assert set(gemm.implemented) <= set(gemm.versions)
    assert gemm.missing == tuple(v for v in gemm.versions if v not in gemm.implemented)


# --- the converter ---------------------------------------------------------------------

def test_convert_up_moves_axes_to_an_input_and_keeps_the_answer():
    model = onnxkit.load(OPSET11)
    up = convert(model, 13)
    assert model.opset_import[0].version == 11          # the input is not modified
    assert up.opset_import[0].version == 13
    assert up.ir_version == helper.find_min_ir_version_for([helper.make_opsetid("", 13)]) == 7
    assert convert(model, 13, raise_ir_version=False).ir_version == 6
    reduce_node = next(n for n in up.graph.node if n.op_type == "ReduceSum")
    assert len(reduce_node.input) == 2 and not reduce_node.attribute[0].name == "axes"
    assert changed_operators(model, 13) == [("ReduceSum", 11, 13), ("Constant", 11, 13), ("Reshape", 5, 13)]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    before = onnxkit.Session(model).run(None, {"x": x})
    after = onnxkit.Session(up).run(None, {"x": x})
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(after[0], np.array([3.0, 12.0], np.float32))


def test_convert_same_opset_is_a_copy():
    model = onnxkit.load(OPSET11)
    same = convert(model, 11)
    assert same == model and same is not model


def test_convert_failures_are_onnxkit_errors():
    up = convert(OPSET11, 13)
    with pytest.raises(VersionConversionError, match="no adapter for Reshape on the step to opset 12"):
        convert(up, 1)
    gelu = "<ir_version: 9, opset_import: [\"\" : 20]> g (float[3] x) => (float[3] y) { y = Gelu(x) }"
    with pytest.raises(VersionConversionError, match="Gelu does not exist before opset 20") as info:
        convert(gelu, 19)
    assert "Gelu 20 -> absent" in str(info.value)
    assert isinstance(info.value, onnxkit.OnnxkitError)
    with pytest.raises(VersionConversionError, match="knows ai.onnx opsets 1 to"):
        convert(OPSET11, onnx.defs.onnx_opset_version() + 1)
    ml_only = helper.make_model(helper.make_graph([], "g", [], []),
                                opset_imports=[helper.make_opsetid("ai.onnx.ml", 3)])
    with pytest.raises(VersionConversionError, match="imports no ai.onnx opset"):
        convert(ml_only, 13)
