"""scikit-learn models converted by skl2onnx: onnxkit must answer as onnxruntime does.

Each model is fitted on a small deterministic data set, converted with
``skl2onnx.to_onnx`` (ZipMap on and off for classifiers), then run by
``onnxkit.Session`` and by onnxruntime on the same inputs. Labels must match exactly,
scores within rtol 1e-4 / atol 1e-5, ZipMap outputs key by key.
"""

from __future__ import annotations

import warnings
from functools import lru_cache

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
skl2onnx = pytest.importorskip("skl2onnx")
ort = pytest.importorskip("onnxruntime")

from sklearn.cluster import KMeans  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier, GradientBoostingRegressor, RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import (  # noqa: E402
    Binarizer, MinMaxScaler, Normalizer, OneHotEncoder, StandardScaler,
)
from sklearn.svm import SVC, SVR  # noqa: E402
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor  # noqa: E402

import onnxkit  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5
OPSETS = {"": 17, "ai.onnx.ml": 3}


# ---------------------------------------------------------------- data sets (cached)

@lru_cache(maxsize=None)
def classification(n_classes: int):
    X, y = make_classification(240, 6, n_informative=4, n_redundant=1, n_classes=n_classes,
                               random_state=n_classes)
    return X.astype(np.float32), y


@lru_cache(maxsize=None)
def regression():
    X, y = make_regression(240, 6, noise=0.5, random_state=0)
    return X.astype(np.float32), y


# ---------------------------------------------------------------- comparison helpers

def fit(estimator, X, y=None):
    with warnings.catch_warnings():  # e.g. SVC(probability=True) is deprecated in sklearn 1.9
        warnings.simplefilter("ignore")
        return estimator.fit(X, y)


def convert(estimator, X, zipmap: bool | None = None):
    options = None
    if zipmap is False:
        options = {id(estimator): {"zipmap": False}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return skl2onnx.to_onnx(estimator, X[:1], options=options, target_opset=OPSETS)


def run_both(model, X):
    feeds = {model.graph.input[0].name: X}
    expected = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
    got = onnxkit.Session(model).run(None, feeds)
    assert len(got) == len(expected)
    return got, expected


def assert_same_zipmap(got, expected):
    assert isinstance(got, list) and len(got) == len(expected)
    for row_got, row_expected in zip(got, expected):
        assert isinstance(row_got, dict)
        assert list(row_got) == list(row_expected)
        np.testing.assert_allclose([row_got[k] for k in row_expected],
                                   [row_expected[k] for k in row_expected], rtol=RTOL, atol=ATOL)


def assert_same_outputs(got, expected):
    for g, e in zip(got, expected):
        if isinstance(e, list):
            assert_same_zipmap(g, e)
        elif e.dtype.kind in "iuOb":
            assert g.dtype == e.dtype, (g.dtype, e.dtype)
            assert g.shape == e.shape
            assert g.tolist() == e.tolist()
        else:
            assert g.dtype == e.dtype, (g.dtype, e.dtype)
            np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL)


# ---------------------------------------------------------------- classifiers

CLASSIFIERS = {
    "logistic_regression": lambda: LogisticRegression(max_iter=500),
    "random_forest": lambda: RandomForestClassifier(n_estimators=15, max_depth=6, random_state=0),
    "gradient_boosting": lambda: GradientBoostingClassifier(n_estimators=20, max_depth=3,
                                                            random_state=0),
    "decision_tree": lambda: DecisionTreeClassifier(max_depth=5, random_state=0),
    "svc_linear": lambda: SVC(kernel="linear", probability=True, random_state=0),
    "svc_rbf": lambda: SVC(kernel="rbf", probability=True, random_state=0),
    "svc_rbf_decision": lambda: SVC(kernel="rbf"),
    "svc_linear_decision": lambda: SVC(kernel="linear"),
    "scaler_pipeline": lambda: make_pipeline(StandardScaler(), MinMaxScaler(), Normalizer(),
                                             LogisticRegression(max_iter=500)),
}


