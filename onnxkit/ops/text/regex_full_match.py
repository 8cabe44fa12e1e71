"""RegexFullMatch: Y[i] = True when the whole string X[i] matches ``pattern``.

The spec names RE2 syntax, whose matching time is linear in the text. Python's ``re``
backtracks (``(a+)+$`` can take hours), so a hostile model could hang the kernel: the
pattern is parsed by Python's parser and matched by ``_linear_regex`` (an NFA run as a
lazy DFA) instead. The common syntax agrees; constructs RE2 lacks (backreferences,
lookaround, atomic groups, possessive repeats) are refused, as RE2 refuses them, and
some RE2-only forms (``\\pN`` one-letter classes, ``\\C``, ``(?U)``) fail to parse here.
https://onnx.ai/onnx/operators/onnx__RegexFullMatch.html
"""

import re

import numpy as np

from onnxkit.errors import AttributeMismatchError, describe_node
from onnxkit.ops.registry import op
from onnxkit.ops.text._linear_regex import LinearRegex


@op("RegexFullMatch", 20, context=True)
def regex_full_match(X, *, pattern="", ctx):
    try:
        compiled = LinearRegex(pattern)
    except (re.error, ValueError, OverflowError, RecursionError) as exc:
        raise AttributeMismatchError(
            f"{describe_node(ctx.node)}: pattern {pattern!r} is not a usable regular "
            f"expression: {exc}"
        ) from None
    matches = [compiled.fullmatch(s) for s in X.reshape(-1)]
    return np.array(matches, dtype=bool).reshape(X.shape)
