"""The cpu tree-ensemble kernel (``onnxkit.kernels.cpu.trees``: the forest laid out at
plan time, one compiled walk per call) against onnxruntime and onnx.reference, on random
forests: every aggregate function and post_transform, missing values and ties, every
branch mode, classifiers with int and string labels, one row and 1000 rows, the rows
shared among three threads."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnxkit

ML = "ai.onnx.ml"
MODES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]
FEATURES = 5


def _trees(rng, n_trees: int, depth: int, modes=MODES, shallowest: int = 0):
    """Random trees of depth shallowest..depth (the first one depth): (node attributes,
    leaves as (tree, node) pairs).
    Thresholds and inputs lie on a grid of quarters, so that rows often tie a threshold."""
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_values",
                         "nodes_modes", "nodes_truenodeids", "nodes_falsenodeids",
                         "nodes_missing_value_tracks_true")}
    leaves = []
    for t in range(n_trees):
        d = int(rng.integers(shallowest, depth + 1)) if t else depth
        interior = 2 ** d - 1
        for i in range(2 ** (d + 1) - 1):
            leaf = i >= interior
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(i)
            a["nodes_featureids"].append(0 if leaf else int(rng.integers(FEATURES)))
            a["nodes_values"].append(0.0 if leaf else float(rng.integers(-6, 7)) / 4)
            a["nodes_modes"].append("LEAF" if leaf else str(rng.choice(modes)))
            a["nodes_truenodeids"].append(0 if leaf else 2 * i + 1)
            a["nodes_falsenodeids"].append(0 if leaf else 2 * i + 2)
            a["nodes_missing_value_tracks_true"].append(0 if leaf else int(rng.integers(2)))
            if leaf:
                leaves.append((t, i))
    return a, leaves


def _votes(rng, leaves, n_targets: int, prefix: str, ids=None, positive=False):
    """One to n_targets votes per leaf (float32 weights: sums in another order differ)."""
    v = {f"{prefix}_treeids": [], f"{prefix}_nodeids": [], f"{prefix}_ids": [],
         f"{prefix}_weights": []}
    for t, i in leaves:
        choices = ids if ids is not None else range(n_targets)
        for k in rng.choice(choices, size=int(rng.integers(1, len(choices) + 1)), replace=False):
            w = float(np.float32(rng.uniform(0 if positive else -2, 2)))
            v[f"{prefix}_treeids"].append(t)
            v[f"{prefix}_nodeids"].append(i)
            v[f"{prefix}_ids"].append(int(k))
            v[f"{prefix}_weights"].append(w)
    return v


def _rows(rng, n: int, nan: float = 0.1) -> np.ndarray:
    X = (rng.integers(-8, 9, size=(n, FEATURES)) / 4).astype(np.float32)
    X[rng.random(X.shape) < nan] = np.nan
    return X


def _model(op_type: str, attrs: dict, outputs: list, ml_opset: int = 3):
    node = helper.make_node(op_type, ["X"], [o.name for o in outputs], domain=ML, **attrs)
    graph = helper.make_graph([node], "forest", [helper.make_tensor_value_info(
        "X", TensorProto.FLOAT, [None, FEATURES])], outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(ML, ml_opset)],
                             ir_version=10)


def _regressor(seed: int, how: str, post: str, n_targets: int = 3, base=True, voted=None):
    """``voted``: the targets leaves vote for (default all; a target none votes for
    aggregates to 0, MIN and MAX too)."""
    rng = np.random.default_rng(seed)
    a, leaves = _trees(rng, 12, 4)
    a.update(_votes(rng, leaves, n_targets, "target", voted))
    a.update(n_targets=n_targets, aggregate_function=how, post_transform=post)
    if base:
        a["base_values"] = [float(b) for b in rng.integers(-4, 5, n_targets) / 4]
    return _model("TreeEnsembleRegressor", a,
                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])


def _classifier(seed: int, post: str, n_classes: int = 3, labels="ints", ids=None,
                base=None, positive=False):
    rng = np.random.default_rng(seed)
    a, leaves = _trees(rng, 12, 4)
    a.update(_votes(rng, leaves, n_classes, "class", ids, positive))
    a.update(post_transform=post)
    if labels == "ints":
        a["classlabels_int64s"] = [10 * (k + 1) for k in range(n_classes)]
    else:
        a["classlabels_strings"] = [f"c{k}" for k in range(n_classes)]
    if base is not None:
        a["base_values"] = base
    label = TensorProto.INT64 if labels == "ints" else TensorProto.STRING
    return _model("TreeEnsembleClassifier", a,
                  [helper.make_tensor_value_info("label", label, None),
                   helper.make_tensor_value_info("Z", TensorProto.FLOAT, None)])


def _ort(model, X):
    ort = pytest.importorskip("onnxruntime")
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"]).run(None, {"X": X})


def _check(model, X, labels_from_ort=True, exact=True):
    """cpu == onnxkit's reference kernel, bit for bit (``exact``: PROBIT's float32 log
    and sqrt are libm's here, numpy's own there); close to onnxruntime (the labels
    equal); twice, on one session (the second run reads the layout kept on the plan)."""
    sess = onnxkit.Session(model, executor="cpu")
    ref = onnxkit.Session(model, executor="reference").run(None, {"X": X})
    expected = _ort(model, X)
    for _ in range(2):
        got = sess.run(None, {"X": X})
        assert len(got) == len(expected)
        for g, r, e in zip(got, ref, expected):
            if exact or g.dtype != np.float32:
                np.testing.assert_array_equal(g, r)
            else:
                np.testing.assert_allclose(g, r, rtol=1e-6, atol=0)
            assert g.shape == e.shape and g.dtype == e.dtype
            if g.dtype == np.float32:
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
            elif labels_from_ort:
                np.testing.assert_array_equal(g, e)
    return got


@pytest.mark.parametrize("how", ["SUM", "AVERAGE", "MIN", "MAX"])
@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"])
@pytest.mark.parametrize("rows", [1, 1000])
def test_regressor_every_aggregate_and_post_transform(how, post, rows):
    X = _rows(np.random.default_rng(rows), rows)
    _check(_regressor(1, how, post), X)
    # no base values: onnxruntime leaves them out of a target nothing voted for
    _check(_regressor(2, how, post, n_targets=4, base=False, voted=[0, 2, 3]), X)


@pytest.mark.parametrize("how", ["SUM", "AVERAGE"])
def test_regressor_probit_one_target(how):
    """PROBIT of scores in (0, 1): positive weights and a small sum."""
    model = _regressor(2, how, "PROBIT", n_targets=1, base=False)
    node = model.graph.node[0]
    weights = next(a for a in node.attribute if a.name == "target_weights")
    weights.floats[:] = [abs(w) / 200 + 0.001 for w in weights.floats]
    _check(model, _rows(np.random.default_rng(0), 300), exact=False)


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"])
@pytest.mark.parametrize("rows", [1, 1000])
def test_classifier_many_classes(post, rows):
    X = _rows(np.random.default_rng(rows), rows)
    _check(_classifier(3, post, n_classes=4, base=[0.25, -0.5, 0.0, 0.125]), X)
    _check(_classifier(4, post, n_classes=3, labels="strings"), X)


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC"])
@pytest.mark.parametrize("base", [None, [0.5]])
def test_binary_classifier_one_class_id(post, base):
    """XGBoost's / scikit-learn's binary encoding: every vote names class 1 (margins, or
    probabilities with positive weights); the other column is derived."""
    X = _rows(np.random.default_rng(5), 400)
    _check(_classifier(6, post, n_classes=2, ids=[1], base=base), X)
    _check(_classifier(7, post, n_classes=2, ids=[1], base=base, positive=True), X)


@pytest.mark.parametrize("post", ["NONE", "LOGISTIC", "SOFTMAX"])
def test_binary_classifier_both_class_ids(post):
    """Votes for both classes: scores as onnxruntime gives them; the label is the top
    class, as the spec says (onnxruntime answers otherwise: checked against the
    reference kernel only)."""
    X = _rows(np.random.default_rng(8), 400)
    _check(_classifier(9, post, n_classes=2, base=[0.25, -0.25]), X, labels_from_ort=False)


def test_rows_without_missing_values_and_ties():
    """Ties with every threshold (inputs on the same grid), no NaN."""
    model = _regressor(10, "SUM", "NONE")
    _check(model, _rows(np.random.default_rng(11), 500, nan=0.0))


def _ensemble(seed: int, how: int, post: int):
    """TreeEnsemble (ml opset 5) and the same forest as a TreeEnsembleRegressor (ml opset
    3): interior nodes and leaves numbered apart, one vote per leaf."""
    rng = np.random.default_rng(seed)
    a, leaves = _trees(rng, 8, 3, shallowest=1)
    targets = [int(rng.integers(2)) for _ in leaves]
    weights = [float(rng.integers(-16, 17)) / 8 for _ in leaves]
    leaf_of = {pair: j for j, pair in enumerate(leaves)}
    inner = [k for k, m in enumerate(a["nodes_modes"]) if m != "LEAF"]
    node_of = {(a["nodes_treeids"][k], a["nodes_nodeids"][k]): j for j, k in enumerate(inner)}
    n = {side: ([], []) for side in ("true", "false")}
    for k in inner:
        for side, (ids, is_leaf) in n.items():
            child = (a["nodes_treeids"][k], a[f"nodes_{side}nodeids"][k])
            ids.append(leaf_of[child] if child in leaf_of else node_of[child])
            is_leaf.append(int(child in leaf_of))
    count = len(inner)
    new = dict(nodes_featureids=[a["nodes_featureids"][k] for k in inner],
               nodes_splits=helper.make_tensor("s", TensorProto.FLOAT, [count],
                                               [a["nodes_values"][k] for k in inner]),
               nodes_modes=helper.make_tensor("m", TensorProto.UINT8, [count], [
                   MODES.index(a["nodes_modes"][k]) for k in inner]),
               nodes_missing_value_tracks_true=[
                   a["nodes_missing_value_tracks_true"][k] for k in inner],
               nodes_truenodeids=n["true"][0], nodes_trueleafs=n["true"][1],
               nodes_falsenodeids=n["false"][0], nodes_falseleafs=n["false"][1],
               tree_roots=[node_of[(t, 0)] for t in range(8)], leaf_targetids=targets,
               leaf_weights=helper.make_tensor("w", TensorProto.FLOAT, [len(leaves)], weights),
               n_targets=2, aggregate_function=how, post_transform=post)
    out = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)]
    legacy = dict(a, target_treeids=[t for t, _ in leaves], target_nodeids=[i for _, i in leaves],
                  target_ids=targets, target_weights=weights, n_targets=2,
                  aggregate_function=["AVERAGE", "SUM", "MIN", "MAX"][how],
                  post_transform=POSTS_BY_NUMBER[post])
    return (_model("TreeEnsemble", new, out, ml_opset=5),
            _model("TreeEnsembleRegressor", legacy, out))


POSTS_BY_NUMBER = ["NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"]  # the spec's enum


@pytest.mark.parametrize("how", [0, 1, 2, 3])
@pytest.mark.parametrize("post", [0, 1, 2, 3])
def test_tree_ensemble_opset5(how, post):
    """Against onnxruntime running the same forest as a TreeEnsembleRegressor, and
    against onnx.reference (which leaves post_transform out) where it applies."""
    model, legacy = _ensemble(12, how, post)
    X = _rows(np.random.default_rng(13), 200)
    got = onnxkit.Session(model, executor="cpu").run(None, {"X": X})[0]
    np.testing.assert_array_equal(
        got, onnxkit.Session(model, executor="reference").run(None, {"X": X})[0])
    np.testing.assert_allclose(got, _ort(legacy, X)[0], rtol=1e-5, atol=1e-6)
    if post == 0 and how in (0, 1):
        from onnx.reference import ReferenceEvaluator

        expected = ReferenceEvaluator(model).run(None, {"X": X})[0]
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_one_dimensional_input_is_one_row():
    model = _regressor(14, "SUM", "NONE")
    model.graph.input[0].type.tensor_type.ClearField("shape")  # any rank
    X = _rows(np.random.default_rng(15), 1)
    got = onnxkit.Session(model, executor="cpu").run(None, {"X": X[0]})[0]
    np.testing.assert_array_equal(got, _ort(model, X)[0])


SPLIT_SCRIPT = """
import json, sys
import numpy as np
import onnx, onnxkit
from onnxkit.kernels.cpu._threads import parts_of
assert parts_of(1000, 1) == (3, 334), parts_of(1000, 1)  # three uneven parts
out = {}
for name in sys.argv[2:]:
    model = onnx.load(f"{sys.argv[1]}/{name}.onnx")
    X = np.load(f"{sys.argv[1]}/X.npy")
    out[name] = [np.asarray(y).tolist() for y in
                 onnxkit.Session(model, executor="cpu").run(None, {"X": X})]
