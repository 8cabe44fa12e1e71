"""The shape two arrays broadcast to (numpy's rule), in plain Python.

``np.broadcast_shapes`` costs more than the small ``Mul`` of a squeeze-excitation block
it serves (``docs/cpu.md``).
"""

from __future__ import annotations


def broadcast_shape(a: tuple, b: tuple) -> tuple | None:
    """The broadcast of shapes ``a`` and ``b``, or None where they do not broadcast."""
    if len(a) < len(b):
        a, b = b, a
    lead = len(a) - len(b)
    out = list(a[:lead])
    for x, y in zip(a[lead:], b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            return None
    return tuple(out)
