"""LinearClassifier: one linear score per class, then the best class.

    score[n, c] = sum_f X[n, f] * coefficients[c * F + f] + intercepts[c]
    Y[n] = classlabels[argmax_c score[n, c]];   Z = post_transform(score)

With a single score column and two class labels (binary): Y is labels[1] when the
score is > 0, else labels[0]; Z gets the two columns [1 - s, s] (onnxruntime).
https://onnx.ai/onnx/operators/onnx_aionnxml_LinearClassifier.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.ml._labels import class_labels, pick_labels, second_class
from onnxkit.ops.ml._post_transform import apply_post_transform, as_batch, post_transform_name
from onnxkit.ops.registry import ML_DOMAIN, op


def linear_scores(X, coefficients, intercepts, name="coefficients") -> np.ndarray:
    """X [N, F] @ coefficients.reshape(K, F).T + intercepts, in float32 like onnxruntime."""
    n_features = X.shape[1]
    coef = np.asarray(coefficients, dtype=np.float32)
    if n_features == 0 or coef.size % n_features:
        raise AttributeMismatchError(
            f"{name} has {coef.size} values, not a multiple of the {n_features} input features")
    scores = X.astype(np.float32) @ coef.reshape(-1, n_features).T
    if intercepts is not None and len(intercepts):
        scores = scores + np.asarray(intercepts, dtype=np.float32)
    return scores


@op("LinearClassifier", 1, domain=ML_DOMAIN)
def linear_classifier(X, *, classlabels_ints=None, classlabels_strings=None, coefficients,
                      intercepts=None, multi_class=0, post_transform="NONE"):
    post_transform = post_transform_name(post_transform)
    labels = class_labels(classlabels_ints, classlabels_strings)
    scores = linear_scores(as_batch(X), coefficients, intercepts)
    if scores.shape[1] == 1:
        positive = scores[:, 0] > 0
        if labels.size == 2:
            Y = np.where(positive, labels[1], labels[0])
            Z = second_class(scores[:, 0], post_transform, probabilities=True)
        else:
            fallback = np.array(["0", "1"], dtype=object) if labels.dtype == object else np.array([0, 1])
            Y = fallback[positive.astype(np.int64)]
            Z = apply_post_transform(scores, post_transform)
        return Y.astype(labels.dtype if labels.size else np.int64), Z.astype(np.float32)
    index = np.argmax(scores, axis=1)
    return pick_labels(labels, index), apply_post_transform(scores, post_transform).astype(np.float32)
