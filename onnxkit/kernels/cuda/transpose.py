"""Transpose on the GPU: one thread per output element, reading X through permuted strides
(``_elementwise.strided``).

    Y[i] = X[broadcast_offset(i, Y.shape, strides_of_X[perm])]

https://onnx.ai/onnx/operators/onnx__Transpose.html
"""

from onnxkit.errors import KernelInputError
from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda._device import DEVICE_DTYPES, device, need_dtype
from onnxkit.kernels.cuda._elementwise import strided
from onnxkit.kernels.indexing import transpose_strides
from onnxkit.ops.registry import op


@op("Transpose", 1, 13, 21, 23, 24, 25, registry=CUDA)
def transpose(data, *, perm=None):
    X = device(data, "data")
    need_dtype(X, DEVICE_DTYPES, "data")
    perm = list(range(X.ndim))[::-1] if perm is None else [int(p) for p in perm]
    if sorted(perm) != list(range(X.ndim)):
        raise KernelInputError(f"Transpose: perm {perm} is not a permutation of the {X.ndim} axes")
    shape = tuple(X.shape[p] for p in perm)
    if perm == sorted(perm):
        return X  # nothing moves: share the buffer
    return strided(X, shape, transpose_strides(X.shape, perm))
