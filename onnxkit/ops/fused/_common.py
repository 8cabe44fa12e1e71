"""Standard kernels the fused kernels are made of, and the activation table.

``activation`` attributes name one of ``ACTIVATIONS``; ``activation_params`` are that
operator's float attributes (or Clip's min and max), in the order listed.
"""

from __future__ import annotations

import numpy as np

from onnxkit.errors import AttributeValueError, NotImplementedOpError


def standard(op_type: str, since_version: int):
    """The reference kernel of a standard operator version (looked up when first used)."""
    from onnxkit.ops import load_reference_kernels

    kernel = load_reference_kernels().get("", op_type, since_version)
    if kernel is None:
        raise NotImplementedOpError(
            f"the onnxkit fused kernels need the reference kernel of {op_type}-{since_version}")
    return kernel.fn


def _clip(x, p):
    low = None if not p else np.array(p[0], dtype=x.dtype)
    high = None if len(p) < 2 else np.array(p[1], dtype=x.dtype)
    return standard("Clip", 13)(x, low, high)


# name -> (how to run it on x with params, the params' names)
ACTIVATIONS = {
    "Relu": (lambda x, p: standard("Relu", 14)(x), ()),
    "LeakyRelu": (lambda x, p: standard("LeakyRelu", 16)(x, alpha=p[0]), ("alpha",)),
    "Sigmoid": (lambda x, p: standard("Sigmoid", 13)(x), ()),
    "Tanh": (lambda x, p: standard("Tanh", 13)(x), ()),
    "Clip": (_clip, ("min", "max")),
    "HardSigmoid": (lambda x, p: standard("HardSigmoid", 22)(x, alpha=p[0], beta=p[1]),
                    ("alpha", "beta")),
    "HardSwish": (lambda x, p: standard("HardSwish", 22)(x), ()),
    "Swish": (lambda x, p: standard("Swish", 24)(x, alpha=p[0]), ("alpha",)),
    "Elu": (lambda x, p: standard("Elu", 22)(x, alpha=p[0]), ("alpha",)),
    "Gelu": (lambda x, p: standard("Gelu", 20)(x, approximate="none"), ()),
    "GeluTanh": (lambda x, p: standard("Gelu", 20)(x, approximate="tanh"), ()),
}


def activate(x: np.ndarray, activation: str, params) -> np.ndarray:
    """Apply the named activation ("" = none)."""
    if not activation:
        return x
    entry = ACTIVATIONS.get(activation)
    if entry is None:
        raise AttributeValueError(f"unknown activation {activation!r}; known: "
                                  f"{', '.join(ACTIVATIONS)}")
    fn, names = entry
    params = list(params or ())
    if activation != "Clip" and len(params) != len(names):
        raise AttributeValueError(f"activation {activation} takes {len(names)} activation_params "
                                  f"({', '.join(names) or 'none'}), got {len(params)}")
    return fn(x, params)
