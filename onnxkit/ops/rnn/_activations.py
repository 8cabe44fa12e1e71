"""The activation functions the recurrent ops accept by name, with their alpha/beta.

``activation_alpha`` / ``activation_beta`` are consumed in the order of the
activations, each taking a value only if its function has that parameter; a function
whose value is not given uses the default of the ONNX operator of the same name.
Names are matched case-insensitively.
https://onnx.ai/onnx/operators/onnx__LSTM.html
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from onnxkit.errors import AttributeValueError


def _sigmoid(x, alpha, beta):
    # split by sign so exp never overflows
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _softplus(x, alpha, beta):
    return np.logaddexp(0, x)


# name -> (function(x, alpha, beta), default alpha or None, default beta or None)
_TABLE: dict[str, tuple[Callable, float | None, float | None]] = {
    "relu": (lambda x, a, b: np.maximum(x, 0), None, None),
    "tanh": (lambda x, a, b: np.tanh(x), None, None),
    "sigmoid": (_sigmoid, None, None),
    "affine": (lambda x, a, b: a * x + b, 1.0, 0.0),
    "leakyrelu": (lambda x, a, b: np.where(x >= 0, x, a * x), 0.01, None),
    "thresholdedrelu": (lambda x, a, b: np.where(x > a, x, 0), 1.0, None),
    "scaledtanh": (lambda x, a, b: a * np.tanh(b * x), 1.0, 1.0),
    "hardsigmoid": (lambda x, a, b: np.clip(a * x + b, 0, 1), 0.2, 0.5),
    "elu": (lambda x, a, b: np.where(x >= 0, x, a * np.expm1(np.minimum(x, 0))), 1.0, None),
    "softsign": (lambda x, a, b: x / (1 + np.abs(x)), None, None),
    "softplus": (_softplus, None, None),
}


def activation_functions(names: list[str], alphas: list[float] | None,
                         betas: list[float] | None) -> list[Callable]:
    """One ``f(x)`` per name, with alpha/beta bound from the attribute lists."""
    alpha_left = list(alphas) if alphas is not None else []
    beta_left = list(betas) if betas is not None else []
    funcs = []
    for name in names:
        entry = _TABLE.get(name.lower())
        if entry is None:
            raise AttributeValueError(
                f"unknown recurrent activation {name!r} (accepted: {', '.join(sorted(_TABLE))})"
            )
        fn, alpha, beta = entry
        if alpha is not None and alpha_left:
            alpha = alpha_left.pop(0)
        if beta is not None and beta_left:
            beta = beta_left.pop(0)
        funcs.append(lambda x, fn=fn, a=alpha, b=beta: fn(x, a, b))
    return funcs


def per_direction(names: Sequence[str], count: int, n_dirs: int, alphas: list[float] | None,
                  betas: list[float] | None) -> list[list[Callable]]:
    """The ``count`` activations of each direction (forward's first, then reverse's).

    When fewer than ``count * n_dirs`` names are given, every direction uses the first
    ``count``.
    """
    if len(names) < count:
        raise AttributeValueError(f"activations needs {count} name(s) per direction, got "
                                  f"{list(names)}")
    funcs = activation_functions(list(names), alphas, betas)
    if len(funcs) < count * n_dirs:
        return [funcs[:count] for _ in range(n_dirs)]
    return [funcs[d * count:(d + 1) * count] for d in range(n_dirs)]
