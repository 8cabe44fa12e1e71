"""The ``cpu`` executor gives the reference executor's answers, with its own kernels.

The op table of ``tests/op_cases.py`` (one node per case, executor-agnostic) runs on
both executors; ``CPU_CASES`` below adds the configurations the cpu kernels take
special paths for (stride phases, depthwise planes, the fused epilogues, NaN in
windows). Tolerances are tight: the kernels compute the same formulas in the same
precision, only the summation order differs.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnxkit
from onnxkit.kernels.cpu import CPU, load_cpu_kernels
from onnxkit.kernels.cpu._buffers import BufferPool, empty, release, using_pool
from onnxkit.runtime.profile import Profiler
from tests.op_cases import CASES, C, Init, f32
from tests.op_cases_kinds import KINDS

load_cpu_kernels()

_NAN_IMAGE = f32(1, 2, 7, 7)
_NAN_IMAGE[0, 0, 3, 3] = np.nan
_NAN_IMAGE[0, 1, 0, 0] = np.nan
_EDGE_INF = f32(1, 3, 5, 6)  # infinities in the first and last columns of planes
_EDGE_INF[0, :, 2, 0] = np.inf
_EDGE_INF[0, :, 3, 5] = -np.inf

CPU_CASES = [
    # sums of 147 products reaching |40|: float32 rounds either side's order by ~5e-6
    C("conv_stride2_pad3", "Conv", f32(1, 3, 15, 14), Init(f32(4, 3, 7, 7)), Init(f32(4)),
      strides=[2, 2], pads=[3, 3, 3, 3], atol=2e-5),
    C("conv_stride3_asym", "Conv", f32(2, 2, 9, 11), Init(f32(3, 2, 3, 2)), strides=[3, 2],
      pads=[0, 2, 1, 0], dilations=[2, 1]),
    C("conv_pointwise", "Conv", f32(2, 6, 5, 4), Init(f32(8, 6, 1, 1)), Init(f32(8))),
    C("conv_pointwise_groups", "Conv", f32(1, 6, 5, 4), Init(f32(9, 2, 1, 1)), group=3),
    # 1x1 with a stride (columns by one strided copy): groups and a batch, and padding at
    # the end (an extra output of padding: im2col)
    C("conv_1x1_strided_groups", "Conv", f32(2, 6, 9, 8), Init(f32(4, 3, 1, 1)), Init(f32(4)),
      group=2, strides=[3, 2]),
    C("conv_1x1_strided_end_pad", "Conv", f32(1, 4, 8, 7), Init(f32(5, 4, 1, 1)),
      strides=[2, 2], pads=[0, 0, 1, 1]),
    C("conv_f64", "Conv", np.random.default_rng(3).standard_normal((1, 2, 6, 6)),
      Init(np.random.default_rng(4).standard_normal((3, 2, 3, 3))), pads=[1, 1, 1, 1]),
    C("depthwise_stride2", "Conv", f32(1, 4, 11, 10), Init(f32(4, 1, 3, 3)), Init(f32(4)),
      group=4, strides=[2, 2], pads=[1, 1, 1, 1]),
    C("depthwise_stride2_left_pad2_odd", "Conv", f32(1, 4, 12, 13), Init(f32(8, 1, 3, 3)),
      group=4, strides=[2, 2], pads=[1, 2, 0, 1]),
    C("depthwise_stride2_no_pad", "Conv", f32(2, 3, 9, 8), Init(f32(3, 1, 3, 3)), group=3,
      strides=[2, 2]),
    C("depthwise_multiplier_5x5", "Conv", f32(2, 3, 9, 9), Init(f32(6, 1, 5, 5)), group=3,
      pads=[2, 1, 2, 1], dilations=[1, 2]),
    C("depthwise_1d", "Conv", f32(1, 4, 12), Init(f32(4, 1, 3)), group=4, pads=[1, 1]),
    C("fused_depthwise_clip_z", "FusedConv", f32(1, 4, 6, 6), Init(f32(4, 1, 3, 3)),
      Init(f32(4)), f32(1, 4, 6, 6), domain="onnxkit", group=4, pads=[1, 1, 1, 1],
      activation="Clip", activation_params=[-0.5, 0.5]),
    C("depthwise_small_plane_channels_last", "FusedConv", f32(2, 40, 13, 13),
      Init(f32(40, 1, 3, 3)), Init(f32(40)), f32(2, 40, 7, 7), domain="onnxkit", group=40,
      pads=[1, 1, 1, 1], strides=[2, 2], activation="Relu"),
    # 3x3, stride 1, padding 1 (``_depthwise_3x3._plane_3x3``): a multiplier, a residual,
    # a batch, planes of one row and one column
    C("depthwise_same_3x3_multiplier_z", "FusedConv", f32(2, 3, 5, 9), Init(f32(6, 1, 3, 3)),
      Init(f32(6)), f32(2, 6, 5, 9), domain="onnxkit", group=3, pads=[1, 1, 1, 1],
      activation="Clip", activation_params=[-0.5, 0.5]),
    C("depthwise_same_3x3_one_row", "Conv", f32(1, 40, 1, 7), Init(f32(40, 1, 3, 3)),
      group=40, pads=[1, 1, 1, 1]),
    C("depthwise_same_3x3_one_column", "Conv", f32(1, 4, 6, 1), Init(f32(4, 1, 3, 3)),
      Init(f32(4)), group=4, pads=[1, 1, 1, 1]),
    # small planes around the vector loop's length (16x16 fills its 256 values, 17x15 one
    # short, 16x17 one past), 1x1 and 2x2 planes, and infinities at the planes' edges
    C("depthwise_flat_16x16_relu6", "FusedConv", f32(1, 40, 16, 16), Init(f32(40, 1, 3, 3)),
      Init(f32(40)), domain="onnxkit", group=40, pads=[1, 1, 1, 1],
      activation="Clip", activation_params=[0.0, 6.0]),
    C("depthwise_flat_17x15_multiplier_z", "FusedConv", f32(2, 3, 17, 15),
      Init(f32(6, 1, 3, 3)), Init(f32(6)), f32(2, 6, 17, 15), domain="onnxkit", group=3,
      pads=[1, 1, 1, 1], activation="Relu"),
    C("depthwise_rows_16x17", "Conv", f32(1, 8, 16, 17), Init(f32(8, 1, 3, 3)), Init(f32(8)),
      group=8, pads=[1, 1, 1, 1]),
    C("depthwise_flat_1x1_and_2x2", "Conv", f32(1, 6, 2, 2), Init(f32(6, 1, 3, 3)),
      group=6, pads=[1, 1, 1, 1]),
    C("depthwise_flat_1x1", "Conv", f32(3, 5, 1, 1), Init(f32(5, 1, 3, 3)), Init(f32(5)),
      group=5, pads=[1, 1, 1, 1]),
    # an edge value never reaches the other edge's outputs (a flat plane with masked
    # edge taps made these NaN: 0 * inf)
    C("depthwise_flat_edge_inf", "Conv", _EDGE_INF, Init(np.abs(f32(3, 1, 3, 3))),
      group=3, pads=[1, 1, 1, 1]),
    # ... stride 2 (``_plane_3x3_s2``): odd and even planes, padding 1 or 0 at the end
    C("depthwise_3x3_s2_odd_z", "FusedConv", f32(2, 3, 7, 9), Init(f32(6, 1, 3, 3)),
      Init(f32(6)), f32(2, 6, 4, 5), domain="onnxkit", group=3, pads=[1, 1, 1, 1],
      strides=[2, 2], activation="Relu"),
    C("depthwise_3x3_s2_even_end_unpadded", "Conv", f32(1, 40, 14, 8), Init(f32(40, 1, 3, 3)),
      Init(f32(40)), group=40, pads=[1, 1, 0, 0], strides=[2, 2]),
    C("depthwise_3x3_s2_one_row", "Conv", f32(1, 4, 1, 6), Init(f32(4, 1, 3, 3)), group=4,
      pads=[1, 1, 1, 1], strides=[2, 2]),
    # ... output rows of S2_APART (24) values or more: columns set apart
    # (``_plane_3x3_s2_apart``): odd and even widths, a multiplier, a residual, an
    # unpadded end, a one-row plane
    C("depthwise_3x3_s2_apart_odd_multiplier_z", "FusedConv", f32(2, 3, 7, 49),
      Init(f32(6, 1, 3, 3)), Init(f32(6)), f32(2, 6, 4, 25), domain="onnxkit", group=3,
      pads=[1, 1, 1, 1], strides=[2, 2], activation="Clip", activation_params=[-0.5, 0.5]),
    C("depthwise_3x3_s2_apart_even_end_unpadded", "Conv", f32(1, 40, 9, 52),
      Init(f32(40, 1, 3, 3)), Init(f32(40)), group=40, pads=[1, 1, 0, 0], strides=[2, 2]),
    C("depthwise_3x3_s2_apart_even_padded", "FusedConv", f32(1, 5, 10, 48),
      Init(f32(5, 1, 3, 3)), domain="onnxkit", group=5, pads=[1, 1, 1, 1], strides=[2, 2],
      activation="Relu"),
    C("depthwise_3x3_s2_apart_one_row", "Conv", f32(1, 4, 1, 50), Init(f32(4, 1, 3, 3)),
      group=4, pads=[1, 1, 1, 1], strides=[2, 2]),
    C("depthwise_channels_last_stride2_dilated", "FusedConv", f32(1, 40, 13, 13),
      Init(f32(40, 1, 3, 3)), Init(f32(40)), domain="onnxkit", group=40, strides=[2, 2],
      pads=[2, 1, 1, 2], dilations=[2, 1], activation="Relu"),  # 6x7 output: channels-last
    # Winograd F(2x2, 3x3) (16+ channels, 3x3, stride 1): odd planes, batches, pads of
    # every size (a tile entirely in the padding), residual + Clip, a one-column plane
    C("winograd_same_odd", "Conv", f32(1, 16, 9, 11), Init(f32(16, 16, 3, 3)), Init(f32(16)),
      pads=[1, 1, 1, 1], rtol=1e-5, atol=1e-4),
    C("winograd_valid_batch2", "Conv", f32(2, 16, 8, 7), Init(f32(20, 16, 3, 3)),
      rtol=1e-5, atol=1e-4),
    C("winograd_fused_z_clip_asym", "FusedConv", f32(1, 16, 6, 5), Init(f32(16, 16, 3, 3)),
      Init(f32(16)), f32(1, 16, 7, 6), domain="onnxkit", pads=[2, 0, 1, 3],
      activation="Clip", activation_params=[-3.0, 4.0], rtol=1e-5, atol=1e-4),
    C("winograd_wide_pads", "Conv", f32(1, 17, 4, 4), Init(f32(16, 17, 3, 3)),
      pads=[3, 3, 3, 2], rtol=1e-5, atol=1e-4),
    C("winograd_one_column", "FusedConv", f32(1, 16, 5, 1), Init(f32(16, 16, 3, 3)),
      domain="onnxkit", pads=[1, 1, 1, 1], activation="Relu", rtol=1e-5, atol=1e-4),
    # Winograd F(4x4, 3x3): the static rule's choice from 28x28 output planes up; planes
    # not a multiple of 4 (tiles past the edge), asymmetric pads, residual + Clip, batches
    C("winograd4_same", "Conv", f32(1, 16, 28, 30), Init(f32(16, 16, 3, 3)), Init(f32(16)),
      pads=[1, 1, 1, 1], rtol=1e-5, atol=1e-3),
    C("winograd4_fused_z_clip_asym", "FusedConv", f32(1, 16, 29, 27), Init(f32(16, 16, 3, 3)),
      Init(f32(16)), f32(1, 16, 30, 28), domain="onnxkit", pads=[2, 0, 1, 3],
      activation="Clip", activation_params=[-3.0, 4.0], rtol=1e-5, atol=1e-3),
    C("winograd4_valid_batch2", "Conv", f32(2, 16, 30, 31), Init(f32(20, 16, 3, 3)),
      rtol=1e-5, atol=1e-3),
    C("fused_conv_hardswish", "FusedConv", f32(1, 2, 5, 5), Init(f32(3, 2, 3, 3)), Init(f32(3)),
      domain="onnxkit", pads=[1, 1, 1, 1], activation="HardSwish"),
    C("fused_conv_sigmoid_reference_act", "FusedConv", f32(1, 2, 5, 5), Init(f32(3, 2, 1, 1)),
      domain="onnxkit", activation="Sigmoid"),
    C("fused_gemm_c_matrix_gelu", "FusedGemm", f32(4, 6), Init(f32(6, 5)), f32(4, 5),
      domain="onnxkit", beta=0.5, activation="Gelu"),
    C("gemm_c_scalar", "Gemm", f32(3, 4), f32(4, 2), Init(np.array([1.5], np.float32)), beta=2.0),
    C("fused_matmul_batched_bias_row", "FusedMatMul", f32(2, 3, 5), f32(2, 5, 4),
      Init(f32(1, 4)), domain="onnxkit", activation="Relu"),
    C("maxpool_nan", "MaxPool", _NAN_IMAGE, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    C("maxpool_stride3_dilated", "MaxPool", f32(1, 2, 11, 10), kernel_shape=[2, 3],
      strides=[3, 3], dilations=[2, 1], ceil_mode=1),
    # 3 columns wide, column stride 2 (``pool._three_apart``): left padding 1 (the stems'
    # pool), 0 (SqueezeNet's) and 2, an even width unpadded at the end, ceil_mode's last
    # window past the input, odd widths, row stride 1, averages
    C("maxpool_3x3_s2_unpadded_ceil_odd", "MaxPool", f32(1, 3, 9, 11), kernel_shape=[3, 3],
      strides=[2, 2], ceil_mode=1),
    C("maxpool_3x3_s2_left_pad2", "MaxPool", f32(1, 2, 7, 9), kernel_shape=[3, 3],
      strides=[2, 2], pads=[2, 2, 2, 2]),
    C("maxpool_2x3_rows_s1_cols_s2", "MaxPool", f32(1, 2, 6, 7), kernel_shape=[2, 3],
      strides=[1, 2], pads=[0, 1, 1, 1]),
    C("avgpool_3x3_s2_unpadded", "AveragePool", f32(1, 3, 8, 9), kernel_shape=[3, 3],
      strides=[2, 2]),
    # planes at most FLAT_WIDTH (32) wide: long passes over the flat padded plane
    # (``pool._flat_planes``): windows past the end (ceil_mode), NaN, stride 1, 1-D,
    # averages with and without the pads, a plane as wide as FLAT_WIDTH and one wider
    C("maxpool_flat_2x2_s2_ceil_nan", "MaxPool", _NAN_IMAGE, kernel_shape=[2, 2],
      strides=[2, 2], pads=[0, 1, 1, 0], ceil_mode=1),
    C("maxpool_flat_4x3_s1_s3", "MaxPool", f32(2, 5, 9, 13), kernel_shape=[4, 3],
      strides=[1, 3], pads=[2, 1, 1, 2]),
    C("maxpool_flat_1d", "MaxPool", f32(1, 3, 17), kernel_shape=[3], strides=[2], pads=[1, 1]),
    C("avgpool_flat_include_pad", "AveragePool", f32(1, 4, 7, 32), kernel_shape=[3, 3],
      strides=[2, 1], pads=[1, 1, 1, 1], count_include_pad=1),
    C("avgpool_flat_excluded_pad_ceil", "AveragePool", f32(1, 4, 6, 11), kernel_shape=[2, 3],
      strides=[3, 2], pads=[1, 2, 0, 1], ceil_mode=1),
    C("maxpool_just_over_flat_width", "MaxPool", f32(1, 2, 5, 33), kernel_shape=[3, 3],
      strides=[1, 2], pads=[1, 1, 1, 1]),
    C("maxpool_3x3_s2_even_end_unpadded", "MaxPool", f32(2, 3, 8, 10), kernel_shape=[3, 3],
      strides=[2, 2], pads=[1, 1, 0, 0]),
    C("maxpool_3x3_s2_ceil", "MaxPool", f32(1, 2, 9, 8), kernel_shape=[3, 3], strides=[2, 2],
      pads=[1, 1, 1, 1], ceil_mode=1),
    C("avgpool_3x3_s2_include_pad", "AveragePool", f32(1, 3, 7, 9), kernel_shape=[3, 3],
      strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
    C("avgpool_stride2_nan", "AveragePool", _NAN_IMAGE, kernel_shape=[2, 2], strides=[2, 2]),
    C("avgpool_include_pad_dilated", "AveragePool", f32(1, 2, 9, 10), opset=19,
      kernel_shape=[3, 2], strides=[2, 3], pads=[2, 1, 1, 0], dilations=[2, 1],
      count_include_pad=1),
    C("batchnorm_v7_inference", "BatchNormalization", f32(2, 3, 4), Init(f32(3)), Init(f32(3)),
      Init(f32(3)), Init(f32(3, low=0.1, high=2)), opset=7),
    C("layer_norm_axis0", "LayerNormalization", f32(3, 4), Init(f32(3, 4)), Init(f32(3, 4)),
      axis=0, outputs=3),
    C("softmax_inf_rows", "Softmax", np.array([[1.0, -np.inf, 2.0], [-np.inf, -np.inf, -np.inf]],
                                              np.float32)),
    C("softmax_v1_coerced", "Softmax", f32(2, 3, 4), opset=11, axis=1),
    C("attention_onnxkit_mask", "Attention", f32(1, 5, 8), f32(1, 6, 8), f32(1, 6, 8),
      np.where(np.arange(6) < 4, 0.0, -1e4).astype(np.float32).reshape(1, 1, 1, 6),
      domain="onnxkit", q_num_heads=2, kv_num_heads=2, scale=0.3),
    C("attention_onnxkit_causal_4d", "Attention", f32(2, 2, 4, 3), f32(2, 2, 4, 3),
      f32(2, 2, 4, 5), domain="onnxkit", is_causal=1),
    C("resize_linear_half_pixel", "Resize", f32(1, 2, 4, 5), None,
      Init(np.array([1, 1, 1.5, 0.6], np.float32)), mode="linear"),
    C("resize_nearest_sizes", "Resize", f32(2, 1, 3, 3), None, None,
      Init(np.array([2, 1, 7, 4], np.int64)), mode="nearest", nearest_mode="floor",
      coordinate_transformation_mode="asymmetric"),
    C("resize_cubic_antialias", "Resize", f32(1, 1, 8, 8), None,
      Init(np.array([1, 1, 0.5, 0.5], np.float32)), mode="cubic", antialias=1),
    C("reduce_mean_spatial", "ReduceMean", f32(2, 3, 4, 5), opset=13, axes=[2, 3], keepdims=0),
    C("reduce_mean_last_input_axes", "ReduceMean", f32(3, 7), Init(np.array([-1], np.int64))),
    C("gelu_v20_f32_wide", "Gelu", np.linspace(-6, 6, 97, dtype=np.float32), opset=20),
    C("erf_edges", "Erf", np.array([0, -0.0, 1e-4, 3.9, 4.1, -7, np.nan], np.float32)),
    C("sum_four", "Sum", f32(2, 3), f32(2, 3), f32(3), f32(2, 3)),
]

ALL = CASES + KINDS + CPU_CASES


def _run(case, executor):
    sess = onnxkit.Session(case.model(), executor=executor)
    return sess, sess.run(None, case.feeds())


@pytest.mark.parametrize("case", ALL, ids=[c.name for c in ALL])
def test_cpu_matches_reference(case):
    _, expected = _run(case, "reference")
    _, actual = _run(case, "cpu")
    assert len(actual) == len(expected)
    for want, got in zip(expected, actual):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=max(case.rtol, 2e-6), atol=max(case.atol, 1e-6))


# convolution case -> the algorithm the profiler must name ("": any; none named: the
# reference kernel ran)
CONV_FAST = {
    "conv_pad": "",
    "conv_depthwise": "depthwise",
    "conv_1d": "",
    "depthwise_stride2": "depthwise",
    "depthwise_stride2_left_pad2_odd": "depthwise",
    "depthwise_stride2_no_pad": "depthwise",
    "depthwise_multiplier_5x5": "depthwise",
    "fused_conv_z_leaky": "",
    "winograd_same_odd": "winograd",
    "winograd_valid_batch2": "winograd",
    "winograd_fused_z_clip_asym": "winograd",
    "winograd_wide_pads": "winograd",
    "winograd_one_column": "dots",  # 5 output pixels: the rule's dot products
    "fused_depthwise_clip_z": "depthwise",
    "depthwise_small_plane_channels_last": "depthwise",
    "depthwise_same_3x3_multiplier_z": "depthwise",
    "depthwise_same_3x3_one_row": "depthwise",
    "depthwise_same_3x3_one_column": "depthwise",
    "conv_1x1_strided_groups": "dots",  # 12 output pixels
    "depthwise_3x3_s2_odd_z": "depthwise",
    "depthwise_3x3_s2_even_end_unpadded": "depthwise",
    "depthwise_3x3_s2_one_row": "depthwise",
    "depthwise_channels_last_stride2_dilated": "depthwise",
}

# cases the cpu kernel serves itself: the profiler's kernel column names no "[reference]"
FAST = (
    "gemm_trans", "gemm_c_column", "fused_gemm_relu", "fused_matmul_gelu",
    "matmul_batch_broadcast", "maxpool_nan", "maxpool_1d", "avgpool_include_pad",
    "maxpool_3x3_s2_even_end_unpadded", "maxpool_3x3_s2_ceil", "avgpool_3x3_s2_include_pad",
    "avgpool_include_pad_dilated", "batchnorm", "batchnorm_v7_inference",
    "fused_batchnorm_relu", "fused_batchnorm_clip_eps", "softmax_long_row", "softmax_v11",
    "layer_norm_stats", "skip_layer_norm", "attention_onnxkit_mask",
    "attention_onnxkit_causal_4d", "resize_linear_half_pixel", "resize_cubic_antialias",
    "reduce_mean_spatial", "global_avgpool", "relu", "clip", "gelu", "erf", "add_broadcast",
    "sum3", "concat", "gather_axis1_fed",
    # the kernels of other model kinds (tests/op_cases_kinds.py)
    "quantize_linear_u8", "quantize_linear_per_axis_s8", "dequantize_linear_u8",
    "dynamic_quantize_linear", "qlinear_conv", "conv_integer", "matmul_integer",
    "qlinear_matmul", "lstm", "lstm_bidirectional", "gru_linear_before_reset",
    "tree_ensemble_regressor", "tree_ensemble_classifier", "matmul_f16", "conv_f16",
    "layer_norm_f16", "softmax_f16",
)

# cases the compiled kernels do not take (float64, an axis or an output they leave out):
# the cpu kernel hands them to the reference kernel, and the profiler says so
FALLS_BACK = [
    C("gemm_f64", "Gemm", np.random.default_rng(5).standard_normal((4, 6)),
      np.random.default_rng(6).standard_normal((5, 6)), np.random.default_rng(7).standard_normal(5),
      transB=1),
    C("softmax_f64", "Softmax", np.random.default_rng(8).standard_normal((3, 7))),
    C("softmax_axis0", "Softmax", f32(4, 5), axis=0),
    C("maxpool_with_indices", "MaxPool", f32(1, 2, 6, 6), kernel_shape=[2, 2], strides=[2, 2],
      outputs=2),
    C("gather_strings", "Gather", np.array(["a", "bc", "d"], dtype=object),
      np.array([2, 0], np.int64)),
]


def _profiled(case):
    """The case's outputs on the cpu executor and its node's kernel column (``Profiler``)."""
    sess = onnxkit.Session(case.model(), executor="cpu")
    prof = Profiler(sess)
    outputs = sess.run(None, case.feeds(), trace=prof)
    (row,) = prof.rows(by="node")
    return outputs, row["kernel"]


#: NaN in a MaxPool window: runtimes differ (onnx.reference and onnxruntime skip it at
#: some positions); onnxkit's reference kernel propagates it, as numpy's max does
_NAN_WINDOWS = ("maxpool_nan",)
#: old versions onnx.reference runs wrong (BatchNormalization-7 returns a tuple,
#: Softmax-11 without its 2-D coercion): onnxruntime's outputs
_OLD_VERSIONS = ("batchnorm_v7_inference", "softmax_v11")


def _oracle(case):
    """onnx.reference's outputs; the onnxkit domain's ops (which onnx does not define) and
    NaN windows on the reference executor (numpy, none of the cpu kernels)."""
    if case.name in _OLD_VERSIONS:
        import onnxruntime as ort

        sess = ort.InferenceSession(case.model().SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        return sess.run(None, case.feeds())
    if case.domain == "onnxkit" or case.name in _NAN_WINDOWS:
        return onnxkit.Session(case.model(), executor="reference").run(None, case.feeds())
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(case.model()).run(None, case.feeds())


def _assert_matches(case, actual, expected):
    assert len(actual) == len(expected)
    for want, got in zip(expected, actual):
        want = np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        if want.dtype == object:
            assert got.tolist() == want.tolist()
        else:
            np.testing.assert_allclose(got, want, rtol=max(case.rtol, 2e-6),
                                       atol=max(case.atol, 1e-6))


@pytest.mark.parametrize("name", sorted(CONV_FAST))
def test_a_fast_algorithm_serves_these_convolutions(name):
    case = next(c for c in ALL if c.name == name)
    sess = onnxkit.Session(case.model(), executor="cpu")
    prof = Profiler(sess)
    sess.run(None, case.feeds(), trace=prof)
    (row,) = prof.rows(by="node")
    assert row["kernel"].startswith("cpu:") and row["kernel"].endswith("]"), row["kernel"]
    if CONV_FAST[name]:
        assert row["kernel"].endswith(f"[{CONV_FAST[name]}]"), row["kernel"]
    assert sess.plan.steps[0].algorithm == row["kernel"].rsplit("[", 1)[1][:-1]


def test_a_float64_convolution_runs_on_the_reference_kernel():
    """The compiled kernels take float32 only: a float64 Conv runs the reference kernel,
    which the profiler names, and gives onnx.reference's values."""
    from onnx.reference import ReferenceEvaluator

    case = next(c for c in ALL if c.name == "conv_f64")
    sess = onnxkit.Session(case.model(), executor="cpu")
    prof = Profiler(sess)
    (y,) = sess.run(None, case.feeds(), trace=prof)
    (row,) = prof.rows(by="node")
    assert row["kernel"].startswith("cpu:") and row["kernel"].endswith(" [reference]"), \
        row["kernel"]
    assert not sess.plan.steps[0].algorithm
    (want,) = ReferenceEvaluator(case.model()).run(None, case.feeds())
    assert y.dtype == np.float64
    np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", FAST)
