"""The course's tasks: a title and points each, and the assignment (exercise file) that
holds it. The tasks themselves are marked in the sources (``# ## Task 1.1``,
exercises/_tasks.py); a maintainer check keeps this table and the marks the same."""

from __future__ import annotations

#: task -> (points, what the learner writes)
TASKS: dict[str, tuple[int, str]] = {
    "1.1": (1, "LeakyRelu kernel"),
    "1.2": (2, "Softmax-13 kernel, one axis"),
    "1.3": (2, "Transpose kernel, every version"),
    "1.4": (2, "Gemm kernel, transposes and an optional C"),
    "1.5": (3, "LayerNormalization kernel, three outputs"),
    "2.1": (2, "rewrite Mul(x, Reciprocal(y)) to Div(x, y)"),
    "2.2": (3, "rewrite Pow(x, 2) to Mul(x, x), with its safety check"),
    "3.1": (1, "softplus in ONNX text syntax"),
    "3.2": (2, "row normalization in ONNX text syntax"),
    "4.1": (2, "softmax_rows, a Numba CPU kernel"),
    "4.2": (2, "leaky_relu_kernel, a Numba CUDA kernel"),
    "4.3": (3, "row_sums_kernel, a CUDA block per row"),
    "5.1": (1, "decode a varint by hand"),
    "5.2": (2, "find a length-delimited field in a model's bytes"),
    "6.1": (2, "build a model with onnx.helper that passes the full checker"),
    "6.2": (2, "convert a model to opset 18 and say what changed"),
    "7.1": (2, "quantize weights to int8 with a bounded error"),
    "7.2": (2, "a quantized MatMul model and its error bound"),
    "8.1": (3, "a conformance check for any runtime"),
}


def assignment_of(task: str) -> str:
    """The exercise file (without .py) that holds ``task``: its nbgrader assignment."""
    from exercises._tasks import tasks

    return tasks()[task].stem


def points(task: str) -> int:
    return TASKS[task][0]


def title(task: str) -> str:
    return TASKS[task][1]
