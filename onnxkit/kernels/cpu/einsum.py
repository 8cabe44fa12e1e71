"""Einsum of two operands on the ``cpu`` executor: one batched matrix product.

    "bhqd,bhkd->bhqk":  batch labels (in both inputs and the output)  b h
                        contracted (in both, not in the output)        d
                        left / right (in one input and the output)     q / k
    A -> (batch, left, contracted), B -> (batch, contracted, right)   (transposes, copies)
    Y (batch, left, right) = A @ B  on the Numba threads (``_blas.matmul``), then
    reshaped and transposed to the output's order

A label in one input only and not in the output is summed out first. The reference
kernel's ``np.einsum`` multiplies element by element, on one thread. Other equations (one or three operands, "...", a
label twice in one term, non-float types) run the reference kernel.
https://onnx.ai/onnx/operators/onnx__Einsum.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._blas import matmul
from onnxkit.kernels.cpu._buffers import empty
from onnxkit.kernels.cpu._dtypes import COMPILED
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.ops.linalg.einsum import einsum as reference_einsum
from onnxkit.ops.registry import op
from onnxkit.runtime.limits import check_allocation



def _plain(term: str) -> bool:
    return term.isascii() and term.isalpha() and len(set(term)) == len(term)


def _as(x, term: str, order: str, keep: str):
    """``x`` (labels ``term``) with the labels not in ``keep`` summed out, transposed to
    ``order``."""
    gone = tuple(i for i, label in enumerate(term) if label not in keep)
    if gone:
        x = x.sum(axis=gone)
        term = "".join(label for label in term if label in keep)
    return x.transpose([term.index(label) for label in order])


def einsum_fast(A, B, equation: str):
    """The product, or None for the equations left to the reference kernel."""
    spec = equation.replace(" ", "")
    terms, arrow, out = spec.partition("->")
    terms = terms.split(",")
    if (not arrow or len(terms) != 2 or not all(_plain(t) for t in terms)
            or not (_plain(out) or out == "") or A.dtype not in COMPILED or B.dtype != A.dtype
            or A.ndim != len(terms[0]) or B.ndim != len(terms[1])):
        return None
    a, b = terms
    size = {}
    for term, x in ((a, A), (b, B)):
        for label, dim in zip(term, x.shape):
            if size.setdefault(label, dim) != dim:
                return None  # sizes that broadcast: the reference
    if any(label not in size for label in out) or A.size == 0 or B.size == 0:
        return None
    batch = [label for label in out if label in a and label in b]
    left = [label for label in out if label in a and label not in b]
    right = [label for label in out if label in b and label not in a]
    inner = [label for label in a if label in b and label not in out]
    nb, nl, nr, nk = (int(np.prod([size[label] for label in part]))
                      for part in (batch, left, right, inner))
    check_allocation(tuple(size[label] for label in out), A.dtype, "Einsum output")
    a3 = _as(A, a, "".join(batch + left + inner), out + "".join(inner)).reshape(nb, nl, nk)
    b3 = _as(B, b, "".join(batch + inner + right), out + "".join(inner)).reshape(nb, nk, nr)
    y = empty((nb, nl, nr), A.dtype)
    matmul(np.ascontiguousarray(a3), np.ascontiguousarray(b3), y)
    order = batch + left + right
    y = y.reshape(tuple(size[label] for label in order))
    y = y.transpose([order.index(label) for label in out])
    return y if y.flags.c_contiguous else y.copy()  # (ascontiguousarray makes 0-d 1-d)


@op("Einsum", 12, 28, registry=CPU)
def einsum(*Inputs, equation):
    Y = einsum_fast(*Inputs, equation) if len(Inputs) == 2 else None
    return fall_back(reference_einsum, *Inputs, equation=equation) if Y is None else Y