def test_the_fast_path_serves_these_cases(name):
    case = next(c for c in ALL if c.name == name)
    actual, kernel = _profiled(case)
    assert kernel.startswith("cpu:") and "[reference]" not in kernel, kernel
    _assert_matches(case, actual, _oracle(case))


@pytest.mark.parametrize("case", FALLS_BACK, ids=[c.name for c in FALLS_BACK])
def test_what_the_compiled_kernels_leave_runs_on_the_reference_kernel(case):
    actual, kernel = _profiled(case)
    assert kernel.startswith("cpu:") and kernel.endswith(" [reference]"), kernel
    _assert_matches(case, actual, _oracle(case))


# --- hand-checked values ---------------------------------------------------------------

def _single(op_type, inputs, attrs=None, outputs=1, opset=18, domain=""):
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, [f"y{i}" for i in range(outputs)], domain=domain,
                            **(attrs or {}))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(
        n, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape)) for n, v in zip(names, inputs)],
        [helper.make_empty_tensor_value_info(f"y{i}") for i in range(outputs)])
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=opsets, ir_version=10)
    return onnxkit.run(model, dict(zip(names, inputs)), executor="cpu")


def test_conv_ones_kernel_counts_the_window():
    x = np.ones((1, 1, 3, 3), np.float32)
    w = np.ones((1, 1, 3, 3), np.float32)
    (y,) = _single("Conv", [x, w], {"pads": [1, 1, 1, 1]})
    np.testing.assert_array_equal(y[0, 0], [[4, 6, 4], [6, 9, 6], [4, 6, 4]])


