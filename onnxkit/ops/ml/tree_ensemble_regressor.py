"""TreeEnsembleRegressor: sum (or average, min, max) the leaf weights each row reaches.

    for each row n, tree t: leaf = walk(t, X[n])
    Y[n, k] = aggregate_t(weights of leaf for target k) + base_values[k]
    Y = post_transform(Y)

Nodes are (tree id, node id) tuples in the ``nodes_*`` attributes; leaf votes are
(tree id, node id, target id, weight) tuples in the ``target_*`` attributes.
``*_as_tensor`` (version 3+) holds double values instead of floats.
https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsembleRegressor.html
"""

import numpy as np

from onnxkit.ops.ml._post_transform import apply_post_transform, as_batch
from onnxkit.ops.ml._tree_walk import (aggregate, int_ids, leaf_positions, leaves,
                                       legacy_forest, pick)
from onnxkit.ops.registry import ML_DOMAIN, op


@op("TreeEnsembleRegressor", 3, 5, domain=ML_DOMAIN)
def tree_ensemble_regressor(X, *, aggregate_function="SUM", base_values=None,
                            base_values_as_tensor=None, n_targets=None,
                            nodes_falsenodeids=None, nodes_featureids=None,
                            nodes_hitrates=None, nodes_hitrates_as_tensor=None,
                            nodes_missing_value_tracks_true=None, nodes_modes=None,
                            nodes_nodeids=None, nodes_treeids=None, nodes_truenodeids=None,
                            nodes_values=None, nodes_values_as_tensor=None,
                            post_transform="NONE", target_ids=None, target_nodeids=None,
                            target_treeids=None, target_weights=None,
                            target_weights_as_tensor=None):
    X = as_batch(X)
    forest, lookup = legacy_forest(
        nodes_treeids, nodes_nodeids, nodes_featureids,
        pick(nodes_values, nodes_values_as_tensor, "nodes_values"), nodes_modes,
        nodes_truenodeids, nodes_falsenodeids, nodes_missing_value_tracks_true)
    weights = pick(target_weights, target_weights_as_tensor, "target_weights")
    targets = int_ids(target_ids)
    if weights is None:
        weights = np.zeros(0)
    if n_targets is None:
        n_targets = int(targets.max(initial=0)) + 1
    leaf = leaf_positions(lookup, target_treeids, target_nodeids)
    pos = leaves(forest, X)
    dtype = np.float64 if target_weights_as_tensor is not None else np.float32
    scores = aggregate(forest, pos, leaf, targets, weights, n_targets, aggregate_function, dtype)
    base = pick(base_values, base_values_as_tensor, "base_values")
    if base is not None and base.size:
        scores = scores + base.astype(dtype).reshape(1, -1)
    return apply_post_transform(scores, post_transform).astype(np.float32)


@op("TreeEnsembleRegressor", 1, domain=ML_DOMAIN)
def tree_ensemble_regressor_v1(X, *, aggregate_function="SUM", base_values=None,
                               n_targets=None, nodes_falsenodeids=None, nodes_featureids=None,
                               nodes_hitrates=None, nodes_missing_value_tracks_true=None,
                               nodes_modes=None, nodes_nodeids=None, nodes_treeids=None,
                               nodes_truenodeids=None, nodes_values=None,
                               post_transform="NONE", target_ids=None, target_nodeids=None,
                               target_treeids=None, target_weights=None):
    return tree_ensemble_regressor(
        X, aggregate_function=aggregate_function, base_values=base_values,
        n_targets=n_targets, nodes_falsenodeids=nodes_falsenodeids,
        nodes_featureids=nodes_featureids, nodes_hitrates=nodes_hitrates,
        nodes_missing_value_tracks_true=nodes_missing_value_tracks_true,
        nodes_modes=nodes_modes, nodes_nodeids=nodes_nodeids, nodes_treeids=nodes_treeids,
        nodes_truenodeids=nodes_truenodeids, nodes_values=nodes_values,
        post_transform=post_transform, target_ids=target_ids, target_nodeids=target_nodeids,
        target_treeids=target_treeids, target_weights=target_weights)
