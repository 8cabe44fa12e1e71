"""MaxPool: the largest value of each (dilated, strided, padded) window, and where it was.

    Y[n, c, o] = max over taps j of X[n, c, o*s + j*d - pads_begin]   (padding never wins)
    Indices[n, c, o] = flat index of that element in X (the first one on ties): row-major
        over (N, C, *spatial), or with storage_order=1 column-major over the spatial axes

https://onnx.ai/onnx/operators/onnx__MaxPool.html
"""

import numpy as np

from onnxkit.ops.nn._windows import geometry, pad_for_windows, reduce_windows, sliding
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


def lowest(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    return -np.inf


def argmax_indices(taps: np.ndarray, shape, g, storage_order: int) -> np.ndarray:
    """Flat X indices of the window taps ``taps`` (N, C, *out) picked by argmax."""
    n, c = shape[:2]
    spatial = tuple(shape[2:])
    plane = (np.arange(n)[:, None] * c + np.arange(c)[None, :]) * int(np.prod(spatial))
    tap = np.unravel_index(taps, g.kernel)
    coords = []
    for axis, (j, s, d, b) in enumerate(zip(tap, g.strides, g.dilations, g.begin)):
        o = np.arange(g.out[axis]).reshape((-1,) + (1,) * (len(spatial) - axis - 1))
        coords.append(o * s + j * d - b)
    if storage_order == 1:
        coords, spatial = coords[::-1], spatial[::-1]
    place = np.ravel_multi_index(tuple(coords), tuple(spatial), mode="clip")
    return (place + plane.reshape((n, c) + (1,) * len(spatial))).astype(np.int64)


@op("MaxPool", 1, 8, 10, 11, 12, 22, context=True)
def max_pool(X, *, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape, pads=None,
             storage_order=0, strides=None, ctx):
    g = geometry(X.shape[2:], kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    nd = len(g.kernel)
    xp = pad_for_windows(X, g, lowest(X.dtype))
    Y = reduce_windows(xp, g, np.maximum)
    if ctx.n_outputs < 2 or not ctx.node.output[1]:  # no Indices wanted
        return Y
    check_allocation(Y.shape + g.kernel, np.float64, "MaxPool window comparison")
    # first tap holding the maximum that is a real element, not padding
    inside = sliding(pad_for_windows(np.ones((1, 1) + X.shape[2:], dtype=bool), g, False), g)
    windows = sliding(xp, g)
    best = Y.reshape(Y.shape + (1,) * nd)
    hit = (windows == best) & inside
    if X.dtype.kind == "f":
        hit |= np.isnan(windows) & np.isnan(best)
    taps = hit.reshape(hit.shape[:2 + nd] + (-1,)).argmax(axis=-1)
    return Y, argmax_indices(taps, X.shape, g, storage_order)
