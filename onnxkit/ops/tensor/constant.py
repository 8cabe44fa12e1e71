"""Constant: output the tensor held by exactly one attribute.

    value (TENSOR) | sparse_value (v11+, densified) | value_float / value_int /
    value_string (scalars, v12+) | value_floats / value_ints / value_strings (1-D, v12+)
https://onnx.ai/onnx/operators/onnx__Constant.html
"""

import numpy as np

from onnxkit.errors import AttributeValueError
from onnxkit.ops.registry import op


@op("Constant", 1, 9)
def constant_v1(*, value):
    return value


@op("Constant", 11)
def constant_v11(*, value=None, sparse_value=None):
    return constant(value=value, sparse_value=sparse_value)


@op("Constant", 12, 13, 19, 21, 23, 24, 25)
def constant(*, value=None, sparse_value=None, value_float=None, value_floats=None,
             value_int=None, value_ints=None, value_string=None, value_strings=None):
    given = {
        "value": value,
        "sparse_value": sparse_value,
        "value_float": None if value_float is None else np.array(value_float, dtype=np.float32),
        "value_floats": None if value_floats is None else np.array(value_floats, dtype=np.float32),
        "value_int": None if value_int is None else np.array(value_int, dtype=np.int64),
        "value_ints": None if value_ints is None else np.array(value_ints, dtype=np.int64),
        "value_string": None if value_string is None else np.array(value_string, dtype=object),
        "value_strings": None if value_strings is None else np.array(value_strings, dtype=object),
    }
    present = [name for name, v in given.items() if v is not None]
    if len(present) != 1:
        raise AttributeValueError(f"Constant needs exactly one value attribute, got "
                                  f"{', '.join(present) if present else 'none'}")
    return given[present[0]]