def test_depthwise_stride2_hand_values():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    w = np.array([[[[0, 0, 0], [0, 1, 0], [0, 0, 1]]]], np.float32)  # centre + bottom-right
    (y,) = _single("Conv", [x, w], {"pads": [1, 1, 1, 1], "strides": [2, 2], "group": 1})
    # centre x[2i, 2j] plus x[2i+1, 2j+1]
    np.testing.assert_array_equal(y[0, 0], [[0 + 5, 2 + 7], [8 + 13, 10 + 15]])


def test_phase_index_splits_a_column_into_phase_and_index():
    from onnxkit.kernels.cpu._buffers import read_only
    from onnxkit.kernels.cpu._im2col import phase_index, phases

    x = read_only(np.arange(14, dtype=np.float32).reshape(1, 1, 14))  # as conv hands it over
    for s in (1, 2, 3):
        xp = np.zeros((1, 1, s, -(-14 // s)), np.float32)
        phases(x, s, xp)
        for pos in range(-7, 14):
            phase, index = phase_index(pos, s)  # compiled (inline) helper
            assert (phase, index) == phase_index.py_func(pos, s) == (pos % s, pos // s)
            assert 0 <= phase < s and index * s + phase == pos
            if pos >= 0:
                assert xp[0, 0, phase, index] == pos  # column pos of the row, in its phase
    assert phase_index(-3, 2) == (1, -2)  # a column in the left padding


def test_maxpool_padding_never_wins_and_nan_propagates():
    x = np.array([[[[-5, -6], [-7, np.nan]]]], np.float32)
    (y,) = _single("MaxPool", [x], {"kernel_shape": [2, 2], "pads": [1, 1, 0, 0]})
    np.testing.assert_array_equal(y[0, 0, 0], [-5, -5])
    assert y[0, 0, 1, 0] == -5 and np.isnan(y[0, 0, 1, 1])


def test_average_pool_counts_without_the_pads():
    x = np.array([[[[1, 2], [3, 4]]]], np.float32)
    (y,) = _single("AveragePool", [x], {"kernel_shape": [2, 2], "pads": [1, 1, 0, 0]})
    np.testing.assert_allclose(y[0, 0], [[1, 1.5], [2, 2.5]])


def test_layer_norm_of_one_to_four():
    x = np.array([[1, 2, 3, 4]], np.float32)
    y, mean, inv = _single("LayerNormalization", [x, np.ones(4, np.float32), np.zeros(4, np.float32)],
                           {"epsilon": 0.0}, outputs=3)
    std = np.sqrt(1.25)
    np.testing.assert_allclose(y, [[-1.5 / std, -0.5 / std, 0.5 / std, 1.5 / std]], rtol=1e-6)
    np.testing.assert_allclose(mean, [[2.5]])
    np.testing.assert_allclose(inv, [[1 / std]], rtol=1e-6)


def test_fused_gemm_relu_hand_values():
    a = np.array([[1, -2]], np.float32)
    b = np.array([[3, 1], [1, 2]], np.float32)
    (y,) = _single("FusedGemm", [a, b, np.array([0.5, 0.5], np.float32)],
                   {"activation": "Relu"}, domain="onnxkit")
    np.testing.assert_array_equal(y, [[1.5, 0]])  # [1 - 2 + .5, 1 - 4 + .5] -> relu


def test_erf_approximation_is_float32_accurate():
    from scipy.special import erf

    x = np.linspace(-5, 5, 20001, dtype=np.float32)
    (y,) = _single("Erf", [x])
    assert np.max(np.abs(y - erf(x.astype(np.float64)))) < 5e-7


# --- buffers and the profiler ----------------------------------------------------------

def test_pool_reuses_a_buffer_once_nothing_holds_it():
    SHAPE = (256, 256)  # 256 KiB: pooled (below _buffers.SMALL, 64 KiB, np.empty serves)
    pool = BufferPool()
    token = using_pool(pool)
    try:
        a = empty(SHAPE, np.float32)
        assert a.base is not None  # from the pool: np.empty would make d's check malloc's
        address = a.ctypes.data
        b = empty(SHAPE, np.float32)
        assert b.ctypes.data != address  # a is alive
        view = a.reshape(-1)[:10]
        del a
        c = empty(SHAPE, np.float32)
        assert c.ctypes.data not in (address, b.ctypes.data)  # a view keeps a's buffer busy
        del view
        d = empty(SHAPE, np.float32)
        assert d.ctypes.data == address
    finally:
        release(token)
    assert empty((64, 64), np.float32).base is None  # no pool outside a run


def test_a_session_reuses_its_buffers_from_run_to_run():
    case = next(c for c in CPU_CASES if c.name == "conv_stride2_pad3")
    sess = onnxkit.Session(case.model(), executor="cpu")
    first = sess.run(None, case.feeds())[0].copy()
    new_after_first = sess.executor.pool.new_buffers
    for _ in range(3):
        again = sess.run(None, case.feeds())[0]
    np.testing.assert_array_equal(again, first)
    assert sess.executor.pool.new_buffers <= new_after_first + 1  # the held output at most


def test_outputs_kept_by_the_caller_are_never_overwritten():
    case = next(c for c in CPU_CASES if c.name == "conv_pointwise")
    sess = onnxkit.Session(case.model(), executor="cpu")
    feeds = case.feeds()
    first = sess.run(None, feeds)[0]
    saved = first.copy()
    other = {k: v + 1 for k, v in feeds.items()}
    sess.run(None, other)
    np.testing.assert_array_equal(first, saved)


def test_profiler_aggregates_by_node_and_op_and_names_the_registry():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])
    w = onnx.numpy_helper.from_array(f32(3, 2, 3, 3), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Softsign", ["r"], ["y"], name="soft")]
    graph = helper.make_graph(nodes, "g", [x], [helper.make_empty_tensor_value_info("y")], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    sess = onnxkit.Session(model, executor="cpu")
    prof = Profiler(sess)
    for _ in range(3):
        sess.run(None, {"x": f32(1, 2, 6, 6)}, trace=prof)
    ops = {r["key"]: r for r in prof.rows("op")}
    # the algorithm the rule picks (``_conv_rules``): 36 output pixels (dots up to 16), 2
    # channels (Winograd from 16): im2col
    assert ops["Conv"]["calls"] == 3
    assert ops["Conv"]["kernel"] == "cpu:ai.onnx::Conv-11 [im2col]"
    assert ops["Softsign"]["kernel"].startswith("reference:")
    assert abs(sum(r["share"] for r in prof.rows("node")) - 1) < 1e-9
    table = prof.table(by="node", top=2)
    assert table.count("\n") == 4 and "**total**" in table and "1x2x6x6" in table


def test_every_cpu_kernel_names_a_reference_version():
    from onnxkit.ops import load_reference_kernels

    reference = load_reference_kernels()
    for kernel in CPU:
        assert reference.get(kernel.domain, kernel.op_type, kernel.since_version) is not None, \
            kernel.qualified_name


def test_winograd_runs_where_it_measured_faster_and_only_there():
    from onnxkit.kernels.cpu._winograd import applies

    x16 = np.zeros((1, 16, 9, 9), np.float32)
    w16 = f32(16, 16, 3, 3)
    assert applies(x16, w16, 1, (1, 1), (1, 1), (9, 9))
    assert not applies(x16, w16, 1, (2, 2), (1, 1), (5, 5))
    assert not applies(x16, w16, 1, (1, 1), (2, 2), (5, 5))
    assert not applies(x16, f32(16, 8, 3, 3), 2, (1, 1), (1, 1), (9, 9))
    assert not applies(x16.astype(np.float64), w16.astype(np.float64), 1, (1, 1),
                       (1, 1), (9, 9))
    assert not applies(np.zeros((1, 8, 9, 9), np.float32), f32(16, 8, 3, 3), 1,
                       (1, 1), (1, 1), (9, 9))  # 8 input channels: products too thin
    w_big = np.zeros((512, 512, 3, 3), np.float32)  # U = 16 MiB
    assert not applies(np.zeros((1, 512, 14, 14), np.float32), w_big, 1, (1, 1), (1, 1), (14, 14))
    w_mid = np.zeros((256, 256, 3, 3), np.float32)  # U = 4 MiB
    x_mid = np.zeros((1, 256, 14, 14), np.float32)
    assert applies(x_mid, w_mid, 1, (1, 1), (1, 1), (14, 14))
    assert not applies(x_mid, w_mid, 1, (1, 1), (1, 1), (7, 7))  # 16 tiles: U-bound
    w_small = np.zeros((32, 128, 3, 3), np.float32)  # U = 1 MiB
    assert applies(np.zeros((1, 128, 7, 7), np.float32), w_small, 1, (1, 1), (1, 1), (7, 7))


def test_winograd_eligible_is_the_static_rule_without_the_size_guess():
    from onnxkit.kernels.cpu._winograd import applies, eligible

    w_mid = np.zeros((256, 256, 3, 3), np.float32)
    x_mid = np.zeros((1, 256, 7, 7), np.float32)
    assert eligible(x_mid, w_mid, 1, (1, 1), (1, 1))  # timed when tuning ...
    assert not applies(x_mid, w_mid, 1, (1, 1), (1, 1), (7, 7))  # ... not run by the rule
    w_big = np.zeros((512, 512, 3, 3), np.float32)  # U = 16 MiB: never
    assert not eligible(np.zeros((1, 512, 14, 14), np.float32), w_big, 1, (1, 1), (1, 1))


def _profiled_algorithms(case, executor_kwargs=None) -> set:
    sess = onnxkit.Session(case.model(), executor="cpu", **(executor_kwargs or {}))
    prof = Profiler(sess)
    sess.run(None, case.feeds(), trace=prof)
    return {row["kernel"].rsplit("[", 1)[-1].rstrip("]") for row in prof.rows(by="node")}


@pytest.mark.parametrize("name", ["winograd4_same", "winograd4_fused_z_clip_asym",
                                  "winograd4_valid_batch2"])
def test_large_planes_run_winograd_f4x4_under_the_static_rule(name):
    """28x28 planes and up: F(4x4, 3x3), as the plan and the profiler report; the outputs
    within the case's tolerance of the reference's float64 products."""
    case = next(c for c in CPU_CASES if c.name == name)
    sess, actual = _run(case, "cpu")
    assert sess.plan.steps[0].algorithm == "winograd4"
    assert _profiled_algorithms(case) == {"winograd4"}
    _, expected = _run(case, "reference")
    np.testing.assert_allclose(actual[0], expected[0], rtol=case.rtol, atol=case.atol)


def test_winograd_f4x4_error_stays_near_float32_rounding():
    """Against a float64 convolution the F(4x4, 3x3) result is off by ~1e-6 of the
    output's scale (its larger interpolation points cost ~10x F(2x2, 3x3)'s error)."""
    from onnxkit.ops.nn.conv import conv as reference_conv

    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 64, 28, 28)).astype(np.float32)
    w = rng.standard_normal((32, 64, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 28, 28])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(w, "w")])
    sess = onnxkit.Session(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
                           executor="cpu")
    assert sess.plan.steps[0].algorithm == "winograd4"
    (got,) = sess.run(None, {"x": x})
    want = reference_conv(x.astype(np.float64), w.astype(np.float64), pads=[1, 1, 1, 1])
    error = np.abs(got - want).max() / np.abs(want).max()
    assert 0 < error < 2e-5


