"""TensorScatter: write an update into a KV cache along the sequence axis.

    present = copy(past_cache)
    for each batch row b, for s in range(update.shape[axis]):
        t = write_indices[b] + s            (mod max_sequence_length if mode == "circular")
        present[b, ..., t, ...] = update[b, ..., s, ...]

``write_indices`` defaults to zeros; ``linear`` mode requires the update to fit.
https://onnx.ai/onnx/operators/onnx__TensorScatter.html
"""

import numpy as np

from onnxkit.errors import AttributeValueError, KernelInputError
from onnxkit.ops.registry import op


@op("TensorScatter", 24)
def tensor_scatter(past_cache, update, write_indices=None, *, axis=-2, mode="linear"):
    rank = past_cache.ndim
    if update.ndim != rank:
        raise KernelInputError(f"TensorScatter: update has rank {update.ndim}, past_cache has "
                               f"rank {rank}")
    ax = axis + rank if axis < 0 else axis
    if not 0 < ax < rank:
        raise AttributeValueError(f"TensorScatter: axis={axis} must name a non-batch axis of a "
                                  f"rank-{rank} cache")
    if mode not in ("linear", "circular"):
        raise AttributeValueError("TensorScatter: mode must be 'linear' or 'circular', got "
                                  f"{mode!r}")
    batch, capacity, length = past_cache.shape[0], past_cache.shape[ax], update.shape[ax]
    starts = np.zeros(batch, dtype=np.int64) if write_indices is None \
        else write_indices.astype(np.int64).reshape(batch)
    present = past_cache.copy()
    for b in range(batch):
        slots = starts[b] + np.arange(length)
        if mode == "circular":
            slots = slots % capacity
        elif length and (starts[b] < 0 or slots[-1] >= capacity):
            raise KernelInputError(f"TensorScatter: batch {b}: writing {length} entries at index "
                                   f"{starts[b]} "
                                   f"overflows the sequence axis of size {capacity} (mode "
                                   "'linear')")
        # move the sequence axis next to the batch axis so one fancy index writes it
        np.moveaxis(present[b], ax - 1, 0)[slots] = np.moveaxis(update[b], ax - 1, 0)
    return present
