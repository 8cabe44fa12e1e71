"""LinearRegressor: ``targets`` linear functions of the features.

    Y[n, t] = sum_f X[n, f] * coefficients[t * F + f] + intercepts[t];  Y = post_transform(Y)

https://onnx.ai/onnx/operators/onnx_aionnxml_LinearRegressor.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.ml._post_transform import apply_post_transform, as_batch
from onnxkit.ops.ml.linear_classifier import linear_scores
from onnxkit.ops.registry import ML_DOMAIN, op


@op("LinearRegressor", 1, domain=ML_DOMAIN)
def linear_regressor(X, *, coefficients=None, intercepts=None, post_transform="NONE", targets=1):
    if coefficients is None:
        raise AttributeMismatchError("LinearRegressor needs the coefficients attribute")
    Y = linear_scores(as_batch(X), coefficients, intercepts)
    if Y.shape[1] != targets:
        raise AttributeMismatchError(
            f"coefficients give {Y.shape[1]} targets, the targets attribute says {targets}")
    return apply_post_transform(Y, post_transform).astype(np.float32)
