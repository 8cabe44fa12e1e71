"""DepthToSpace / SpaceToDepth: move blocks between channels and space (NCHW, block b).

    DepthToSpace DCR: view x as [N, b, b, C/b², H, W], permute to [N, C/b², H, b, W, b],
                      reshape to [N, C/b², H*b, W*b]
    DepthToSpace CRD: the same from the view [N, C/b², b, b, H, W]
    SpaceToDepth is the inverse (DCR: block-row, block-column, channel; CRD from v28).
DepthToSpace-1 and SpaceToDepth-1/13 know only DCR.

https://onnx.ai/onnx/operators/onnx__DepthToSpace.html
https://onnx.ai/onnx/operators/onnx__SpaceToDepth.html
"""

import numpy as np

from onnxkit.errors import AttributeValueError, KernelInputError
from onnxkit.ops.registry import op


def _dims(x: np.ndarray, blocksize: int) -> tuple:
    if x.ndim != 4:
        raise KernelInputError(f"expects a 4-D NCHW input, got shape {list(x.shape)}")
    if blocksize < 1:
        raise AttributeValueError(f"blocksize must be positive, got {blocksize}")
    return x.shape


def depth_to_space_impl(x: np.ndarray, blocksize: int, mode: str) -> np.ndarray:
    n, c, h, w = _dims(x, blocksize)
    b = blocksize
    if c % (b * b):
        raise KernelInputError(f"channels {c} are not divisible by blocksize² = {b * b}")
    if mode == "DCR":
        y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    elif mode == "CRD":
        y = x.reshape(n, c // (b * b), b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        raise AttributeValueError(f"mode must be 'DCR' or 'CRD', got {mode!r}")
    return y.reshape(n, c // (b * b), h * b, w * b)


def space_to_depth_impl(x: np.ndarray, blocksize: int, mode: str) -> np.ndarray:
    n, c, h, w = _dims(x, blocksize)
    b = blocksize
    if h % b or w % b:
        raise KernelInputError(f"height {h} and width {w} must be divisible by blocksize {b}")
    blocks = x.reshape(n, c, h // b, b, w // b, b)
    if mode == "DCR":
        y = blocks.transpose(0, 3, 5, 1, 2, 4)
    elif mode == "CRD":
        y = blocks.transpose(0, 1, 3, 5, 2, 4)
    else:
        raise AttributeValueError(f"mode must be 'DCR' or 'CRD', got {mode!r}")
    return y.reshape(n, c * b * b, h // b, w // b)


@op("DepthToSpace", 1)
def depth_to_space_v1(data, *, blocksize):
    return depth_to_space_impl(data, blocksize, "DCR")


@op("DepthToSpace", 11, 13, 28)
def depth_to_space(data, *, blocksize, mode="DCR"):
    return depth_to_space_impl(data, blocksize, mode)


@op("SpaceToDepth", 1, 13)
def space_to_depth_v1(data, *, blocksize):
    return space_to_depth_impl(data, blocksize, "DCR")


@op("SpaceToDepth", 28)
def space_to_depth(data, *, blocksize, mode="DCR"):
    return space_to_depth_impl(data, blocksize, mode)
