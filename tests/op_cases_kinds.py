"""Op cases for the operators real models of other kinds run (issue #33's kernels):
quantized, recurrent, tree ensembles and float16 nodes, one node each, on small inputs.

They join the op table of ``tests/op_cases.py``: the cpu executor's tests run each on the
reference and cpu executors and against onnx.reference, and the cuda simulator's check
that the cuda executor hands each to the host (``where="host"``: no cuda kernel takes them).
"""

from __future__ import annotations

import numpy as np

from tests.op_cases import C, Init, f32

R = np.random.default_rng(11)


def u8(*shape, low=0, high=256):
    return R.integers(low, high, shape).astype(np.uint8)


def s8(*shape, low=-128, high=128):
    return R.integers(low, high, shape).astype(np.int8)


def f16(*shape):
    return f32(*shape, low=-1.0, high=1.0).astype(np.float16)


def _scale(*shape):
    return Init(R.uniform(0.002, 0.02, shape).astype(np.float32))


QUANTIZED = [
    C("quantize_linear_u8", "QuantizeLinear", f32(2, 5, low=-9, high=9),
      Init(np.float32(0.05)), Init(np.uint8(128)), opset=13, where="host"),
    C("quantize_linear_per_axis_s8", "QuantizeLinear", f32(2, 3, 4, low=-9, high=9),
      Init(np.array([0.05, 0.1, 0.02], np.float32)), Init(np.array([0, -3, 7], np.int8)),
      axis=1, opset=13, where="host"),
    C("dequantize_linear_u8", "DequantizeLinear", u8(2, 5), Init(np.float32(0.05)),
      Init(np.uint8(100)), opset=19, where="host"),
    C("dynamic_quantize_linear", "DynamicQuantizeLinear", f32(3, 4, low=-3, high=5),
      opset=11, outputs=3, where="host"),
    # per-channel weight scales, a bias, padding reading the zero point
    C("qlinear_conv", "QLinearConv", u8(1, 3, 7, 7), _scale(), Init(np.uint8(120)),
      Init(s8(4, 3, 3, 3)), _scale(4), Init(np.zeros(4, np.int8)), Init(np.float32(0.05)),
      Init(np.uint8(128)), Init(R.integers(-500, 500, 4).astype(np.int32)), pads=[1, 1, 1, 1],
      opset=10, where="host"),
    C("conv_integer", "ConvInteger", u8(1, 2, 6, 6), Init(u8(3, 2, 3, 3)), Init(np.uint8(128)),
      Init(np.uint8(120)), strides=[2, 2], opset=10, where="host"),
    C("matmul_integer", "MatMulInteger", u8(3, 5), Init(s8(5, 4)), Init(np.uint8(131)),
      Init(np.int8(-2)), opset=10, where="host"),
    C("qlinear_matmul", "QLinearMatMul", u8(2, 3, 5), _scale(), Init(np.uint8(125)),
      Init(s8(5, 4)), _scale(), Init(np.int8(0)), Init(np.float32(0.1)), Init(np.uint8(128)),
      opset=10, where="host"),
]

# sequence 4, batch 2, input 3, hidden 5
RECURRENT = [
    C("lstm", "LSTM", f32(4, 2, 3), Init(f32(1, 20, 3)), Init(f32(1, 20, 5)), Init(f32(1, 40)),
      hidden_size=5, outputs=3, opset=14, where="host", rtol=1e-5, atol=1e-6),
    C("lstm_bidirectional", "LSTM", f32(4, 2, 3), Init(f32(2, 20, 3)), Init(f32(2, 20, 5)),
      direction="bidirectional", hidden_size=5, outputs=3, opset=14, where="host"),
    C("gru_linear_before_reset", "GRU", f32(4, 2, 3), Init(f32(1, 15, 3)), Init(f32(1, 15, 5)),
      Init(f32(1, 30)), hidden_size=5, linear_before_reset=1, outputs=2, opset=14,
      where="host"),
    C("rnn_tanh", "RNN", f32(3, 1, 4), Init(f32(1, 6, 4)), Init(f32(1, 6, 6)), hidden_size=6,
      outputs=2, opset=14, where="host"),
]

# two trees on three features: tree 0 splits on feature 0 then 2, tree 1 on feature 1
_TREES = dict(
    nodes_treeids=[0, 0, 0, 0, 0, 1, 1, 1], nodes_nodeids=[0, 1, 2, 3, 4, 0, 1, 2],
    nodes_featureids=[0, 2, 0, 0, 0, 1, 0, 0],
    nodes_values=[0.1, -0.3, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0],
    nodes_modes=["BRANCH_LEQ", "BRANCH_LT", "LEAF", "LEAF", "LEAF", "BRANCH_LEQ", "LEAF",
                 "LEAF"],
    nodes_truenodeids=[1, 3, 0, 0, 0, 1, 0, 0], nodes_falsenodeids=[2, 4, 0, 0, 0, 2, 0, 0])
_LEAVES = ([0, 0, 0, 1, 1], [2, 3, 4, 1, 2])  # (tree, node) of each leaf

TREES = [
    C("tree_ensemble_regressor", "TreeEnsembleRegressor", f32(6, 3, low=-1, high=1),
      domain="ai.onnx.ml", n_targets=1, target_ids=[0] * 5, target_treeids=_LEAVES[0],
      target_nodeids=_LEAVES[1], target_weights=[0.5, -1.25, 2.0, 0.75, -0.5],
      aggregate_function="SUM", base_values=[0.25], where="host", **_TREES),
    # every leaf votes for each of three classes
    C("tree_ensemble_classifier", "TreeEnsembleClassifier", f32(6, 3, low=-1, high=1),
      domain="ai.onnx.ml", class_ids=[0, 1, 2] * 5, class_treeids=np.repeat(_LEAVES[0], 3),
      class_nodeids=np.repeat(_LEAVES[1], 3), class_weights=R.uniform(0, 1, 15).tolist(),
      classlabels_int64s=[3, 5, 7], post_transform="NONE", outputs=2, where="host",
      **_TREES),
    # two classes, some rows reaching only class-0 votes (onnxruntime's binary rules: the
    # reference kernel's docstring)
    C("tree_ensemble_classifier_one_sided", "TreeEnsembleClassifier",
      f32(6, 3, low=-1, high=1), domain="ai.onnx.ml", class_ids=[0, 1, 1, 0, 1],
      class_treeids=_LEAVES[0], class_nodeids=_LEAVES[1],
      class_weights=[0.9, 0.6, 0.8, 0.3, 0.7], classlabels_int64s=[0, 1],
      post_transform="NONE", outputs=2, where="host", **_TREES),
]

# float16 nodes: float32 math between two roundings (one float16 ulp at most)
HALF = [
    C("matmul_f16", "MatMul", f16(3, 8), Init(f16(8, 4)), where="host", rtol=1e-3, atol=1e-3),
    C("conv_f16", "Conv", f16(1, 2, 5, 5), Init(f16(3, 2, 3, 3)), Init(f16(3)),
      pads=[1, 1, 1, 1], where="host", rtol=1e-3, atol=2e-3),
    C("layer_norm_f16", "LayerNormalization", f16(2, 3, 8), Init(f16(8)), Init(f16(8)),
      opset=17, where="host", rtol=1e-3, atol=2e-3),
    C("softmax_f16", "Softmax", f16(3, 7), where="host", rtol=1e-3, atol=1e-3),
]

KINDS = QUANTIZED + RECURRENT + TREES + HALF
