"""Tile: repeat the whole tensor ``repeats[i]`` times along each axis i.

Tile-1 repeats along a single axis: inputs (input, tiles, axis).
https://onnx.ai/onnx/operators/onnx__Tile.html
"""

import numpy as np

from onnxkit.errors import KernelInputError
from onnxkit.ops.registry import op
from onnxkit.ops.tensor._util import int_list, normalize_axis, scalar_int
from onnxkit.core.limits import check_allocation


def tile_by(data: np.ndarray, repeats: list[int]) -> np.ndarray:
    if len(repeats) != data.ndim or any(r < 0 for r in repeats):
        raise KernelInputError(f"Tile: repeats {repeats} must be {data.ndim} non-negative counts "
                               f"(one per axis of {list(data.shape)})")
    check_allocation([d * r for d, r in zip(data.shape, repeats)], data.dtype, "Tile output")
    return np.tile(data, repeats)


@op("Tile", 1)
def tile_v1(data, tiles, axis):
    repeats = [1] * data.ndim
    repeats[normalize_axis(scalar_int(axis, "axis"), data.ndim)] = scalar_int(tiles, "tiles")
    return tile_by(data, repeats)


@op("Tile", 6, 13)
def tile(data, repeats):
    return tile_by(data, int_list(repeats))
