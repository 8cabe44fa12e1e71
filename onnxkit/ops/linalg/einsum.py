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
from onnxkit.core.limits import check_allocation


def output_shape(spec: str, shapes) -> tuple | None:
    """The shape ``spec`` gives for operands of ``shapes``; None when they do not fit
    (numpy then reports the mismatch)."""
    terms, arrow, out = spec.partition("->")
    terms = terms.split(",")
    if len(terms) != len(shapes):
        return None
    sizes, ellipses, counts = {}, [], {}
    for term, shape in zip(terms, shapes):
        labels = term.replace("...", "", 1)
        if labels and not (labels.isascii() and labels.isalpha()):
            return None
        rank = len(shape) - len(labels)
        if rank < 0 or (rank > 0 and "..." not in term):
            return None
        head = term.index("...") if "..." in term else len(labels)
        ellipses.append(tuple(shape[head:head + rank]))
        dims = tuple(shape[:head]) + tuple(shape[head + rank:])
        for label, dim in zip(labels, dims):
            counts[label] = counts.get(label, 0) + 1
            sizes[label] = max(sizes.get(label, 0), int(dim))
    try:
        broadcast = np.broadcast_shapes(*ellipses)
    except ValueError:
        return None
    if not arrow:
        out = "..." + "".join(sorted(label for label, n in counts.items() if n == 1))
    if any(label not in sizes for label in out.replace("...", "")):
        return None
    head, _, tail = out.partition("...")
    return (tuple(sizes[label] for label in head) + (broadcast if "..." in out else ())
            + tuple(sizes[label] for label in tail))


@op("Einsum", 12, 28)
def einsum(*Inputs, equation):
    if not Inputs:
        raise KernelError("Einsum needs at least one input")
    spec = equation.replace(" ", "")
    operands = [widened(x) for x in Inputs]
    shape = output_shape(spec, [x.shape for x in Inputs])
    if shape is not None:
        check_allocation(shape, np.result_type(*operands), "Einsum output")
    try:
        out = np.einsum(spec, *operands)
    except ValueError as exc:
        raise KernelError(f"Einsum equation {equation!r} does not fit the inputs: {exc}") from exc
    return np.asarray(out).astype(Inputs[0].dtype, copy=False)
