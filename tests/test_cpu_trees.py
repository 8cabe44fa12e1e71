"""Tree ensembles on the cpu executor (``onnxkit.kernels.cpu.trees``): the Numba walk and
the kept node tables must answer exactly as the reference kernel's numpy walk does, and
as onnxruntime / hand-worked trees say."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit.errors import OnnxkitError

ML = "ai.onnx.ml"


def _model(node, x_type=TensorProto.FLOAT, n_features=2, outputs=None):
    outputs = outputs or [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)]
    graph = helper.make_graph([node], "trees",
                              [helper.make_tensor_value_info("X", x_type, [None, n_features])],
                              outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(ML, 3)])


def _both(model, X):
    feeds = {"X": X}
    return (onnxkit.Session(model, executor="cpu").run(None, feeds),
            onnxkit.Session(model, executor="reference").run(None, feeds))


def _regressor(modes, values, missing=None, truenodes=(1, 0, 0), falsenodes=(2, 0, 0)):
    """One tree: node 0 splits on feature 0 (its mode, threshold, missing flag); leaf 1
    (true) votes 10, leaf 2 (false) votes 20."""
    attrs = dict(nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
                 nodes_values=values, nodes_modes=modes, nodes_truenodeids=list(truenodes),
                 nodes_falsenodeids=list(falsenodes), target_treeids=[0, 0],
                 target_nodeids=[1, 2], target_ids=[0, 0], target_weights=[10.0, 20.0],
                 n_targets=1)
    if missing is not None:
        attrs["nodes_missing_value_tracks_true"] = missing
    return helper.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, **attrs)


X_MODES = np.array([[0.0, 0], [0.5, 0], [1.0, 0], [np.nan, 0]], np.float32)
# per mode, threshold 0.5: the leaf's vote for x = 0, 0.5, 1, NaN (NaN compares false,
# except !=; with missing_value_tracks_true it goes the true way)
EXPECTED = {
    "BRANCH_LEQ": [10, 10, 20, 20], "BRANCH_LT": [10, 20, 20, 20],
    "BRANCH_GTE": [20, 10, 10, 20], "BRANCH_GT": [20, 20, 10, 20],
    "BRANCH_EQ": [20, 10, 20, 20], "BRANCH_NEQ": [10, 20, 10, 10],
}


@pytest.mark.parametrize("mode", sorted(EXPECTED))
@pytest.mark.parametrize("missing", [0, 1])
def test_every_mode_and_nan_rule_as_worked_by_hand(mode, missing):
    model = _model(_regressor([mode, "LEAF", "LEAF"], [0.5, 0, 0], [missing, 0, 0]))
    (got,), (ref,) = _both(model, X_MODES)
    expected = np.array(EXPECTED[mode], np.float32)
    if missing:
        expected[3] = 10
    np.testing.assert_array_equal(got.ravel(), expected)
    np.testing.assert_array_equal(got, ref)


def test_int64_features_compare_as_float64():
    """2**40 + 1 is not a float32: compared in float32 it would equal the threshold."""
    big = float(2 ** 40)
    model = _model(_regressor(["BRANCH_LEQ", "LEAF", "LEAF"], [0.0, 0, 0]),
                   x_type=TensorProto.INT64)
    node = model.graph.node[0]
    del node.attribute[[a.name for a in node.attribute].index("nodes_values")]
    node.attribute.append(helper.make_attribute("nodes_values_as_tensor", helper.make_tensor(
        "v", TensorProto.DOUBLE, [3], [big, 0.0, 0.0])))
    X = np.array([[2 ** 40, 0], [2 ** 40 + 1, 0], [-5, 0]], np.int64)
    (got,), (ref,) = _both(model, X)
    np.testing.assert_array_equal(got.ravel(), [10, 20, 10])
    np.testing.assert_array_equal(got, ref)


def test_a_cycle_is_an_error_not_a_hang():
    # node 0's true branch is node 0 itself
    model = _model(_regressor(["BRANCH_LEQ", "LEAF", "LEAF"], [0.5, 0, 0], truenodes=(0, 0, 0)))
    sess = onnxkit.Session(model, executor="cpu")
    with pytest.raises(OnnxkitError, match="cycle"):
        sess.run(None, {"X": np.zeros((2, 2), np.float32)})


def _forests():
    sklearn = pytest.importorskip("sklearn")  # noqa: F841
    skl2onnx = pytest.importorskip("skl2onnx")
    from sklearn.datasets import make_classification, make_regression
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    X, y = make_classification(600, 8, n_informative=5, n_classes=3, random_state=1)
    Xr, yr = make_regression(600, 8, noise=0.5, random_state=1)
    X, Xr = X.astype(np.float32), Xr.astype(np.float32)
    X[::17, 3] = np.nan  # rows with a missing feature
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = RandomForestClassifier(n_estimators=12, random_state=0).fit(
            np.nan_to_num(X[:300]), y[:300])
        reg = RandomForestRegressor(n_estimators=12, max_depth=8, random_state=0).fit(
            Xr[:300], yr[:300])
        opsets = {"": 17, ML: 3}
        return [(skl2onnx.to_onnx(clf, X[:1], target_opset=opsets,
                                  options={id(clf): {"zipmap": False}}), X[300:]),
                (skl2onnx.to_onnx(reg, Xr[:1], target_opset=opsets), Xr[300:])]


def test_forests_match_the_reference_exactly_and_onnxruntime_closely():
    ort = pytest.importorskip("onnxruntime")
    for model, X in _forests():
        sess = onnxkit.Session(model, executor="cpu")
        ref = onnxkit.Session(model, executor="reference").run(None, {"X": X})
        expected = ort.InferenceSession(model.SerializeToString(),
                                        providers=["CPUExecutionProvider"]).run(None, {"X": X})
        for _ in range(2):  # the second run reads the kept node tables
            got = sess.run(None, {"X": X})
            for g, r, e in zip(got, ref, expected):
                np.testing.assert_array_equal(g, r)
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_two_models_in_turn_keep_their_own_tables():
    (clf, X), (reg, Xr) = _forests()
    runs = [(onnxkit.Session(clf, executor="cpu"), X,
             onnxkit.Session(clf, executor="reference").run(None, {"X": X})),
            (onnxkit.Session(reg, executor="cpu"), Xr,
             onnxkit.Session(reg, executor="reference").run(None, {"X": Xr}))]
    for _ in range(2):
        for sess, feed, ref in runs:
            for g, r in zip(sess.run(None, {"X": feed}), ref):
                np.testing.assert_array_equal(g, r)


def test_set_membership_keeps_the_numpy_walk():
    """TreeEnsemble (ml opset 5) with BRANCH_MEMBER: the onnx backend case, on cpu."""
    from onnxkit.conformance import all_cases, run_case
    from onnxkit.conformance.runner import onnxkit_runner

    cases = [c for c in all_cases() if c.name.startswith("test_ai_onnx_ml_tree_ensemble")]
    assert cases, "the onnx backend tree ensemble cases"
    for case in cases:
        result = run_case(case, onnxkit_runner("cpu"))
        assert result.status == "pass", (case.name, result.message)
