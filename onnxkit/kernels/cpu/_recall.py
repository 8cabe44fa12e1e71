"""What a kernel works out from constant index inputs, found again on the next run.

    target = recalled((shape,), (data.shape, allowzero), lambda: target_shape(...))

A Reshape's shape, a Slice's starts, ends, axes and steps are, in nearly every model,
initializers: the same read-only arrays, run after run. The reference kernels turn them
into Python ints and check them on every call (2-3 us, more than the reshape itself).
``recalled`` keeps the result of ``build`` for arrays that are constants
(``_buffers.is_constant``: over the model's immutable bytes), keyed by their identity
and the hashable ``extra`` (the data's shape, attributes). An entry leaves the memo when
one of its arrays is freed (``weakref.finalize``), before another array can take over
its id. Other arrays (computed shapes, a user's feeds) build on every call.
"""

from __future__ import annotations

import weakref

from onnxkit.kernels.cpu._buffers import is_constant

_DERIVED: dict = {}
MAX_ENTRIES = 4096  # past this the memo starts again
_NONE = object()


def recalled(arrays: tuple, extra, build):
    """``build()``, remembered for these arrays (None allowed) and ``extra``."""
    key = (*map(id, arrays), extra)
    value = _DERIVED.get(key, _NONE)
    if value is not _NONE:
        return value
    value = build()
    if all(a is None or is_constant(a) for a in arrays):
        if len(_DERIVED) >= MAX_ENTRIES:
            _DERIVED.clear()
        _DERIVED[key] = value
        for a in arrays:  # gone with the array, before its id can be another's
            if a is not None:
                weakref.finalize(a, _DERIVED.pop, key, None)
    return value
