"""SVMRegressor: support vector regression, or a one-class SVM (anomaly detection).

    s[n] = sum_j coefficients[j] * k(X[n], support_vectors[j]) + rho[0]     (n_supports > 0)
    s[n] = X[n] . coefficients + rho[0]                                      (linear, n_supports = 0)
    Y[n] = one_class ? (s > 0 ? 1 : -1) : post_transform(s)

https://onnx.ai/onnx/operators/onnx_aionnxml_SVMRegressor.html
"""

import numpy as np

from onnxkit.ops.ml._post_transform import apply_post_transform, as_batch
from onnxkit.ops.ml._svm_kernels import check_features, kernel_matrix, vector_table
from onnxkit.ops.registry import ML_DOMAIN, op


@op("SVMRegressor", 1, domain=ML_DOMAIN)
def svm_regressor(X, *, coefficients=None, kernel_params=None, kernel_type="LINEAR",
                  n_supports=0, one_class=0, post_transform="NONE", rho=None, support_vectors=None):
    X = as_batch(X)
    coef = np.asarray(coefficients if coefficients is not None else [], dtype=np.float32)
    rho0 = float(np.float32(rho[0])) if rho else 0.0
    if n_supports > 0:
        vectors = vector_table(support_vectors, n_supports, "n_supports")
        check_features(X, vectors.shape[1])
        s = kernel_matrix(X, vectors, kernel_type, kernel_params) @ coef[:n_supports] + rho0
    else:
        check_features(X, coef.size)
        s = X.astype(np.float64) @ coef + rho0
    s = s.reshape(-1, 1)
    if one_class:
        return np.where(s > 0, 1.0, -1.0).astype(np.float32)
    return apply_post_transform(s, post_transform).astype(np.float32)

