"""Run one node on constant inputs with onnxkit's own reference kernels (for folding).

    outputs = evaluate(node, [array, ...], opsets)     # a tuple, one value per output

Raises ``NotFoldable`` (with the reason) when the node cannot be evaluated here: no
kernel, a scope-aware kernel (control flow), or a kernel error.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from onnx import NodeProto

from onnxkit.errors import OnnxkitError
from onnxkit.runtime.limits import Limits, reset_limits, using_limits

#: folding must not blow a model up: no folded tensor may exceed this
FOLD_LIMITS = Limits(max_tensor_bytes=256 * 1024**2)


class NotFoldable(Exception):
    pass


@lru_cache(maxsize=1)
def _executor():
    from onnxkit.runtime.executors import get_executor

    return get_executor("reference")


def evaluate(node: NodeProto, args: list, opsets: dict[str, int]) -> tuple:
    from onnxkit.runtime.plan import PlanContext, compile_node

    executor = _executor()
    token = using_limits(FOLD_LIMITS)
    try:
        ctx = PlanContext(executor, FOLD_LIMITS, {})
        try:
            step, _ = compile_node(node, opsets, ctx, frozenset(i for i in node.input if i), "", 0, None)
        except OnnxkitError as exc:
            raise NotFoldable(str(exc)) from None
        if step.kernel.context:
            raise NotFoldable(f"{node.op_type} needs the enclosing scope (control flow)")
        try:
            with np.errstate(all="ignore"):
                result = executor.invoke(step.kernel, list(args), step.attrs, None)
        except Exception as exc:  # noqa: BLE001 - the model may be wrong; just don't fold
            raise NotFoldable(f"the kernel failed: {type(exc).__name__}: {exc}") from None
    finally:
        reset_limits(token)
    results = result if isinstance(result, tuple) else (result,)
    return tuple(v if isinstance(v, (np.ndarray, list, dict)) or v is None else np.asarray(v)
                 for v in results)
