"""SVMClassifier: one-vs-one support vector classification (libsvm), or linear scores.

    linear (no support vectors): score[n, c] = X[n] . coefficients[c] + rho[0]; label = argmax
    SVC: K[n, v] = k(X[n], support_vectors[v]); for each class pair i < j (pair p):
        s = sum_{v in i} coef[j-1, v] K[n, v] + sum_{v in j} coef[i, v] K[n, v] + rho[p]
        vote for i when s > 0, else for j;  label = class with most votes (first on ties)
    with prob_a/prob_b: pair probabilities 1 - logistic(s * prob_a[p] + prob_b[p]) are
    coupled into class probabilities (Wu, Lin & Weng 2004, as libsvm); Z holds those.
    Two classes without probabilities: Z = [-s, s] (onnxruntime's layout).

https://onnx.ai/onnx/operators/onnx_aionnxml_SVMClassifier.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.ml._labels import class_labels, second_class
from onnxkit.ops.ml._post_transform import apply_post_transform, as_batch, logistic, post_transform_name
from onnxkit.ops.ml._svm_kernels import check_features, kernel_matrix, vector_table
from onnxkit.ops.registry import ML_DOMAIN, op


@op("SVMClassifier", 1, domain=ML_DOMAIN)
def svm_classifier(X, *, classlabels_ints=None, classlabels_strings=None, coefficients=None,
                   kernel_params=None, kernel_type="LINEAR", post_transform="NONE",
                   prob_a=None, prob_b=None, rho=None, support_vectors=None,
                   vectors_per_class=None):
    X = as_batch(X)
    post_transform = post_transform_name(post_transform)
    labels = class_labels(classlabels_ints, classlabels_strings)
    n_classes = labels.size
    if n_classes == 0:
        raise AttributeMismatchError("SVMClassifier needs classlabels_ints or classlabels_strings")
    coef = np.asarray(coefficients if coefficients is not None else [], dtype=np.float32)
    rho = np.asarray(rho if rho is not None else [0.0], dtype=np.float32).astype(np.float64)
    counts = np.asarray(vectors_per_class if vectors_per_class is not None else [], dtype=np.int64)
    n_vectors = int(counts.sum())
    with_proba = prob_a is not None and len(prob_a) > 0
    if n_vectors == 0:  # liblinear: one linear score per class
        if coef.size % n_classes:
            raise AttributeMismatchError(f"{coef.size} coefficients for {n_classes} classes")
        weights = coef.reshape(n_classes, -1)
        check_features(X, weights.shape[1])
        scores = X.astype(np.float32).astype(np.float64) @ weights.T + rho[0]
        index = np.argmax(scores, axis=1)
        top = scores[np.arange(len(index)), index]
        Z = apply_post_transform(scores, post_transform)
    else:
        if counts.size != n_classes:
            raise AttributeMismatchError(
                f"vectors_per_class has {counts.size} entries for {n_classes} class labels")
        vectors = vector_table(support_vectors, n_vectors, "vectors_per_class")
        check_features(X, vectors.shape[1])
        if coef.size < (n_classes - 1) * n_vectors:
            raise AttributeMismatchError(
                f"coefficients has {coef.size} values, SVC needs {(n_classes - 1) * n_vectors}")
        K = kernel_matrix(X.astype(np.float32), vectors, kernel_type, kernel_params)
        pair_scores, votes = _one_vs_one(K, coef[:(n_classes - 1) * n_vectors].reshape(
            n_classes - 1, n_vectors).astype(np.float64), counts, rho)
        index = np.argmax(votes, axis=1)
        top = np.zeros(len(index))  # onnxruntime decides binary SVC labels on votes only
        if with_proba:
            Z = _probabilities(pair_scores, n_classes, prob_a, prob_b)
            Z = apply_post_transform(Z, post_transform)
        elif n_classes == 2:
            Z = second_class(pair_scores[:, 0], post_transform,
                             probabilities=post_transform != "NONE")
        else:
            Z = apply_post_transform(pair_scores, post_transform)
    if n_classes == 2 and not with_proba:
        positive = bool(np.all(coef >= 0))
        to_second = (top >= 0.5) if positive else (top > 0)
        index = np.where(to_second, 1, index)
    return labels[index], Z.astype(np.float32)


def _one_vs_one(K, coef, counts, rho):
    """Pairwise decision values [N, C(C-1)/2] and votes [N, C]."""
    n_classes = counts.size
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pairs = [(i, j) for i in range(n_classes) for j in range(i + 1, n_classes)]
    if rho.size < len(pairs):
        raise AttributeMismatchError(f"rho has {rho.size} values for {len(pairs)} class pairs")
    scores = np.empty((K.shape[0], len(pairs)))
    votes = np.zeros((K.shape[0], n_classes), dtype=np.int64)
    for p, (i, j) in enumerate(pairs):
        si, sj = slice(start[i], start[i] + counts[i]), slice(start[j], start[j] + counts[j])
        s = K[:, si] @ coef[j - 1, si] + K[:, sj] @ coef[i, sj] + rho[p]
        scores[:, p] = s
        votes[:, i] += s > 0
        votes[:, j] += s <= 0
    return scores, votes


def _probabilities(pair_scores, n_classes, prob_a, prob_b):
    """libsvm's pairwise coupling: r[i, j] = P(i | i or j), then solve for class probabilities."""
    n_rows = pair_scores.shape[0]
    a = np.asarray(prob_a, dtype=np.float32).astype(np.float64)
    b = np.asarray(prob_b, dtype=np.float32).astype(np.float64)
    r = np.zeros((n_rows, n_classes, n_classes))
    p = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            v = 1.0 - logistic(pair_scores[:, p] * a[p] + b[p])
            v = np.clip(v, 1e-7, 1 - 1e-7)
            r[:, i, j], r[:, j, i] = v, 1.0 - v
            p += 1
    return _couple(r.astype(np.float32))


