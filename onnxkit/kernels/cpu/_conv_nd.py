"""Conv of 3-D and larger inputs on the ``cpu`` executor (``conv.conv`` serves 1-D and
2-D): per image, the columns by one strided numpy copy per kernel tap, one BLAS product
per group, then the epilogue."""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu._blas import matmul
from onnxkit.kernels.cpu._buffers import empty
from onnxkit.kernels.cpu._epilogue import epilogue_rows
from onnxkit.kernels.cpu._geometry import layer_geometry
from onnxkit.ops.nn._windows import pad_for_windows, tap_slices
from onnxkit.runtime.limits import check_allocation


def conv_nd(X, W, B, Z, auto_pad, dilations, group, pads, strides, activation, params):
    """3-D and up: columns (C, taps, positions) by one strided numpy copy per kernel tap,
    one product per image and group (``matmul``, on the Numba threads: the reference's
    ``np.matmul`` gets one BLAS thread during a run), the epilogue over the whole output.
    None when Z's shape is not the output's (the reference reports it)."""
    g = layer_geometry(X.shape[2:], W.shape[2:], strides, dilations, pads, auto_pad)
    n, c = X.shape[:2]
    m = W.shape[0]
    out_shape = (n, m) + tuple(g.out)
    if Z is not None and Z.shape != out_shape:
        return None
    taps, positions = int(np.prod(g.kernel)), int(np.prod(g.out))
    check_allocation((c * taps, positions), X.dtype, "Conv im2col columns")
    cols = empty((c, taps, positions), X.dtype)
    Y = empty(out_shape, X.dtype)
    weights = np.ascontiguousarray(W).reshape(group, m // group, -1)
    for i in range(n):
        xp = pad_for_windows(X[i:i + 1], g)[0]
        for t, tap in enumerate(np.ndindex(*g.kernel)):
            np.copyto(cols[:, t].reshape((c,) + tuple(g.out)), xp[tap_slices(g, tap)[1:]])
        src = cols.reshape(group, -1, positions)
        matmul(weights, src, Y[i].reshape(group, m // group, positions))
    rows = Y.reshape(n * m, positions)
    zrows = None if Z is None else np.ascontiguousarray(Z).reshape(n * m, positions)
    return epilogue_rows(rows, B, zrows, activation, params).reshape(out_shape)