@pytest.mark.parametrize("zipmap", [True, False], ids=["zipmap", "no_zipmap"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", sorted(CLASSIFIERS))
def test_classifier_matches_onnxruntime(name, n_classes, zipmap):
    X, y = classification(n_classes)
    model = convert(fit(CLASSIFIERS[name](), X, y), X, zipmap)
    got, expected = run_both(model, X)
    assert_same_outputs(got, expected)
    if zipmap:
        assert isinstance(got[1], list) and isinstance(got[1][0], dict)


def test_classifier_string_labels():
    X, y = classification(3)
    labels = np.array(["cat", "dog", "owl"], dtype=object)[y]
    model = convert(fit(RandomForestClassifier(n_estimators=8, max_depth=4, random_state=0),
                        X, labels), X)
    got, expected = run_both(model, X)
    assert_same_outputs(got, expected)
    assert set(got[0].tolist()) <= {"cat", "dog", "owl"}


# ---------------------------------------------------------------- regressors

REGRESSORS = {
    "linear_regression": LinearRegression,
    "ridge": Ridge,
    "random_forest": lambda: RandomForestRegressor(n_estimators=15, max_depth=6, random_state=0),
    "gradient_boosting": lambda: GradientBoostingRegressor(n_estimators=20, random_state=0),
    "decision_tree": lambda: DecisionTreeRegressor(max_depth=5, random_state=0),
    "svr_linear": lambda: SVR(kernel="linear"),
    "svr_rbf": lambda: SVR(kernel="rbf", C=100.0),
}


@pytest.mark.parametrize("name", sorted(REGRESSORS))
def test_regressor_matches_onnxruntime(name):
    X, y = regression()
    model = convert(fit(REGRESSORS[name](), X, y), X)
    got, expected = run_both(model, X)
    assert_same_outputs(got, expected)


# ---------------------------------------------------------------- transformers, clustering

def test_kmeans():
    X, _ = classification(3)
    model = convert(fit(KMeans(n_clusters=3, n_init=3, random_state=0), X), X)
    got, expected = run_both(model, X)
    assert_same_outputs(got, expected)


def test_binarizer():
    X, _ = classification(3)
    model = convert(fit(Binarizer(threshold=0.25), X), X)
    got, expected = run_both(model, X)
    assert_same_outputs(got, expected)
    assert set(np.unique(got[0]).tolist()) <= {0.0, 1.0}


def test_standard_scaler():
    X, _ = classification(3)
    model = convert(fit(StandardScaler(), X), X)
    assert_same_outputs(*run_both(model, X))


@pytest.mark.parametrize("kind", ["strings", "int64"])
def test_one_hot_encoder(kind):
    if kind == "strings":
        X = np.array([["a", "x"], ["b", "y"], ["c", "x"], ["a", "z"], ["b", "z"]], dtype=object)
    else:
        X = np.array([[1, 5], [2, 6], [3, 5], [1, 7], [2, 7]], dtype=np.int64)
    model = convert(fit(OneHotEncoder(), X), X)
    got, expected = run_both(model, X)
    assert_same_outputs(got, expected)


# ---------------------------------------------------------------- a forest of real size
# (its speed against onnxruntime and onnx.reference: python -m benchmarks.trees)

def test_forest_of_100_trees_on_1000_rows_matches_scikit_learn():
    X, y = make_classification(2000, 20, n_informative=10, n_classes=3, random_state=0)
    X = X.astype(np.float32)
    forest = fit(RandomForestClassifier(n_estimators=100, random_state=0), X[:1000], y[:1000])
    model = convert(forest, X, zipmap=False)
    labels, probabilities = onnxkit.Session(model).run(
        None, {model.graph.input[0].name: X[1000:]})
    np.testing.assert_allclose(probabilities, forest.predict_proba(X[1000:]), atol=1e-5)
    # a label is its row's most probable class (ties, as 0.43 / 0.43, to the first)
    np.testing.assert_array_equal(labels, forest.classes_[np.argmax(probabilities, axis=1)])