def _couple(r: np.ndarray) -> np.ndarray:
    """Minimize sum_i sum_{j != i} (r[j, i] p_i - r[i, j] p_j)^2 with sum p = 1 (iterative).

        Q[i, i] = sum_{j != i} r[j, i]^2;  Q[i, j] = -r[j, i] r[i, j]
        repeat: for each t, p_t += (pQp - (Qp)_t) / Q[t, t]; renormalize;
        until max_t |(Qp)_t - pQp| < 0.005 / k (at most 100 rounds)
    """
    n_rows, k, _ = r.shape
    f32 = np.float32
    Q = -np.swapaxes(r, 1, 2) * r
    diag = (np.swapaxes(r, 1, 2) ** 2).sum(axis=2) - np.einsum("nii->ni", r) ** 2
    idx = np.arange(k)
    Q[:, idx, idx] = diag
    Q = Q.astype(f32)
    P = np.full((n_rows, k), f32(1.0 / k), dtype=f32)
    active = np.ones(n_rows, dtype=bool)
    for _ in range(100):
        Qp = np.einsum("nij,nj->ni", Q, P).astype(f32)
        pQp = (P * Qp).sum(axis=1).astype(f32)
        err = np.abs(Qp - pQp[:, None]).max(axis=1)
        active &= ~(err < f32(0.005) / f32(k))
        if not active.any():
            break
        for t in range(k):
            diff = ((-Qp[:, t] + pQp) / Q[:, t, t]).astype(f32)
            diff = np.where(active, diff, f32(0))
            P[:, t] += diff
            pQp = ((pQp + diff * (diff * Q[:, t, t] + f32(2) * Qp[:, t])) / (f32(1) + diff) / (f32(1) + diff)).astype(f32)
            Qp = ((Qp + diff[:, None] * Q[:, t, :]) / (f32(1) + diff[:, None])).astype(f32)
            P = (P / (f32(1) + diff[:, None])).astype(f32)
    return P
