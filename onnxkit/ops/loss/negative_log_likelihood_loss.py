"""NegativeLogLikelihoodLoss: pick -input[n, c, d...] for the target class c of each sample.

    loss[n, d...] = -input[n, target[n, d...], d...] * w,   w = weight[c] (1 without weight)
                    0 (and w = 0) where target == ignore_index
    reduction: "none" -> loss;  "sum" -> sum(loss);  "mean" -> sum(loss) / sum(w)

https://onnx.ai/onnx/operators/onnx__NegativeLogLikelihoodLoss.html
"""

import ml_dtypes
import numpy as np

from onnxkit.errors import AttributeMismatchError, KernelError
from onnxkit.ops.registry import op

REDUCTIONS = ("none", "sum", "mean")
_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def nll_loss(log_prob, target, weight, ignore_index, reduction, dtype):
    """The loss of ``log_prob`` [N, C, d...] against ``target`` [N, d...], returned as ``dtype``."""
    if reduction not in REDUCTIONS:
        raise AttributeMismatchError(f"reduction={reduction!r}; expected one of {REDUCTIONS}")
    if log_prob.ndim < 2 or target.shape != log_prob.shape[:1] + log_prob.shape[2:]:
        raise KernelError(
            f"input must be [N, C, d...] and target [N, d...]; got {list(log_prob.shape)} "
            f"and {list(target.shape)}"
        )
    classes = log_prob.shape[1]
    labels = target.astype(np.int64)
    ignored = labels == ignore_index if ignore_index is not None else np.zeros(labels.shape, bool)
    bad = ~ignored & ((labels < 0) | (labels >= classes))
    if bad.any():
        raise KernelError(f"target holds {labels[bad][0]}, outside the classes [0, {classes})")
    safe = np.where(ignored, 0, labels)
    picked = np.take_along_axis(log_prob, np.expand_dims(safe, 1), axis=1).squeeze(1)
    w = np.ones(labels.shape, log_prob.dtype) if weight is None else weight.astype(log_prob.dtype)[safe]
    w = np.where(ignored, 0, w).astype(log_prob.dtype)
    loss = -picked * w
    if reduction == "sum":
        loss = np.sum(loss)
    elif reduction == "mean":
        loss = np.sum(loss) / np.sum(w)
    return np.asarray(loss).astype(dtype)


@op("NegativeLogLikelihoodLoss", 12, 13, 22)
def negative_log_likelihood_loss(input, target, weight=None, *, ignore_index=None, reduction="mean"):
    work = input.astype(np.float32) if input.dtype in _HALF else input
    return nll_loss(work, target, weight, ignore_index, reduction, input.dtype)
