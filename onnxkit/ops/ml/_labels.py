"""Class labels of ai.onnx.ml classifiers and the onnxruntime rules for binary scores."""

from __future__ import annotations

import numpy as np

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.ml._post_transform import logistic, probit


def class_labels(ints, strings) -> np.ndarray:
    """``classlabels_int64s`` / ``classlabels_strings`` (exactly one) as an array."""
    if ints is not None and len(ints) and strings is not None and len(strings):
        raise AttributeMismatchError("set classlabels_int64s or classlabels_strings, not both")
    if strings is not None and len(strings):
        return np.array(list(strings), dtype=object)
    return np.asarray(ints if ints is not None else [], dtype=np.int64)


def pick_labels(labels: np.ndarray, index: np.ndarray) -> np.ndarray:
    """labels[index], keeping int64 / object dtype (an empty label list gives the index)."""
    if labels.size == 0:
        return index.astype(np.int64)
    return labels[index]


def second_class(score: np.ndarray, post_transform: str, probabilities: bool) -> np.ndarray:
    """One score column s -> the two columns onnxruntime writes for a binary classifier.

    probabilities: [1 - p, p] with p = logistic(s) under LOGISTIC, else p = s;
    signed margins: [logistic(-s), logistic(s)] under LOGISTIC, else [-s, s].
    PROBIT: [probit(s), 0] (onnxruntime leaves the second column unwritten).
    """
    s = score.reshape(-1)
    if post_transform == "PROBIT":
        return np.stack([probit(s), np.zeros_like(s)], axis=1)
    if probabilities:
        p = logistic(s) if post_transform == "LOGISTIC" else s
        return np.stack([1.0 - p, p], axis=1)
    if post_transform == "LOGISTIC":
        return np.stack([logistic(-s), logistic(s)], axis=1)
    return np.stack([-s, s], axis=1)
