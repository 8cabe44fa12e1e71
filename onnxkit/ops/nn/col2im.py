"""Col2Im: rearrange sliding-block columns back into an image, summing overlaps.

    input (N, C * prod(block_shape), L) with L = number of blocks of the padded image
    image[n, c, o*s + j*d - pads_begin] += input[n, (c, j), o]

The inverse layout of im2col (as torch.nn.Fold). https://onnx.ai/onnx/operators/onnx__Col2Im.html
"""

import numpy as np

from onnxkit.errors import KernelError
from onnxkit.ops.nn._windows import geometry, scatter_windows
from onnxkit.ops.registry import op
from onnxkit.core.limits import check_allocation


@op("Col2Im", 18)
def col2im(columns, image_shape, block_shape, *, dilations=None, pads=None, strides=None):
    image = tuple(int(v) for v in image_shape)
    block = tuple(int(v) for v in block_shape)
    g = geometry(image, block, strides, dilations, pads)
    n, rows, blocks = columns.shape
    k = int(np.prod(block))
    if rows % k or blocks != int(np.prod(g.out)):
        raise KernelError(
            f"Col2Im input of shape {list(columns.shape)} does not hold {list(g.out)} blocks "
            f"of shape {list(block)} for an image of shape {list(image)}"
        )
    check_allocation((n, rows // k) + image, columns.dtype, "Col2Im output")
    cols = columns.reshape((n, rows // k) + block + g.out)
    return np.ascontiguousarray(scatter_windows(cols, g, image))
