"""Einsum: Einstein summation, e.g. "bij,bjk->bik" (batched matrix product).

    output[out-term] = sum over labels missing from out-term of prod_i input_i[term_i]
    without "->": the output labels are those seen once, in ASCII order, "..." first

Spaces are ignored; the sum runs in the inputs' type (float32 for 16-bit floats).
https://onnx.ai/onnx/operators/onnx__Einsum.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.linalg._precision import widened
from onnxkit.ops.registry import op


@op("Einsum", 12, 28)
def einsum(*Inputs, equation):
    if not Inputs:
        raise KernelError("Einsum needs at least one input")
    spec = equation.replace(" ", "")
    try:
        out = np.einsum(spec, *[widened(x) for x in Inputs])
    except ValueError as exc:
        raise KernelError(f"Einsum equation {equation!r} does not fit the inputs: {exc}") from exc
    return np.asarray(out).astype(Inputs[0].dtype, copy=False)
