"""Dropout: identity at inference; in training, zero each element with probability ratio.

    inference (or ratio == 0): output = X, mask = all true
    training: keep = uniform(0, 1, X.shape) >= ratio
              output = X * keep / (1 - ratio), mask = keep

Training is ``training_mode`` (an input since version 12) or ``is_test == 0`` (versions
1/6); versions 7 and 10 only infer. With a ``seed`` the draw is numpy's legacy
``RandomState(seed).uniform``, which reproduces onnx's expected outputs; without one it
is fresh. The mask is of X's type before version 10, bool after.
https://onnx.ai/onnx/operators/onnx__Dropout.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.registry import op


def _dropout(X, ratio: float, training: bool, seed, mask_dtype):
    if not training or ratio == 0:
        return X.copy(), np.ones(X.shape, dtype=mask_dtype)
    if not 0 <= ratio < 1:
        raise KernelError(f"Dropout ratio must lie in [0, 1), got {ratio}")
    draw = np.random.RandomState(seed % 2**32) if seed is not None else np.random.default_rng()
    keep = draw.uniform(0.0, 1.0, X.shape) >= ratio
    Y = (X * keep * (1.0 / (1.0 - ratio))).astype(X.dtype)
    return Y, keep.astype(mask_dtype)


@op("Dropout", 1, 6)
def dropout_legacy(data, *, consumed_inputs=None, is_test=0, ratio=0.5):
    return _dropout(data, ratio, not is_test, None, data.dtype)


@op("Dropout", 7)
def dropout_7(data, *, ratio=0.5):
    return _dropout(data, ratio, False, None, data.dtype)


@op("Dropout", 10)
def dropout_10(data, *, ratio=0.5):
    return _dropout(data, ratio, False, None, np.bool_)


@op("Dropout", 12, 13, 22)
def dropout(data, ratio=None, training_mode=None, *, seed=None):
    rate = 0.5 if ratio is None else float(np.asarray(ratio).reshape(-1)[0])
    training = training_mode is not None and bool(np.asarray(training_mode).reshape(-1)[0])
    return _dropout(data, rate, training, seed, np.bool_)
