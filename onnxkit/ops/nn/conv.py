"""Conv: N-d grouped, strided, dilated, padded cross-correlation (im2col + matmul).

    Y[n, m, o...] = B[m] + sum_{c in group(m), j...} X_pad[n, c, o*s + j*d] * W[m, c, j...]

X is (N, C, *spatial), W is (M, C / group, *kernel). The windows of the padded input are
a stride-tricks view; laid out as (N, group, C/group * K, positions) they turn the
convolution into one batched matrix product with W as (group, M/group, C/group * K).

https://onnx.ai/onnx/operators/onnx__Conv.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.nn._windows import compute_dtype, geometry, pad_for_windows, sliding
from onnxkit.ops.linalg._precision import product_dtype
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


def check_kernel_shape(kernel_shape, W) -> tuple:
    kernel = tuple(W.shape[2:])
    if kernel_shape is not None and tuple(kernel_shape) != kernel:
        raise KernelError(
            f"kernel_shape {list(kernel_shape)} does not match W's shape {list(W.shape)}")
    return kernel


def im2col(X: np.ndarray, g, groups: int) -> np.ndarray:
    """(N, C, *spatial) -> columns (N, groups, C/groups * K, P) of the padded windows."""
    n, c = X.shape[:2]
    nd = len(g.kernel)
    view = sliding(pad_for_windows(X, g), g)  # N, C, *out, *kernel
    order = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    positions = int(np.prod(g.out))
    check_allocation((n, c, int(np.prod(g.kernel)), positions), X.dtype, "Conv im2col columns")
    return view.transpose(order).reshape(n, groups, -1, positions)


@op("Conv", 1, 11, 22)
def conv(X, W, B=None, *, auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None,
         pads=None, strides=None):
    kernel = check_kernel_shape(kernel_shape, W)
    n, c = X.shape[:2]
    m = W.shape[0]
    if c != W.shape[1] * group or m % group:
        raise KernelError(
            f"Conv with group={group}: X has {c} channels, W has shape {list(W.shape)}")
    g = geometry(X.shape[2:], kernel, strides, dilations, pads, auto_pad)
    work = product_dtype(compute_dtype(X.dtype))  # float64: _precision
    cols = im2col(X.astype(work, copy=False), g, group)
    check_allocation((n, m) + g.out, work, "Conv output")
    weights = W.astype(work, copy=False).reshape(group, m // group, -1)
    Y = np.matmul(weights, cols).reshape((n, m) + g.out)  # (N, group, M/group, P)
    if B is not None:
        Y += B.astype(work, copy=False).reshape((m,) + (1,) * len(kernel))
    return Y.astype(X.dtype, copy=False)
