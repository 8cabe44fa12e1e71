"""The reference kernels: readable numpy, one operator (or tight family) per module.

Each module registers its kernels with ``@op(...)`` from ``onnxkit.core.registry``.
``load_reference_kernels()`` imports the modules ``KERNEL_MODULES`` lists, once; the
decorators are the only place an operator is named. ``make_executor`` is the factory
``onnxkit.runtime.executors.BACKENDS`` names for "reference".
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from onnxkit.core.registry import REFERENCE, Registry

#: Every module holding reference kernels, by subpackage of ``onnxkit.ops``: a new kernel
#: module is added here (``tests/test_layers.py`` checks that none is left out).
KERNEL_MODULES: dict[str, tuple[str, ...]] = {
    "attention": (
        "attention", "causal_conv_with_state", "flex_attention", "linear_attention",
        "rotary_embedding", "tensor_scatter",
    ),
    "cast": ("bitcast", "cast", "cast_like",),
    "control": ("if_", "loop", "scan",),
    "fused": (
        "attention", "fused_batch_norm", "fused_conv", "fused_gemm", "fused_matmul", "gelu",
        "layer_norm", "quant_matmul", "quantize_dequantize", "rms_norm",
    ),
    "image": ("image_decoder",),
    "linalg": ("det", "einsum", "gemm", "matmul",),
    "loss": ("negative_log_likelihood_loss", "softmax_cross_entropy_loss",),
    "math": (
        "binary", "bitwise", "clip", "compare", "elu", "gelu", "isnan_isinf", "logical", "mod",
        "pow", "relu", "rounding", "shrink", "sigmoid", "softplus", "trig", "unary", "variadic",
        "where",
    ),
    "ml": (
        "array_feature_extractor", "binarizer", "cast_map", "category_mapper", "dict_vectorizer",
        "feature_vectorizer", "imputer", "label_encoder", "linear_classifier", "linear_regressor",
        "normalizer", "one_hot_encoder", "scaler", "svm_classifier", "svm_regressor",
        "tree_ensemble", "tree_ensemble_classifier", "tree_ensemble_regressor", "zipmap",
    ),
    "nn": (
        "batch_norm", "col2im", "conv", "conv_transpose", "deform_conv", "dropout", "global_pool",
        "group_norm", "instance_norm", "layer_norm", "lp_normalization", "lrn", "max_pool",
        "max_roi_pool", "max_unpool", "mean_variance_normalization", "pool", "rms_norm",
    ),
    "optional": ("optional",),
    "quant": (
        "conv_integer", "dequantize_linear", "dynamic_quantize_linear", "matmul_integer",
        "qgemm", "qlinear_activation", "qlinear_binary", "qlinear_concat", "qlinear_conv",
        "qlinear_global_average_pool", "qlinear_matmul", "quantize_linear",
    ),
    "random": ("bernoulli", "multinomial", "random_normal", "random_uniform",),
    "reduce": (
        "arg_extrema", "cumulative", "reduce_extrema", "reduce_log_sum", "reduce_mean",
        "reduce_norm", "reduce_prod", "reduce_sum",
    ),
    "rnn": ("gru", "lstm", "rnn",),
    "sequence": (
        "concat_from_sequence", "sequence_at", "sequence_basic", "sequence_map",
        "split_to_sequence",
    ),
    "signal": ("dft", "mel_weight_matrix", "stft", "windows",),
    "softmax": ("hardmax", "log_softmax", "softmax",),
    "spatial": (
        "affine_grid", "grid_sample", "non_max_suppression", "resize", "roi_align", "upsample",
    ),
    "tensor": (
        "center_crop_pad", "compress", "concat", "constant", "constant_of_shape", "depth_to_space",
        "expand", "eye_like", "flatten", "gather", "gather_nd", "identity", "non_zero", "one_hot",
        "pad", "range_", "reshape", "reverse_sequence", "scatter", "scatter_nd", "shape", "size",
        "slice", "split", "squeeze", "tile", "top_k", "transpose", "trilu", "unique",
    ),
    "text": (
        "regex_full_match", "string_concat", "string_normalizer", "string_split",
        "tfidf_vectorizer",
    ),
    "training": ("adagrad", "adam", "gradient", "momentum",),
}


@lru_cache(maxsize=None)
def load_reference_kernels() -> Registry:
    """Import every kernel module of ``KERNEL_MODULES`` (in order, so errors are repeatable)."""
    for package, modules in KERNEL_MODULES.items():
        for module in modules:
            importlib.import_module(f"{__name__}.{package}.{module}")
    return REFERENCE


def make_executor():
    """The reference executor: numpy kernels called as they are, values kept on the host."""
    from onnxkit.core.executor import Executor

    return Executor((load_reference_kernels(),))