def test_winograd_f4x4_weights_by_hand():
    from onnxkit.kernels.cpu._winograd4 import weight_transform

    w = f32(3, 2, 3, 3)
    u = weight_transform(w)
    assert u.shape == (36, 3, 2)
    # G's row 0 is (1/4, 0, 0) and row 5 is (0, 0, 1): U[0] = g[0, 0] / 16,
    # U[5] (xi = (0, 5)) = g[0, 2] / 4, U[35] = g[2, 2]
    np.testing.assert_allclose(u[0], w[:, :, 0, 0] / 16, rtol=1e-6)
    np.testing.assert_allclose(u[5], w[:, :, 0, 2] / 4, rtol=1e-6)
    np.testing.assert_allclose(u[35], w[:, :, 2, 2], rtol=1e-6)


def test_winograd_f2x2_weights_by_hand():
    from onnxkit.kernels.cpu._winograd import weight_transform

    w = f32(16, 16, 3, 3)
    u = weight_transform(w)
    assert u.shape == (16, 16, 16)
    # G g G^T by hand for one filter: row 0 of G is (1, 0, 0), so U[0] = g[0, 0] and
    # U[1] (xi = (0, 1)) = (g[0, 0] + g[0, 1] + g[0, 2]) / 2
    np.testing.assert_allclose(u[0], w[:, :, 0, 0], rtol=1e-6)
    np.testing.assert_allclose(u[1], w[:, :, 0, :].sum(axis=-1) / 2, rtol=1e-5, atol=1e-6)


