"""Which passes run at each level, in order. Levels are cumulative, like onnxruntime's.

| level | name      | what                                                                |
|-------|-----------|---------------------------------------------------------------------|
| 0     | none      | the model as given                                                  |
| 1     | basic     | model-local functions inlined, constant, CastLike and shape folding, no-op removal, CSE, dead code, BN / Mul / Add folded into Conv and Gemm / MatMul weights; pure standard ONNX |
| 2     | extended  | fusions: Conv / Gemm / MatMul + activation, MatMul + Add, residual Add into Conv, LayerNorm, RMSNorm, GELU, SkipLayerNorm, attention, Transpose / Reshape chains, Slices to Split, scalar factors of a MatMul's operands, Transposes into MatMul's transA / transB, MatMuls of one input merged (q, k, v), dynamic quantization's MatMulInteger chains, QuantizeLinear + DequantizeLinear pairs |
| 3     | layout    | level 2's passes: the layout, in-place and buffer plans it wrote went (``docs/optimizer.md``) |

A level runs in stages, as onnxruntime applies its levels one after another: level 1's
passes repeat until none changes the graph, then (levels 2 and 3) level 2's passes,
which include level 1's, repeat until none does. Folding first matters: a fused node is
in the onnxkit domain, for which onnx's shape inference has no schema, so shapes that
only folding would make static must be static before the fusions. Passes with
``repeat = False`` run once at the end.
"""

from __future__ import annotations

from onnxkit.optimizer.passes import (activation_fusion, attention_fusion, batchnorm_affine,
                                      canonicalize, cast_like_folding, chains, constant_folding, conv_add_fusion, conv_fold,
                                      cse, dead_code, dynamic_quant_fusion, gelu_fusion, gemm_fold,
                                      identity_elimination,
                                      layer_norm_fusion, matmul_add_fusion, matmul_merge,
                                      noop_elimination,
                                      quantize_dequantize_fusion,
                                      rms_norm_fusion, shape_folding, skip_layer_norm_fusion,
                                      inline_functions, matmul_scale_fold, slice_split, split_heads,
                                      transpose_matmul_fold)

BASIC = (
    inline_functions.PASS,
    constant_folding.PASS,
    cast_like_folding.PASS,
    shape_folding.PASS,
    identity_elimination.PASS,
    noop_elimination.PASS,
    canonicalize.PASS,
    cse.PASS,
    conv_fold.PASS,
    gemm_fold.PASS,
    batchnorm_affine.PASS,
    dead_code.PASS,
)

EXTENDED = BASIC[:-1] + (
    chains.PASS,
    slice_split.PASS,
    gelu_fusion.PASS,
    layer_norm_fusion.PASS,
    rms_norm_fusion.PASS,
    skip_layer_norm_fusion.PASS,
    matmul_scale_fold.PASS,  # first: q * s, k * s become one scale the attention takes
    attention_fusion.PASS,
    split_heads.PASS,  # after: the attention may take the heads' Reshapes itself
    matmul_add_fusion.PASS,
    dynamic_quant_fusion.PASS,
    conv_add_fusion.PASS,
    activation_fusion.PASS,
    matmul_merge.PASS,  # after the fusions that take a MatMul into another node
    dead_code.PASS,
    transpose_matmul_fold.PASS,  # repeat = False: once, after the fixed point
    quantize_dequantize_fusion.PASS,  # repeat = False
)

# Level 3 is level 2: its plans (NHWC depthwise convs, in-place outputs, buffer reuse) were
# metadata no executor read; the cpu executor decides these itself when it plans a model
# (``docs/optimizer.md``, "Level 3"). The level stays, so that ``level=3`` keeps working.
LAYOUT = EXTENDED

LEVELS = {0: (), 1: BASIC, 2: EXTENDED, 3: LAYOUT}
NAMES = {0: "none", 1: "basic", 2: "extended", 3: "layout"}


def stages_for(level: int) -> tuple[tuple, ...]:
    """The pass lists run to a fixed point one after another; the last is the level's.
    Levels 2 and 3 run level 1's passes, then level 2's."""
    return ((BASIC,) if level >= 2 else ()) + (LEVELS[level],)
