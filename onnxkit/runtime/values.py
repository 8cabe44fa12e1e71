"""ONNX types and their Python values, kept at their old path: they live in
``onnxkit.core.values``."""

from onnxkit.core.values import (describe_value, elem_type_name, np_dtype, shape_of,
                                 sparse_to_dense, tensor_to_array, type_string, value_bytes)

__all__ = ["describe_value", "elem_type_name", "np_dtype", "shape_of", "sparse_to_dense",
           "tensor_to_array", "type_string", "value_bytes"]
