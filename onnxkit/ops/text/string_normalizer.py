"""StringNormalizer: drop stop words from a [C] or [1, C] string tensor, then change case.

    kept = [w for w in X if w not in stopwords]   (compared lowercased unless is_case_sensitive)
    Y = LOWER / UPPER / NONE applied to kept; when nothing is kept, Y = [""] (shape [1] or [1, 1])

``locale`` is accepted; case changes use Python's Unicode rules whatever its value.
https://onnx.ai/onnx/operators/onnx__StringNormalizer.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError, InputError, describe_node
from onnxkit.ops.registry import op

_CASE = {"NONE": lambda s: s, "LOWER": str.lower, "UPPER": str.upper}


@op("StringNormalizer", 10, context=True)
def string_normalizer(X, *, case_change_action="NONE", is_case_sensitive=0, locale="",
                      stopwords=None, ctx):
    if case_change_action not in _CASE:
        raise AttributeMismatchError(
            f"{describe_node(ctx.node)}: case_change_action must be NONE, LOWER or UPPER, "
            f"got {case_change_action!r}"
        )
    if X.ndim == 2 and X.shape[0] != 1 or X.ndim not in (1, 2):
        raise InputError(
            f"{describe_node(ctx.node)}: X must have shape [C] or [1, C], got {list(X.shape)}"
        )
    stopwords = [] if stopwords is None else stopwords
    if is_case_sensitive:
        stop = set(stopwords)
        kept = [w for w in X.reshape(-1) if w not in stop]
    else:
        stop = {w.lower() for w in stopwords}
        kept = [w for w in X.reshape(-1) if w.lower() not in stop]
    change = _CASE[case_change_action]
    out = np.array([change(w) for w in kept] or [""], dtype=object)
    return out.reshape(1, -1) if X.ndim == 2 else out
