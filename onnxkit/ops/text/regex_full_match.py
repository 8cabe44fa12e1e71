"""RegexFullMatch: Y[i] = True when the whole string X[i] matches ``pattern``.

The spec names RE2 syntax; this kernel uses Python's ``re.fullmatch``. The common
syntax agrees; Python additionally accepts backreferences and lookaround (RE2 rejects
them) and lacks some RE2 forms (``\\pN`` one-letter classes, ``\\C``, ``(?U)``), which
then fail to compile here.
https://onnx.ai/onnx/operators/onnx__RegexFullMatch.html
"""

import re

import numpy as np

from onnxkit.errors import AttributeMismatchError, describe_node
from onnxkit.ops.registry import op


@op("RegexFullMatch", 20, context=True)
def regex_full_match(X, *, pattern="", ctx):
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise AttributeMismatchError(
            f"{describe_node(ctx.node)}: pattern {pattern!r} is not a valid regular "
            f"expression: {exc}"
        ) from None
    matches = [compiled.fullmatch(s) is not None for s in X.reshape(-1)]
    return np.array(matches, dtype=bool).reshape(X.shape)
