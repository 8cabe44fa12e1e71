"""Split an optimizer's variadic inputs into per-tensor groups."""

from __future__ import annotations

from onnxkit.errors import InputError


def grouped(inputs: tuple, roles: int, op_name: str) -> list[tuple]:
    """[X1..Xn, G1..Gn, V1..Vn] -> [(X1, G1, V1), ..., (Xn, Gn, Vn)]."""
    if not inputs or len(inputs) % roles:
        raise InputError(f"{op_name} takes R, T and {roles} tensors per optimized variable; "
                         f"got {len(inputs)} tensors after R and T")
    n = len(inputs) // roles
    return [tuple(inputs[i + k * n] for k in range(roles)) for i in range(n)]
