"""Cast: convert every element to the type ``to`` names (rules in ``_convert``).

    Y = cast_array(X, dtype_of(to), saturate, round_mode)

Cast-1 names the type as a string ("FLOAT"); later versions by its TensorProto code.
``saturate`` (19+) applies to float8 targets, ``round_mode`` (24+) to float8e8m0.
https://onnx.ai/onnx/operators/onnx__Cast.html
"""

from onnx import TensorProto

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.cast._convert import cast_array, target_dtype
from onnxkit.ops.registry import op


@op("Cast", 1)
def cast_v1(input, *, to):
    name = str(to).upper()
    if name not in TensorProto.DataType.keys():
        raise AttributeMismatchError(
            f"Cast-1: 'to'={to!r} is not an element type name (e.g. 'FLOAT', 'INT64')"
        )
    return cast_array(input, target_dtype(TensorProto.DataType.Value(name)))


@op("Cast", 6, 9, 13)
def cast_v6(input, *, to):
    return cast_array(input, target_dtype(to))


@op("Cast", 19, 21, 23)
def cast_v19(input, *, to, saturate=1):
    return cast_array(input, target_dtype(to), saturate)


@op("Cast", 24, 25, 28)
def cast(input, *, to, saturate=1, round_mode="up"):
    return cast_array(input, target_dtype(to), saturate, round_mode)
