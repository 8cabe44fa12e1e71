"""Gradient-boosted trees (LightGBM, XGBoost) converted by onnxmltools, run on a batch of
4 rows: the one-row-ish serving case."""

from __future__ import annotations

from pathlib import Path

import numpy as np

ROWS, FEATURES = 4, 20


def _data(classes: int):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, FEATURES)).astype(np.float32)
    score = X[:, :5] @ rng.standard_normal(5) + 0.3 * rng.standard_normal(2000)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y, score.astype(np.float32)


def _save(model, path: Path) -> dict:
    import onnx

    onnx.save(model, str(path))
    return {model.graph.input[0].name: _data(2)[0][-ROWS:]}


def lightgbm(task: str):
    def build(path: Path) -> dict:
        import lightgbm as lgb
        import onnxmltools
        from onnxmltools.convert.common.data_types import FloatTensorType

        X, y, score = _data(3)
        params = {"n_estimators": 100, "num_leaves": 31, "random_state": 0, "verbose": -1}
        est = (lgb.LGBMClassifier(**params).fit(X, y) if task == "classifier"
               else lgb.LGBMRegressor(**params).fit(X, score))
        model = onnxmltools.convert_lightgbm(
            est, initial_types=[("x", FloatTensorType([None, FEATURES]))], target_opset=15,
            zipmap=False)
        return _save(model, path)
    return build


def xgboost_classifier(path: Path) -> dict:
    import onnxmltools
    import xgboost
    from onnxmltools.convert.common.data_types import FloatTensorType

    X, y, _ = _data(3)
    est = xgboost.XGBClassifier(n_estimators=100, max_depth=6, random_state=0).fit(X, y)
    model = onnxmltools.convert_xgboost(
        est, initial_types=[("x", FloatTensorType([None, FEATURES]))], target_opset=15)
    return _save(model, path)


MODELS = {"lgbm_classifier": lightgbm("classifier"), "lgbm_regressor": lightgbm("regressor"),
          "xgb_classifier": xgboost_classifier}
