"""The sliding windows' geometry (``onnxkit.ops.nn._windows.geometry``), memoized per
layer: the reference's arithmetic, paid by every Conv and pool node on every run, costs
more than the lookup (``docs/cpu.md``)."""

from __future__ import annotations

from functools import lru_cache

from onnxkit.ops.nn._windows import Geometry, geometry


def as_key(values):
    """An attribute list (or shape) as a hashable tuple; tuples and None as they are.
    numpy integers hash and compare as the ints they hold: no conversion needed."""
    return values if values is None or type(values) is tuple else tuple(values)


@lru_cache(maxsize=1024)
def _cached(in_shape, kernel, strides, dilations, pads, auto_pad, ceil_mode) -> Geometry:
    return geometry(in_shape, kernel, strides, dilations, pads, auto_pad, ceil_mode)


def layer_geometry(in_shape, kernel, strides=None, dilations=None, pads=None,
                   auto_pad="NOTSET", ceil_mode=0) -> Geometry:
    """``geometry(...)`` for these arguments (lists or tuples), computed once per layer."""
    return _cached(as_key(in_shape), as_key(kernel), as_key(strides), as_key(dilations),
                   as_key(pads),
                   auto_pad, ceil_mode)


def attrs_fit(nd: int, kernel, strides, dilations, pads) -> bool:
    """Whether a pooling node's attributes have the lengths of ``nd`` spatial axes (the
    compiled pools' check; anything else goes to the reference kernel, which says why)."""
    return kernel is not None and len(kernel) == nd and all(
        v is None or len(v) == size for v, size in ((strides, nd), (dilations, nd), (pads, 2 * nd)))
