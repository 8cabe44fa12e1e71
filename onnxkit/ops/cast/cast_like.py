"""CastLike: Cast ``input`` to the element type of ``target_type`` (its values are unused).

    Y = Cast(input, to=elem_type(target_type), saturate, round_mode)

https://onnx.ai/onnx/operators/onnx__CastLike.html
"""

from onnxkit.ops.cast._convert import cast_array
from onnxkit.ops.registry import op


@op("CastLike", 15)
def cast_like_v15(input, target_type):
    return cast_array(input, target_type.dtype)


@op("CastLike", 19, 21, 23)
def cast_like_v19(input, target_type, *, saturate=1):
    return cast_array(input, target_type.dtype, saturate)


@op("CastLike", 24, 25)
def cast_like(input, target_type, *, saturate=1, round_mode="up"):
    return cast_array(input, target_type.dtype, saturate, round_mode)
