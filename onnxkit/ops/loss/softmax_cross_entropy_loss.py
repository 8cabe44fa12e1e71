"""SoftmaxCrossEntropyLoss: NegativeLogLikelihoodLoss of LogSoftmax(scores) over the classes.

    log_prob = LogSoftmax(scores, axis=1)           scores [N, C, d...]
    loss     = NLL(log_prob, labels, weights, ignore_index, reduction)
    outputs: loss, and log_prob when a second output is asked for

https://onnx.ai/onnx/operators/onnx__SoftmaxCrossEntropyLoss.html
"""

import ml_dtypes
import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.loss.negative_log_likelihood_loss import nll_loss
from onnxkit.ops.registry import op
from onnxkit.ops.softmax.log_softmax import log_softmax_along

_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


@op("SoftmaxCrossEntropyLoss", 12, 13)
def softmax_cross_entropy_loss(scores, labels, weights=None, *, ignore_index=None, reduction="mean"):
    if scores.ndim < 2:
        raise KernelError(f"scores must be [N, C, d...], got shape {list(scores.shape)}")
    work = scores.astype(np.float32) if scores.dtype in _HALF else scores
    log_prob = log_softmax_along(work, 1)
    loss = nll_loss(log_prob, labels, weights, ignore_index, reduction, scores.dtype)
    return loss, log_prob.astype(scores.dtype)