print(json.dumps(out))
"""


def test_three_threads_give_the_same_bits(tmp_path):
    """NUMBA_NUM_THREADS=3, every split taken (ONNXKIT_CPU_MIN_PARALLEL=1): rows shared
    in uneven parts among three threads answer as one thread does."""
    import onnx

    models = {"regressor": _regressor(16, "AVERAGE", "SOFTMAX"),
              "classifier": _classifier(17, "LOGISTIC", n_classes=3)}
    X = _rows(np.random.default_rng(18), 1000)
    np.save(tmp_path / "X.npy", X)
    for name, model in models.items():
        onnx.save(model, str(tmp_path / f"{name}.onnx"))
    env = {**os.environ, "NUMBA_NUM_THREADS": "3", "ONNXKIT_CPU_MIN_PARALLEL": "1",
           "ONNXKIT_CPU_NOTICE": "0"}
    done = subprocess.run([sys.executable, "-c", SPLIT_SCRIPT, str(tmp_path), *models],
                          env=env, capture_output=True, text=True, timeout=300, check=True)
    split = json.loads(done.stdout.strip().splitlines()[-1])
    numba = pytest.importorskip("numba")
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        alone = {name: onnxkit.Session(model, executor="cpu").run(None, {"X": X})
                 for name, model in models.items()}
    finally:
        numba.set_num_threads(threads)
    for name in models:
        for got, want in zip(split[name], alone[name]):
            np.testing.assert_array_equal(np.asarray(got, dtype=want.dtype), want)


def test_profiler_names_the_reference_fallback():
    """float32 rows take the compiled walk; a float64 input runs the reference kernel,
    which the profiler marks ``[reference]``."""
    from onnxkit.runtime.profile import Profiler

    model = _regressor(19, "SUM", "NONE")
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.DOUBLE
    X = _rows(np.random.default_rng(20), 50)
    for dtype, marked in ((np.float32, False), (np.float64, True)):
        m = _regressor(19, "SUM", "NONE") if dtype == np.float32 else model
        sess = onnxkit.Session(m, executor="cpu")
        prof = Profiler(sess)
        got = sess.run(None, {"X": X.astype(dtype)}, trace=prof)[0]
        np.testing.assert_allclose(got, _ort(_regressor(19, "SUM", "NONE"), X)[0],
                                   rtol=1e-5, atol=1e-6)
        (row,) = [r for r in prof.rows(by="op") if r["op_type"].endswith("Regressor")]
        assert row["kernel"].endswith(" [reference]") == marked, row["kernel"]
