"""Tree ensembles on the ``cpu`` executor: TreeEnsembleClassifier, TreeEnsembleRegressor
(ai.onnx.ml 1, 3-5) and TreeEnsemble (ai.onnx.ml 5).

    plan time (``prepare``):  the node's forest laid out once (``_forest.layout``)
    each run:                 Z (and Y) = forest_rows(X, layout...)   rows shared by threads

One compiled call walks every tree for its rows, aggregates as it goes (SUM, AVERAGE,
MIN, MAX) and finishes each row: base values, post_transform, the classifier's label
(``_forest_walk``). It answers as the reference kernel does (``onnxkit.ops.ml``): the
same float32 sums in the same order. The reference kernel itself runs what the walk does
not cover: inputs that are not float32 (compared in float64), double weights
(``*_weights_as_tensor``), set membership (BRANCH_MEMBER), a cycle, more than two
dimensions, attributes the reference rejects (it raises its error at run time); the
profiler marks those runs ``[reference]`` (``_route.fall_back``).
https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsemble.html
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import read_only
from onnxkit.kernels.cpu._forest import layout
from onnxkit.kernels.cpu._forest_walk import forest_rows
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu._threads import run_parts
from onnxkit.ops.registry import ML_DOMAIN, REFERENCE, op

TREE_OPS = ("TreeEnsembleClassifier", "TreeEnsembleRegressor", "TreeEnsemble")
F32 = np.dtype(np.float32)
STEPS_PER_TREE = 8  # rough values touched per (row, tree): how work is weighed for threads


class PreparedForest:
    """A tree node's kernel on the plan: its forest's layout, made once."""

    __slots__ = ("reference_fn", "layout", "arrays", "work")

    def __init__(self, reference_fn, forest):
        self.reference_fn, self.layout = reference_fn, forest
        self.arrays = forest.arrays if forest is not None else ()
        self.work = STEPS_PER_TREE * max(1, forest.n_trees) if forest is not None else 0

    def __call__(self, X, **attributes):
        forest = self.layout
        if forest is None or X.dtype != F32 or not 1 <= X.ndim <= 2:
            return fall_back(self.reference_fn, X, **attributes)
        if X.ndim == 1:
            X = X.reshape(1, -1)
        rows = X.shape[0]
        if rows and forest.n_trees and X.shape[1] <= forest.max_feature:
            return fall_back(self.reference_fn, X, **attributes)  # it names the features read
        X = read_only(np.ascontiguousarray(X))  # one compiled signature, as every array
        Z = np.empty((rows, forest.n_outputs), np.float32)
        Y = np.empty(rows if forest.classifier else 0, np.int64)
        run_parts(forest_rows, rows, rows * self.work, X, *self.arrays, Z, Y)
        if not forest.classifier:
            return Z
        return (Y if forest.string_labels is None else forest.string_labels[Y]), Z


def prepared(reference_fn, op_type: str, attrs: dict) -> PreparedForest:
    """The kernel of one node with these attributes (the reference's defaults filled)."""
    bound = inspect.signature(reference_fn).bind_partial(**attrs)
    bound.apply_defaults()
    return PreparedForest(reference_fn, layout(op_type, bound.arguments))


def _kernel(reference_fn, op_type: str):
    """The registered kernel: called outside a plan it lays the forest out for this call
    alone; ``kernel.prepare`` does it once for a plan step."""

    @functools.wraps(reference_fn)
    def kernel(X, **attributes):
        return prepared(reference_fn, op_type, attributes)(X, **attributes)

    kernel.__signature__ = inspect.signature(reference_fn)
    kernel.prepare = lambda node, attrs, constants, shapes: prepared(reference_fn, op_type,
                                                                     attrs)
    return kernel


def _register() -> None:
    from onnxkit.ops.ml import (tree_ensemble, tree_ensemble_classifier,  # noqa: F401
                                tree_ensemble_regressor)

    for kernel in list(REFERENCE):
        if kernel.domain == ML_DOMAIN and kernel.op_type in TREE_OPS:
            op(kernel.op_type, kernel.since_version, domain=ML_DOMAIN, registry=CPU)(
                _kernel(kernel.fn, kernel.op_type))


def warm_up() -> None:
    """Compile (or load) ``forest_rows``: a one-split regressor on three rows."""
    from onnxkit.ops.ml.tree_ensemble_regressor import tree_ensemble_regressor

    fn = prepared(tree_ensemble_regressor, "TreeEnsembleRegressor", dict(
        nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[1, 0, 0],
        nodes_values=[0.5, 0.0, 0.0], nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"],
        nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0], target_treeids=[0, 0],
        target_nodeids=[1, 2], target_ids=[0, 0], target_weights=[1.0, 2.0], n_targets=1))
    fn(np.zeros((3, 2), np.float32))


_register()
