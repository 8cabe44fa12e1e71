"""Hand-written cases for what changed between operator versions (kind ``"version"``).

Each case is one node at an older opset, with expected outputs computed here in numpy from
the older version's own spec text (never by onnxkit): where the semantics moved, the old
rule, where an attribute became an input, the attribute form.
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from onnxkit.conformance.cases import Case

_X = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)


def _case(name, op, opset, inputs, outputs, attrs=None, init=None, rtol=1e-5, atol=1e-6):
    """One node ``op`` at ``opset``; ``inputs``/``outputs`` are {name: array} in order."""
    init = init or {}
    node = helper.make_node(op, list(inputs) + list(init), list(outputs), **(attrs or {}))
    vi = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
          for n, a in inputs.items()]
    vo = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
          for n, a in outputs.items()]
    tensors = [helper.make_tensor(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape, a.flatten().tolist())
               for n, a in init.items()]
    graph = helper.make_graph([node], name, vi, vo, initializer=tensors)
    opsets = [helper.make_opsetid("", opset)]
    model = helper.make_model(graph, opset_imports=opsets,
                              ir_version=helper.find_min_ir_version_for(opsets, True))
    return Case(name, "version", rtol, atol, None, model,
                [(list(inputs.values()), list(outputs.values()))])


def _softmax_2d(x, axis):
    """Before 13: x seen as 2-D [prod(shape[:axis]), prod(shape[axis:])], softmax per row."""
    rows = x.reshape(int(np.prod(x.shape[:axis])), -1).astype(np.float64)
    e = np.exp(rows - rows.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(x.shape)


def _hardmax_2d(x, axis):
    rows = x.reshape(int(np.prod(x.shape[:axis])), -1)
    out = np.zeros_like(rows)
    out[np.arange(rows.shape[0]), rows.argmax(axis=1)] = 1  # the first maximum of each row
    return out.reshape(x.shape)


def _coercion_cases():
    cases = []
    for opset in (1, 11):
        # the default axis was 1 (today's is -1): one softmax over the 12 values of each batch row
        soft = _softmax_2d(_X, 1).astype(np.float32)
        cases.append(_case(f"test_softmax_coerced_2d_default_axis_v{opset}", "Softmax", opset,
                           {"x": _X}, {"y": soft}))
        cases.append(_case(f"test_logsoftmax_coerced_2d_default_axis_v{opset}", "LogSoftmax", opset,
                           {"x": _X}, {"y": np.log(_softmax_2d(_X, 1)).astype(np.float32)}))
        cases.append(_case(f"test_hardmax_coerced_2d_default_axis_v{opset}", "Hardmax", opset,
                           {"x": _X}, {"y": _hardmax_2d(_X, 1)}))
        cases.append(_case(f"test_softmax_coerced_2d_axis_2_v{opset}", "Softmax", opset,
                           {"x": _X}, {"y": _softmax_2d(_X, 2).astype(np.float32)}, {"axis": 2}))
    return cases


def _split_cases():
    x = np.array([1, 2, 3, 4, 5, 6], np.float32)
    halves = {"a": x[:2], "b": x[2:]}
    cases = [_case(f"test_split_attribute_v{v}", "Split", v, {"x": x}, halves, {"axis": 0, "split": [2, 4]})
             for v in (2, 11)]
    cases.append(_case("test_split_input_v13", "Split", 13, {"x": x}, halves,
                       init={"split": np.array([2, 4], np.int64)}))
    # 18: num_outputs=4 on 7 values: ceil(7/4) = 2 per part, the last gets what is left: [2, 2, 2, 1]
    y = np.arange(7, dtype=np.float32)
    cases.append(_case("test_split_num_outputs_uneven_v18", "Split", 18, {"x": y},
                       {"a": y[0:2], "b": y[2:4], "c": y[4:6], "d": y[6:7]}, {"num_outputs": 4}))
    return cases


def _resize_cases():
    x = np.array([[[[1.0, 3.0]]]], np.float32)
    scales = np.array([1, 1, 1, 2], np.float32)
    # 10: x_original = x_resized / scale (asymmetric): 0, 0.5, 1, 1.5 -> clamped to [0, 1]
    asym = np.array([[[[1.0, 2.0, 3.0, 3.0]]]], np.float32)
    # 11 default half_pixel: (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 -> clamped to [0, 1]
    half = np.array([[[[1.0, 1.5, 2.5, 3.0]]]], np.float32)
    return [
        _case("test_resize_linear_asymmetric_v10", "Resize", 10, {"x": x}, {"y": asym},
              {"mode": "linear"}, init={"scales": scales}),
        _case("test_resize_linear_default_half_pixel_v11", "Resize", 11, {"x": x}, {"y": half},
              {"mode": "linear"}, init={"roi": np.zeros(0, np.float32), "scales": scales}),
        _case("test_upsample_linear_v9", "Upsample", 9, {"x": x}, {"y": asym},
              {"mode": "linear"}, init={"scales": scales}),
    ]


def _attribute_cases():
    x = np.array([-2.0, 0.0, 2.0], np.float32)
    m = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    r = np.arange(6, dtype=np.float32)
    return [
        _case("test_clip_attributes_v6", "Clip", 6, {"x": x}, {"y": np.array([-1, 0, 1], np.float32)},
              {"min": -1.0, "max": 1.0}),
        _case("test_pad_attribute_v2", "Pad", 2, {"x": m[:1]}, {"y": np.array([[9, 1, 2, 9]], np.float32)},
              {"pads": [0, 1, 0, 1], "value": 9.0}),
        _case("test_reduce_sum_axes_attribute_v11", "ReduceSum", 11, {"x": m},
              {"y": np.array([3, 7], np.float32)}, {"axes": [1], "keepdims": 0}),
        _case("test_unsqueeze_axes_attribute_v11", "Unsqueeze", 11, {"x": x}, {"y": x[None]}, {"axes": [0]}),
        _case("test_squeeze_axes_attribute_v11", "Squeeze", 11, {"x": x[None]}, {"y": x}, {"axes": [0]}),
        _case("test_topk_k_attribute_v1", "TopK", 1, {"x": np.array([3, 1, 2], np.float32)},
              {"v": np.array([3, 2], np.float32), "i": np.array([0, 2], np.int64)}, {"k": 2}),
        _case("test_slice_attributes_v1", "Slice", 1, {"x": r}, {"y": r[1:4]},
              {"starts": [1], "ends": [4], "axes": [0]}),
        _case("test_reduce_max_axes_attribute_v13", "ReduceMax", 13, {"x": m},
              {"y": np.array([[3, 4]], np.float32)}, {"axes": [0]}),
    ]


def written_cases() -> list[Case]:
    return _coercion_cases() + _split_cases() + _resize_cases() + _attribute_cases()


__all__ = ["written_cases"]