def test_pick_keeps_the_session_s_choice_and_runs_the_default_untuned():
    """``_tuning.pick`` inside a tuned run: the first call of a key runs every candidate
    (three times each) and the output is the winner's; later calls of the key in the
    same session run the recorded winner only. Untuned: the default alone."""
    from onnxkit.kernels.cpu import _tuning

    calls = []

    def candidate(name):
        return lambda: calls.append(name) or name.upper()

    runs = {"a": candidate("a"), "b": candidate("b")}
    session = _tuning.Tuning()
    with _tuning.tuning_of_run(True, session):
        first = _tuning.pick("layer", runs, default="a")
        assert sorted(calls) == ["a"] * _tuning.RUNS + ["b"] * _tuning.RUNS
        (key, winner, best), = session.log
        assert key == "layer" and first == winner.upper() and set(best) == {"a", "b"}
        calls.clear()
        assert _tuning.pick("layer", runs, default="a") == winner.upper()
        assert calls == [winner]
    calls.clear()
    with _tuning.tuning_of_run(False, session):
        assert _tuning.pick("other", runs, default="b") == "B" and calls == ["b"]
    assert _tuning.pick("other", runs, default="a") == "A"  # outside a run: untuned


def test_a_tuned_conv_times_the_algorithms_and_matches_the_reference():
    case = next(c for c in CPU_CASES if c.name == "winograd_same_odd")
    _, expected = _run(case, "reference")
    # any of the three may give the result, F(4x4) too: its tolerance, as in the winograd4
    # cases above (against the reference's float64 products it was off by 1.2e-4 here)
    winograd4_atol = next(c for c in CPU_CASES if c.name == "winograd4_same").atol
    sess = onnxkit.Session(case.model(), executor="cpu", tune=True)
    first = sess.run(None, case.feeds())
    np.testing.assert_allclose(first[0], expected[0], rtol=case.rtol, atol=winograd4_atol)
    assert sess.plan.steps[0].algorithm in ("winograd", "winograd4", "im2col")
    np.testing.assert_array_equal(sess.run(None, case.feeds())[0], first[0])  # the winner


