"""Exercise 8: write a conformance check, the kind onnxkit's kit runs (onnxkit conformance).

A case (``onnxkit.conformance.cases.Case``) is a model, its data sets and tolerances:

    case.name, case.model                  the name ("test_relu") and the ModelProto
    case.data_sets                         [(inputs, expected outputs), ...], numpy arrays
    case.feeds(inputs)                     the inputs as {input name: array}
    case.rtol, case.atol                   a value passes when |got - expected| <= atol + rtol * |expected|

A runtime is a function ``run(model, feeds) -> [outputs]`` (onnxruntime, onnxkit, yours).

Check your work:   python -m exercises.check 8.1
"""

from __future__ import annotations

import numpy as np  # noqa: F401  (for your check)


def conformance(run, cases) -> dict[str, str]:
    """``{case name: why it failed}`` for each case that ``run`` fails ({} when all pass).

    A case fails when, for any of its data sets, ``run`` raises (the reason names the
    exception), returns another number of outputs, or an output whose shape or dtype is
    not the expected one, or whose values are off by more than the case's tolerances
    (NaN is right where NaN is expected, and only there). One reason per failed case.
    """
    # ## Task 8.1
    # Hint: a runtime may raise anything: catch Exception, never let it end the check.
    raise NotImplementedError("Need to implement for Task 8.1")
