"""Cast on the GPU: y[i] = x[i] converted to ``to`` (integers wrap, floats round to nearest).

Between the dtypes a DeviceTensor holds (bool, integers, float32, float64) the
conversion is the store of one element into the other type; strings, float16 and the
ml_dtypes formats (where ``saturate`` and ``round_mode`` matter) run on the host.
https://onnx.ai/onnx/operators/onnx__Cast.html
"""

from onnxkit.kernels.cuda import CUDA
from onnxkit.kernels.cuda import _scalar as s
from onnxkit.kernels.cuda._device import DEVICE_DTYPES, HostFallback, device, need_dtype
from onnxkit.kernels.cuda._elementwise import unary
from onnxkit.ops.cast._convert import target_dtype
from onnxkit.ops.registry import op


def _cast(input, to):  # noqa: A002 (the spec's name)
    X = device(input, "input")
    need_dtype(X, DEVICE_DTYPES, "input")
    dtype = target_dtype(to)
    if dtype not in DEVICE_DTYPES:
        raise HostFallback(f"the target dtype {dtype} is not held on the device")
    if dtype == X.dtype:
        return X  # values are never written after they are made: share the buffer
    if X.dtype.kind == "f" and dtype.kind == "b":
        return unary(X, s.nonzero, out_dtype=dtype)
    return unary(X, s.identity, out_dtype=dtype)


@op("Cast", 6, 9, 13, registry=CUDA)
def cast_v6(input, *, to):  # noqa: A002
    return _cast(input, to)


@op("Cast", 19, 21, 23, registry=CUDA)
def cast_v19(input, *, to, saturate=1):  # noqa: A002
    return _cast(input, to)


@op("Cast", 24, 25, 28, registry=CUDA)
def cast(input, *, to, saturate=1, round_mode="up"):  # noqa: A002
    return _cast(input, to)