def test_gemm_reads_constant_transposed_weights_in_place():
    """torch's Linear (transB=1) on a read-only weight: the product reads W as BLAS's
    transposed operand and gives the float64 answer's values."""
    from onnxkit.kernels.cpu import gemm

    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 96)).astype(np.float32)
    w = rng.standard_normal((40, 96)).astype(np.float32)  # (out, in), like torch
    w.flags.writeable = False
    b = rng.standard_normal(40).astype(np.float32)
    for _ in range(2):
        y = gemm.fused_gemm(x, w, b, transB=1, activation="Relu")
        want = np.maximum(x.astype(np.float64) @ w.astype(np.float64).T + b, 0.0)
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)


def test_warm_compiles_every_kernel_signature_real_models_use(monkeypatch):
    """A session on a warm cache compiles nothing: read-only weights and biases (the
    initializers), missing biases and both convolution algorithms included."""
    from pathlib import Path

    from onnxkit.inputs import random_feeds
    from onnxkit.kernels.cpu.warm import warm
    from tests.cpu_signatures import added_since, kernel_signatures

    light = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
    warm(verbose=False)
    before = kernel_signatures()
    for name in ("light_densenet121.onnx", "light_resnet50.onnx"):
        model = onnx.load(str(light / name))
        for level in (0, 3):  # the standard operators as given, and the fused ones
            for tune in (False, True):  # the rule's algorithms, and every timed one
                onnxkit.Session(model, executor="cpu", level=level, tune=tune).run(
                    None, random_feeds(model, 0))
    new = added_since(before)
    assert not new, f"compiled on first use, missing from warm.py: {new}"


