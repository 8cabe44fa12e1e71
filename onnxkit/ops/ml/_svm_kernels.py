"""Kernel functions of the ai.onnx.ml SVMs; ``kernel_params`` = [gamma, coef0, degree].

    LINEAR   k(x, v) = x . v
    POLY     k(x, v) = (gamma * x . v + coef0) ^ degree
    RBF      k(x, v) = exp(-gamma * |x - v|^2)
    SIGMOID  k(x, v) = tanh(gamma * x . v + coef0)
"""

from __future__ import annotations

import numpy as np

from onnxkit.errors import AttributeMismatchError

KERNELS = ("LINEAR", "POLY", "RBF", "SIGMOID")


def kernel_matrix(X: np.ndarray, vectors: np.ndarray, kernel_type: str, params) -> np.ndarray:
    """k(X[n], vectors[v]) for every pair: [N, V] (float64)."""
    if kernel_type not in KERNELS:
        raise AttributeMismatchError(f"kernel_type={kernel_type!r} is not one of {KERNELS}")
    gamma, coef0, degree = (list(params) + [0.0, 0.0, 0.0])[:3] if params else (0.0, 0.0, 0.0)
    X = X.astype(np.float64)
    vectors = vectors.astype(np.float64)
    if kernel_type == "RBF":
        sq = (X * X).sum(axis=1)[:, None] + (vectors * vectors).sum(axis=1)[None, :] - 2.0 * X @ vectors.T
        return np.exp(-gamma * np.maximum(sq, 0.0))
    dot = X @ vectors.T
    if kernel_type == "LINEAR":
        return dot
    if kernel_type == "POLY":
        return (gamma * dot + coef0) ** int(degree)
    return np.tanh(gamma * dot + coef0)


def vector_table(values, count: int, what: str) -> np.ndarray:
    """The flat ``support_vectors`` attribute as [count, F]."""
    flat = np.asarray(values if values is not None else [], dtype=np.float32)
    if count <= 0 or flat.size % count:
        raise AttributeMismatchError(f"support_vectors has {flat.size} values, not a multiple of "
                                     f"the {count} vectors that {what} declares")
    return flat.reshape(count, -1)


def check_features(X: np.ndarray, n_features: int) -> None:
    if X.shape[1] != n_features:
        raise AttributeMismatchError(
            f"the model expects {n_features} features per row, the input has {X.shape[1]}")
