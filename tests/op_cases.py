"""One table of op cases drives the tests of every executor: the cuda simulator checks and
PTX compile (tests/cuda/), and the cpu executor's (tests/test_cpu_executor.py).

Each case is one node on small inputs (the simulator runs every GPU thread as a Python
thread); the test runs it on the reference and the cuda executors and compares. ``Init``
marks an input that is an initializer (shapes, axes, weights: host data, like in real
models); ``where`` says where the node should run ("host" for the cases a cuda kernel
hands back on purpose).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper

R = np.random.default_rng(7)


def f32(*shape, low=-2.0, high=2.0):
    return R.uniform(low, high, shape).astype(np.float32)


def f64(*shape):
    return R.uniform(-2, 2, shape).astype(np.float64)


def i32(*shape, low=-9, high=10):
    return R.integers(low, high, shape).astype(np.int32)


def i64(values):
    return np.array(values, dtype=np.int64)


@dataclass(frozen=True)
class Init:
    """An input given as an initializer (host data) instead of a feed."""

    value: np.ndarray


@dataclass
class OpCase:
    name: str
    op_type: str
    inputs: tuple
    attrs: dict = field(default_factory=dict)
    opset: int = 18
    domain: str = ""
    outputs: int = 1
    where: str = "cuda"
    rtol: float = 1e-5
    atol: float = 1e-6

    def model(self) -> onnx.ModelProto:
        names, feeds_info, inits = [], [], []
        for i, value in enumerate(self.inputs):
            if value is None:
                names.append("")
                continue
            name = f"x{i}"
            names.append(name)
            if isinstance(value, Init):
                inits.append(onnx.numpy_helper.from_array(value.value, name))
            else:
                elem = helper.np_dtype_to_tensor_dtype(value.dtype)
                feeds_info.append(helper.make_tensor_value_info(name, elem, list(value.shape)))
        outs = [f"y{i}" for i in range(self.outputs)]
        node = helper.make_node(self.op_type, names, outs, domain=self.domain, **self.attrs)
        graph = helper.make_graph([node], self.name, feeds_info,
                                  [helper.make_empty_tensor_value_info(o) for o in outs], inits)
        opsets = [helper.make_opsetid("", self.opset)]
        if self.domain:
            opsets.append(helper.make_opsetid(self.domain, 1))
        return helper.make_model(graph, opset_imports=opsets, ir_version=10)

    def feeds(self) -> dict:
        return {f"x{i}": v for i, v in enumerate(self.inputs)
                if v is not None and not isinstance(v, Init)}


def C(name, op_type, *inputs, **kw):
    attrs = {k: v for k, v in kw.items() if k not in OpCase.__dataclass_fields__}
    rest = {k: v for k, v in kw.items() if k in OpCase.__dataclass_fields__}
    return OpCase(name, op_type, inputs, attrs, **rest)


_NAN = np.array([[1.0, np.nan, -3.0], [0.0, 2.0, np.nan]], np.float32)
_X4 = f32(2, 3, 5, 5)

UNARY = [
    C("relu", "Relu", f32(3, 4)), C("relu_f64", "Relu", f64(5)), C("relu_int", "Relu", i32(7)),
    C("leaky_relu", "LeakyRelu", f32(3, 4), alpha=0.2), C("elu", "Elu", f32(9), alpha=0.5),
    C("hard_sigmoid", "HardSigmoid", f32(9), alpha=0.3, beta=0.4),
    C("hard_swish", "HardSwish", f32(9, low=-5, high=5)),
    C("sigmoid", "Sigmoid", f32(9, low=-30, high=30)), C("tanh", "Tanh", f32(9)),
    C("softplus", "Softplus", f32(9, low=-30, high=30)),
    C("gelu", "Gelu", f32(9), opset=20), C("gelu_tanh", "Gelu", f32(9), opset=20, approximate="tanh"),
    C("exp", "Exp", f32(9)), C("log", "Log", np.array([0.0, -1.0, 0.5, 3.0], np.float32)),
    C("sqrt", "Sqrt", np.array([0.0, -1.0, 0.5, 4.0], np.float32)),
    C("reciprocal", "Reciprocal", np.array([0.0, -0.0, 0.5, -4.0], np.float32)),
    C("erf", "Erf", f32(9)), C("floor", "Floor", f32(9)), C("ceil", "Ceil", f32(9)),
    C("sin", "Sin", f32(9)), C("cos", "Cos", f32(9)), C("neg_int", "Neg", i32(6)),
    C("abs_int", "Abs", i32(6)), C("abs_nan", "Abs", _NAN),
    C("clip", "Clip", f32(3, 4), Init(np.float32(-0.5)), Init(np.float32(0.7))),
    C("clip_min_only", "Clip", f32(3, 4), Init(np.float32(-0.5))),
    C("clip_int_crossed", "Clip", i32(8), Init(np.int32(3)), Init(np.int32(1))),
    C("clip_v6", "Clip", f32(6), opset=6, min=-0.3, max=0.2),
    C("gelu_onnxkit", "Gelu", f32(9), domain="onnxkit"),
    C("exp_float16_host", "Exp", f32(4).astype(np.float16), where="host", rtol=1e-3),
]

BINARY = [
    C("add_broadcast", "Add", f32(2, 3, 4), f32(4)), C("sub_broadcast", "Sub", f32(3, 1), f32(1, 4)),
    C("mul_scalar", "Mul", f32(2, 3), np.array(1.5, np.float32)), C("div", "Div", f32(3, 4), f32(3, 4)),
    C("div_int", "Div", np.array([7, -7, 7, -7, 5], np.int32), np.array([2, 2, -2, -2, 0], np.int32)),
    C("pow", "Pow", f32(6, low=0.1, high=3), f32(6)), C("prelu", "PRelu", f32(2, 3, 4), f32(3, 1)),
    C("sum3", "Sum", f32(2, 3), f32(3), f32(2, 1)), C("mean2", "Mean", f32(4), f32(4)),
    C("max_nan", "Max", _NAN, np.zeros(3, np.float32)), C("min_int", "Min", i32(5), i32(5)),
    C("where", "Where", R.random((2, 3)) > 0.5, f32(2, 3), f32(3)),
    C("add_mixed_host", "Add", f32(3), Init(np.ones(3, np.float64)), where="host"),
]

CAST = [
    C("cast_f32_i32", "Cast", f32(6, low=-50, high=50), to=TensorProto.INT32),
    C("cast_i64_f32", "Cast", i64([1, -2, 3]), to=TensorProto.FLOAT),
    C("cast_f32_bool", "Cast", np.array([0.0, 0.5, -1.0, np.nan], np.float32), to=TensorProto.BOOL),
    C("cast_bool_f64", "Cast", np.array([True, False]), to=TensorProto.DOUBLE),
    C("cast_f64_f32", "Cast", f64(5), to=TensorProto.FLOAT),
    C("cast_to_f16_host", "Cast", f32(4), to=TensorProto.FLOAT16, where="host"),
]

SHAPES = [
    C("reshape", "Reshape", f32(2, 3, 4), Init(i64([3, -1, 0]))),
    C("reshape_allowzero", "Reshape", f32(0, 3), Init(i64([3, 0])), allowzero=1),
    C("flatten", "Flatten", f32(2, 3, 4), axis=2), C("squeeze", "Squeeze", f32(2, 1, 3), Init(i64([1]))),
    C("unsqueeze", "Unsqueeze", f32(2, 3), Init(i64([0, -1]))), C("identity", "Identity", f32(3)),
    C("dropout_mask", "Dropout", f32(2, 3), outputs=2), C("shape_slice", "Shape", f32(2, 3, 4), start=1),
]

LINALG = [
    C("matmul_2d", "MatMul", f32(5, 7), f32(7, 3)), C("matmul_batch_broadcast", "MatMul", f32(2, 1, 3, 5), f32(3, 5, 4)),
    C("matmul_1d_left", "MatMul", f32(5), f32(2, 5, 3)), C("matmul_1d_right", "MatMul", f32(2, 3, 5), f32(5)),
    C("matmul_int", "MatMul", i32(3, 4), i32(4, 2)),
    C("gemm_trans", "Gemm", f32(7, 5), f32(3, 7), f32(3), transA=1, transB=1, alpha=0.5, beta=2.0),
    C("gemm_no_c", "Gemm", f32(9, 10), Init(f32(10, 17))),
    C("gemm_c_column", "Gemm", f32(4, 6), f32(6, 5), f32(4, 1)),
    C("fused_gemm_relu", "FusedGemm", f32(4, 6), Init(f32(5, 6)), Init(f32(5)), domain="onnxkit",
      transB=1, activation="Relu"),
    C("fused_matmul_gelu", "FusedMatMul", f32(2, 3, 6), Init(f32(6, 5)), Init(f32(5)),
      domain="onnxkit", activation="Gelu"),
    C("fused_gemm_swish_alpha", "FusedGemm", f32(4, 6, low=-9, high=9), Init(f32(5, 6)),
      Init(f32(5)), domain="onnxkit", transB=1, activation="Swish", activation_params=[0.5]),
    C("fused_matmul_trans_b_batched", "FusedMatMul", f32(2, 4, 1, 16), f32(2, 4, 9, 16),
      domain="onnxkit", transB=1),
    C("fused_matmul_trans_a_bias_relu", "FusedMatMul", f32(2, 6, 3), Init(f32(6, 5)),
      Init(f32(5)), domain="onnxkit", transA=1, activation="Relu"),
]

CONV = [
    C("conv_pad", "Conv", f32(1, 2, 5, 5), Init(f32(3, 2, 3, 3)), Init(f32(3)), pads=[1, 1, 1, 1]),
    C("conv_stride_dilation", "Conv", _X4, Init(f32(2, 3, 3, 2)), strides=[2, 1], dilations=[1, 2],
      pads=[1, 0, 0, 1]),
    C("conv_grouped_gemm", "Conv", f32(1, 4, 4, 4), Init(f32(8, 2, 2, 2)), Init(f32(8)), group=2),
    C("conv_depthwise", "Conv", _X4, Init(f32(3, 1, 3, 3)), group=3, auto_pad="SAME_UPPER"),
    C("conv_1d", "Conv", f32(2, 2, 7), Init(f32(4, 2, 3)), strides=[2]),
    C("conv_3d", "Conv", f32(1, 1, 3, 4, 4), Init(f32(2, 1, 2, 2, 2)), pads=[0, 1, 1, 0, 0, 1]),
    C("fused_conv_z_leaky", "FusedConv", f32(1, 2, 4, 4), Init(f32(3, 2, 3, 3)), Init(f32(3)),
      f32(1, 3, 4, 4), domain="onnxkit", pads=[1, 1, 1, 1], activation="LeakyRelu",
      activation_params=[0.1]),
    C("fused_conv_swish", "FusedConv", f32(1, 2, 4, 4, low=-9, high=9), Init(f32(3, 2, 3, 3)),
      Init(f32(3)), domain="onnxkit", pads=[1, 1, 1, 1], activation="Swish",
      activation_params=[1.0]),
]

POOL = [
    C("maxpool_indices", "MaxPool", f32(1, 2, 5, 5), kernel_shape=[3, 3], strides=[2, 2],
      pads=[1, 1, 1, 1], outputs=2),
    C("maxpool_column_major", "MaxPool", f32(1, 1, 4, 3), kernel_shape=[2, 2], storage_order=1, outputs=2),
    C("maxpool_ceil_dilated", "MaxPool", f32(1, 1, 6, 6), kernel_shape=[2, 2], dilations=[2, 2],
      strides=[2, 2], ceil_mode=1),
    C("maxpool_1d", "MaxPool", f32(1, 2, 7), kernel_shape=[3]),
    C("maxpool_int8", "MaxPool", R.integers(-100, 100, (1, 1, 4, 4)).astype(np.int8), kernel_shape=[2, 2],
      pads=[1, 1, 0, 0]),
    C("avgpool", "AveragePool", f32(1, 2, 5, 5), kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    C("avgpool_include_pad", "AveragePool", f32(1, 2, 5, 5), kernel_shape=[3, 3], pads=[1, 1, 2, 2],
      count_include_pad=1, strides=[2, 2], ceil_mode=1),
    C("avgpool_3d", "AveragePool", f32(1, 1, 3, 4, 4), kernel_shape=[2, 2, 2]),
    C("global_avgpool", "GlobalAveragePool", f32(2, 3, 4, 4)),
    C("global_maxpool", "GlobalMaxPool", f32(2, 3, 4, 4)),
]

NORM = [
    C("batchnorm", "BatchNormalization", _X4, Init(f32(3)), Init(f32(3)), Init(f32(3)),
      Init(f32(3, low=0.1, high=2))),
    C("batchnorm_v9", "BatchNormalization", f32(2, 3), Init(f32(3)), Init(f32(3)), Init(f32(3)),
      Init(f32(3, low=0.1, high=2)), opset=9, epsilon=0.01),
    C("batchnorm_v6_is_test", "BatchNormalization", _X4, Init(f32(3)), Init(f32(3)), Init(f32(3)),
      Init(f32(3, low=0.1, high=2)), opset=6, is_test=1, epsilon=0.02),
    C("batchnorm_v1_consumed", "BatchNormalization", _X4, Init(f32(3)), Init(f32(3)),
      Init(f32(3)), Init(f32(3, low=0.1, high=2)), opset=1, consumed_inputs=[0, 0, 0, 1, 1]),
    C("fused_batchnorm_relu", "FusedBatchNormalization", _X4, Init(f32(3)), Init(f32(3)),
      Init(f32(3)), Init(f32(3, low=0.1, high=2)), domain="onnxkit", activation="Relu"),
    C("fused_batchnorm_clip_eps", "FusedBatchNormalization", f32(2, 3, 5), Init(f32(3)),
      Init(f32(3)), Init(f32(3)), Init(f32(3, low=0.1, high=2)), domain="onnxkit", epsilon=0.1,
      activation="Clip", activation_params=[-0.5, 0.5]),
    C("softmax_axis1", "Softmax", f32(2, 5, 3), axis=1), C("softmax_v11", "Softmax", f32(2, 3, 4), opset=11),
    C("log_softmax", "LogSoftmax", f32(3, 7, low=-50, high=50)),
    C("softmax_long_row", "Softmax", f32(2, 70), rtol=1e-5),
    C("layer_norm_stats", "LayerNormalization", f32(2, 3, 8), Init(f32(8)), Init(f32(8)), outputs=3),
    C("layer_norm_axis1", "LayerNormalization", f32(2, 3, 4), Init(f32(3, 4)), axis=1, epsilon=1e-3),
    C("skip_layer_norm", "SkipLayerNormalization", f32(2, 6), f32(2, 6), Init(f32(6)), Init(f32(6)),
      domain="onnxkit", outputs=2),
]

REDUCE = [
    C("reduce_sum_axes_input", "ReduceSum", f32(2, 3, 4), Init(i64([0, 2])), keepdims=0),
    C("reduce_sum_noop", "ReduceSum", f32(2, 3), Init(i64([])), noop_with_empty_axes=1),
    C("reduce_sum_int", "ReduceSum", i32(3, 4), opset=13),
    C("reduce_mean_all", "ReduceMean", f32(2, 3, 4), opset=13),
    C("reduce_max_nan", "ReduceMax", _NAN, Init(i64([1]))),
    C("reduce_min_attr", "ReduceMin", f32(3, 5), opset=13, axes=[-1], keepdims=0),
    C("reduce_prod", "ReduceProd", f32(3, 4, low=0.5, high=1.5), Init(i64([1]))),
    C("reduce_sum_square", "ReduceSumSquare", f32(2, 5), Init(i64([1]))),
    C("reduce_l1", "ReduceL1", f32(4, 3), Init(i64([0]))),
    C("reduce_l2", "ReduceL2", f32(2, 3, 40), Init(i64([2])), rtol=1e-5),
]

TENSOR = [
    C("transpose_default", "Transpose", f32(2, 3, 4)),
    C("transpose_perm", "Transpose", f32(2, 3, 4, 2), perm=[2, 0, 3, 1]),
    C("concat", "Concat", f32(2, 1, 3), f32(2, 4, 3), Init(f32(2, 2, 3)), axis=1),
    C("concat_negative_axis", "Concat", i32(2, 3), i32(2, 1), axis=-1),
    C("gather_axis0_const", "Gather", f32(5, 3), Init(i64([[0, -1], [2, 4]]))),
    C("gather_axis1_fed", "Gather", f32(2, 4, 3), np.array([3, -4, 1], np.int32), axis=1),
    C("gather_scalar_index", "Gather", f32(4, 2), Init(np.int64(-2))),
    C("constant_of_shape", "ConstantOfShape", Init(i64([2, 3])),
      value=onnx.numpy_helper.from_array(np.array([1.5], np.float32))),
    C("constant_of_shape_int", "ConstantOfShape", Init(i64([4])),
      value=onnx.numpy_helper.from_array(np.array([-7], np.int32))),
]

_X3 = f32(3, 4, 5)

SLICE_PAD = [
    C("slice_steps", "Slice", _X3, Init(i64([0, 1, -1])), Init(i64([3, 4, 0])),
      Init(i64([0, 1, 2])), Init(i64([2, 2, -2]))),
    C("slice_out_of_range", "Slice", _X3, Init(i64([-100, 2])), Init(i64([100, 2**62])),
      Init(i64([-1, 1]))),
    C("slice_negative_step_past_front", "Slice", _X3, Init(i64([10, -2])), Init(i64([-100, -9])),
      Init(i64([2, 1])), Init(i64([-1, -1]))),
    C("slice_huge_step", "Slice", _X3, Init(i64([-1, 1])), Init(i64([-2**63, 5])),
      Init(i64([1, 2])), Init(i64([-2**62, 2**62]))),
    C("slice_empty", "Slice", _X3, Init(i64([3])), Init(i64([1])), Init(i64([0]))),
    C("slice_fed_int", "Slice", i32(4, 6), i64([1, -5]), i64([3, 6]), i64([0, 1]), i64([1, 3])),
    C("slice_v1", "Slice", _X3, opset=1, starts=[1, -3], ends=[2, 4], axes=[0, 2]),
    C("split_sizes", "Split", _X3, Init(i64([1, 3, 0])), axis=1, outputs=3),
    C("split_equal", "Split", _X3, axis=-1, opset=13, outputs=5),
    C("split_num_outputs_uneven", "Split", _X3, axis=2, num_outputs=2, outputs=2),
    C("split_v2_attr", "Split", i32(6, 2), opset=2, split=[4, 2], outputs=2),
    C("expand", "Expand", f32(3, 1), Init(i64([2, 1, 4]))),
    C("expand_bigger_input", "Expand", i32(2, 1, 5), Init(i64([3, 1]))),
    C("expand_bool_scalar", "Expand", np.array(True), Init(i64([2, 3]))),
    C("tile", "Tile", f32(2, 3), Init(i64([3, 2]))),
    C("tile_zero_repeat", "Tile", i32(2, 3), Init(i64([1, 0]))),
    C("tile_v1", "Tile", f32(2, 3), Init(i64(3)), Init(i64(1)), opset=1),
    C("pad_constant", "Pad", f32(2, 3), Init(i64([1, 0, 2, 3])), Init(np.float32(1.5))),
    C("pad_negative_crop", "Pad", _X3, Init(i64([-1, 2, 0, 1, -2, 1]))),
    C("pad_reflect_wide", "Pad", f32(2, 3), Init(i64([0, 5, 0, 4])), mode="reflect"),
    C("pad_edge_axes", "Pad", i32(2, 3, 4), Init(i64([2, -1, 1, 3])), None, Init(i64([2, 0])),
      mode="edge"),
    C("pad_wrap", "Pad", f32(2, 3), Init(i64([1, 4, 3, 2])), mode="wrap", opset=19),
    C("pad_v2_attr", "Pad", f32(2, 3), opset=2, pads=[0, 1, 1, 0], value=-2.0),
    C("pad_float16_host", "Pad", f32(2, 3).astype(np.float16), Init(i64([1, 0, 1, 0])),
      mode="reflect", where="host"),
]

_B1, _B2 = R.random((2, 3)) > 0.5, R.random(3) > 0.5
_NAN_ROW = np.array([np.nan, 1.0, -1.0], np.float32)

COMPARE = [
    C("equal_int_broadcast", "Equal", i32(2, 3, low=0, high=3), i32(3, low=0, high=3)),
    C("equal_bool", "Equal", _B1, _B2), C("equal_nan", "Equal", _NAN, _NAN_ROW),
    C("greater", "Greater", f32(3, 4), f32(4)), C("greater_nan", "Greater", _NAN, _NAN_ROW),
    C("greater_or_equal_int", "GreaterOrEqual", i32(2, 5, low=0, high=3), i32(2, 1, low=0, high=3)),
    C("less_f64", "Less", f64(4), f64(3, 1)),
    C("less_or_equal", "LessOrEqual", i32(6, low=0, high=3), Init(np.int32(1))),
    C("less_mixed_host", "Less", f32(3), Init(np.ones(3, np.float64)), where="host"),
    C("and", "And", _B1, _B2), C("or", "Or", _B1, _B2), C("xor", "Xor", _B2, _B1),
    C("not", "Not", _B1),
    C("selu", "Selu", f32(9, low=-3, high=3), alpha=1.5, gamma=2.0),
    C("selu_default", "Selu", np.array([-1e-4, 0.0, -0.0, 1e-4, -30.0], np.float32)),
    C("sign", "Sign", np.array([-2.5, 0.0, -0.0, np.nan, 3.0], np.float32)),
    C("sign_int", "Sign", i32(7)), C("sign_uint", "Sign", np.array([0, 5], np.uint8)),
    C("shrink", "Shrink", f32(9, low=-3, high=3), bias=0.5, lambd=1.0),
    C("shrink_default", "Shrink", f64(9)),
]

WINDOWS = [
    C("lrn", "LRN", f32(2, 5, 3, 2), size=3, alpha=0.1, beta=0.6, bias=2.0),
    C("lrn_even_size_1d", "LRN", f64(1, 4, 3), size=4), C("lrn_2d", "LRN", f32(3, 4), size=5),
    C("instance_norm", "InstanceNormalization", f32(2, 3, 4, 5), Init(f32(3)), Init(f32(3))),
    C("instance_norm_1d_long", "InstanceNormalization", f32(1, 2, 70), f32(2), f32(2),
      epsilon=0.01),
    C("instance_norm_f64_3d", "InstanceNormalization", f64(1, 2, 2, 3, 2), Init(f64(2)),
      Init(f64(2))),
    C("conv_transpose", "ConvTranspose", f32(1, 2, 3, 3), Init(f32(2, 3, 3, 3)), Init(f32(3))),
    C("conv_transpose_strides_pads", "ConvTranspose", f32(2, 2, 3, 4), Init(f32(2, 2, 3, 2)),
      strides=[2, 3], pads=[1, 0, 0, 1], output_padding=[1, 2]),
    C("conv_transpose_groups_dilations", "ConvTranspose", f32(1, 4, 3, 3), Init(f32(4, 3, 2, 2)),
      Init(f32(6)), group=2, dilations=[2, 1], strides=[1, 2]),
    C("conv_transpose_1d_output_shape", "ConvTranspose", f32(1, 1, 4), Init(f32(1, 2, 3)),
      strides=[2], output_shape=[10]),
    C("conv_transpose_same_upper", "ConvTranspose", f32(1, 2, 3, 3), Init(f32(2, 1, 3, 3)),
      auto_pad="SAME_UPPER", strides=[2, 2]),
    C("conv_transpose_3d_f64", "ConvTranspose", f64(1, 1, 2, 3, 2), Init(f64(1, 2, 2, 2, 2)),
      strides=[1, 2, 1]),
]

_BOOL_MASK = R.random((2, 1, 5, 6)) > 0.3
_BOOL_MASK[1, 0, 2] = False  # a query with no key left: its row of Y is 0
_FLOAT_MASK = f32(2, 2, 5, 6)
_FLOAT_MASK[0, 1, 3] = -np.inf  # the same, by a float mask
_Q_NAN = f32(2, 2, 5, 4)
_Q_NAN[0, 1, 3, 0] = _Q_NAN[1, 0, 2, 0] = np.nan  # NaN scores: 0 where no key is left
_HEADS = {"q_num_heads": 2, "kv_num_heads": 2}

ATTENTION = [  # batch 2, 2 heads, 5 queries, 6 keys, head size 4 (V's 3 where it differs)
    C("attention_3d_mask_row", "Attention", f32(2, 5, 8), f32(2, 6, 8), f32(2, 6, 8),
      f32(2, 1, 1, 6), domain="onnxkit", **_HEADS),
    C("attention_4d_mask_2d", "Attention", f32(2, 2, 5, 4), f32(2, 2, 6, 4), f32(2, 2, 6, 3),
      Init(f32(5, 6)), opset=23),
    C("attention_4d_dead_rows", "Attention", _Q_NAN, f32(2, 2, 6, 4), f32(2, 2, 6, 3),
      _FLOAT_MASK, opset=23, scale=0.3),
    C("attention_bool_mask", "Attention", f32(2, 2, 5, 4), f32(2, 2, 6, 4), f32(2, 2, 6, 4),
      _BOOL_MASK, opset=23),
    C("attention_3d_causal", "Attention", f32(2, 5, 8), f32(2, 5, 8), f32(2, 5, 6), opset=23,
      is_causal=1, **_HEADS),
    C("attention_causal_short_mask", "Attention", f32(2, 2, 5, 4), f32(2, 2, 6, 4), f32(2, 2, 6, 4),
      f32(2, 1, 5, 4), opset=24, is_causal=1),
    C("attention_3d_gqa_softcap", "Attention", f32(2, 5, 16), f32(2, 6, 8), f32(2, 6, 8), opset=23,
      q_num_heads=4, kv_num_heads=2, softcap=1.5),
    C("attention_4d_f64", "Attention", f64(1, 2, 5, 4), f64(1, 2, 6, 4), f64(1, 2, 6, 4), opset=23),
    C("attention_kv_cache_host", "Attention", f32(1, 2, 3, 4), f32(1, 2, 2, 4), f32(1, 2, 2, 4),
      None, f32(1, 2, 3, 4), f32(1, 2, 3, 4), opset=23, where="host"),
    C("attention_present_host", "Attention", f32(1, 2, 3, 4), f32(1, 2, 3, 4), f32(1, 2, 3, 4),
      opset=23, outputs=3, where="host"),
]

CASES = (UNARY + BINARY + CAST + SHAPES + LINALG + CONV + POOL + NORM + REDUCE + TENSOR + ATTENTION
         + SLICE_PAD + COMPARE + WINDOWS)