def test_pool_grow_only_past_the_furthest_value_handed_out():
    pool = BufferPool()
    token = using_pool(pool)
    try:
        from onnxkit.kernels.cpu._buffers import grown

        row = 10_000  # floats: 2 rows are a pooled size (over 64 KiB)
        x = empty((2, row), np.float32, capacity=4 * 4 * row)
        x[...] = 7
        y = grown(x, (3, row))  # room for one more row, in x's own buffer
        assert y is not None and y.ctypes.data == x.ctypes.data
        np.testing.assert_array_equal(y[:2], 7)
        assert grown(x, (3, row)) is None  # y reaches past x: x cannot grow again
        assert grown(y, (5, row)) is None  # past the buffer's capacity
        assert grown(y[1:], (3, row)) is None  # does not start the buffer
        assert grown(np.zeros((2, row), np.float32), (3, row)) is None  # not pooled
    finally:
        release(token)


def test_a_concat_chain_grows_in_place_and_a_shared_prefix_is_copied():
    """x1 = Concat(x0, a), x2 = Concat(x1, b) (DenseNet's chain) build in one buffer; a
    second Concat(x1, c) must not write over x2's tail."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 64, 64])  # pooled sizes
    nodes = [helper.make_node("Relu", ["x"], ["x0"]),
             helper.make_node("Neg", ["x0"], ["a"]),
             helper.make_node("Concat", ["x0", "a"], ["x1"], axis=1, name="c1"),
             helper.make_node("Sigmoid", ["x1"], ["b"]),
             helper.make_node("Concat", ["x1", "b"], ["x2"], axis=1, name="c2"),
             helper.make_node("Abs", ["x1"], ["c"]),
             helper.make_node("Concat", ["x1", "c"], ["x3"], axis=1, name="c3"),
             helper.make_node("Add", ["x2", "x3"], ["y"])]
    graph = helper.make_graph(nodes, "g", [x], [helper.make_empty_tensor_value_info("y"),
                                                helper.make_empty_tensor_value_info("x2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    feeds = {"x": f32(1, 4, 64, 64)}
    expected = onnxkit.Session(model).run(None, feeds)
    sess = onnxkit.Session(model, executor="cpu")
    addresses = {}

    def trace(ev):
        if ev.node.op_type == "Concat":
            addresses[ev.node.name] = (ev.inputs[0].ctypes.data, ev.outputs[0].ctypes.data)

    for _ in range(2):
        actual = sess.run(None, feeds, trace=trace)
        for want, got in zip(expected, actual):  # (the cpu Sigmoid is within 2 ulps of the
            # reference's; a tail written over would be off by whole values)
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)
    assert addresses["c2"][0] == addresses["c2"][1]  # grown in x1's buffer
    assert addresses["c3"][0] != addresses["c3"][1]  # x2 reaches past x1: copied


def test_one_cpu_session_from_many_threads():
    """Runs from several Python threads at once share the Numba threads and BLAS (set to
    one thread during runs): the answers are those of one run at a time."""
    import threading

    case = next(c for c in CPU_CASES if c.name == "winograd4_same")
    sess = onnxkit.Session(case.model(), executor="cpu")
    rng = np.random.default_rng(5)
    feeds = [{name: rng.standard_normal(x.shape).astype(x.dtype) for name, x in
              case.feeds().items()} for _ in range(6)]
    want = [sess.run(None, f)[0].copy() for f in feeds]
    got = [None] * len(feeds)

    def work(i):
        for _ in range(5):
            got[i] = sess.run(None, feeds[i])[0].copy()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(feeds))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def _small_conv_model():
    """A 3x3 Conv of 36 output pixels and a Relu: dot products and im2col may both run
    it (``_conv_rules``), so timing has a choice to make."""
    model = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 17]>
        g (float[1, 4, 6, 6] x) => (float y) {
            c = Conv <pads = [1, 1, 1, 1]> (x, W, B)
            y = Relu (c) }""")
    rng = np.random.default_rng(3)
    model.graph.initializer.extend([
        onnx.numpy_helper.from_array(rng.standard_normal((8, 4, 3, 3)).astype(np.float32), "W"),
        onnx.numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "B")])
    return model, {"x": rng.standard_normal((1, 4, 6, 6)).astype(np.float32)}


