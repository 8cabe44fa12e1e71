"""The ``post_transform`` of ai.onnx.ml classifiers and regressors, row by row.

    NONE          y = s
    LOGISTIC      y = 1 / (1 + exp(-s))
    SOFTMAX       y = exp(s - max(s)) / sum(exp(s - max(s)))         per row
    SOFTMAX_ZERO  like SOFTMAX, but entries equal to 0 stay 0
    PROBIT        y = sqrt(2) * erfinv(2 s - 1)   (Winitzki's approximation, as onnxruntime)
"""

from __future__ import annotations

import numpy as np

from onnxkit.errors import AttributeMismatchError

NAMES = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")  # index = TreeEnsemble enum


def logistic(s: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(s))
    return np.where(s >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def softmax_zero(s: np.ndarray) -> np.ndarray:
    nonzero = np.abs(s) > 1e-7
    e = np.where(nonzero, np.exp(s - s.max(axis=-1, keepdims=True)), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total != 0)


def erfinv(x: np.ndarray) -> np.ndarray:
    """Winitzki's closed-form inverse error function (a = 0.147), in float32 like onnxruntime."""
    x = np.asarray(x, dtype=np.float32)
    a, pi = np.float32(0.147), np.float32(np.pi)
    sign = np.where(x < 0, np.float32(-1), np.float32(1))
    log = np.log((np.float32(1) - x) * (np.float32(1) + x))
    v = np.float32(2) / (pi * a) + np.float32(0.5) * log
    return sign * np.sqrt(-v + np.sqrt(v * v - log / a))


def probit(s: np.ndarray) -> np.ndarray:
    s = np.asarray(s, dtype=np.float32)
    return np.float32(1.41421356) * erfinv(np.float32(2) * s - np.float32(1))


_FUNCTIONS = {
    "NONE": lambda s: s,
    "LOGISTIC": logistic,
    "SOFTMAX": softmax,
    "SOFTMAX_ZERO": softmax_zero,
    "PROBIT": probit,
}


def post_transform_name(value) -> str:
    """Accept the string attribute (legacy ops) or the int enum (TreeEnsemble)."""
    if isinstance(value, (int, np.integer)):
        if not 0 <= int(value) < len(NAMES):
            raise AttributeMismatchError(
                f"post_transform={value} is not one of 0..4 ({', '.join(NAMES)})")
        return NAMES[int(value)]
    if value not in _FUNCTIONS:
        raise AttributeMismatchError(
            f"post_transform={value!r} is not one of {', '.join(NAMES)}")
    return value


def apply_post_transform(scores: np.ndarray, name) -> np.ndarray:
    """``scores`` is [N, C] float64; returns a new float64 array."""
    with np.errstate(all="ignore"):
        return _FUNCTIONS[post_transform_name(name)](np.asarray(scores, dtype=np.float64))


def as_batch(X: np.ndarray) -> np.ndarray:
    """ML operators read a 1-D input as one row; ints are converted to float64."""
    if X.ndim == 1:
        X = X.reshape(1, -1)
    if X.dtype != np.float32:
        X = X.astype(np.float64)
    return X