@pytest.mark.parametrize("how", ["default", "tune=True", "ONNXKIT_CPU_TUNE=1"])
def test_timing_only_when_asked(how, monkeypatch):
    """By default nothing is timed (the session's tuning log stays empty, the plan reports
    the static rule's algorithm); ``tune=True`` or ``ONNXKIT_CPU_TUNE=1`` time the Conv's
    candidates, and the plan reports the winner. The output is onnxruntime's either way."""
    import onnxruntime as ort

    from onnxkit.kernels.cpu._conv_rules import CONV

    monkeypatch.delenv("ONNXKIT_CPU_TUNE", raising=False)
    if how.startswith("ONNXKIT"):
        monkeypatch.setenv("ONNXKIT_CPU_TUNE", "1")
    model, feeds = _small_conv_model()
    sess = onnxkit.Session(model, executor="cpu", tune=True if how == "tune=True" else None)
    expected = ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    for _ in range(2):
        np.testing.assert_allclose(sess.run(None, feeds)[0], expected, rtol=1e-5, atol=1e-5)
    (conv_step,) = [s for s in sess.plan.steps if s.node.op_type == "Conv"]
    conv_log = [entry for entry in sess.executor.tuning.log if entry[0][0] == "conv"]
    if how == "default":
        assert conv_log == []
        # the table read by hand: 36 pixels (dots: 16 at most), 4 channels (Winograd: 16+)
        assert conv_step.algorithm == "im2col"
    else:
        ((_, winner, best),) = conv_log
        assert len(best) >= 2 and set(best) <= {row.algorithm for row in CONV}
        assert conv_step.algorithm == winner
