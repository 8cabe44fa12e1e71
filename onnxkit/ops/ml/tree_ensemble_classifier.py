"""TreeEnsembleClassifier: add the class votes of the leaves each row reaches.

    for each row n, tree t: leaf = walk(t, X[n])
    score[n, c] = sum_t (weights of leaf for class c) + base_values[c]
    Y[n] = classlabels[argmax_c score[n, c]];   Z = post_transform(score)

Two classes whose votes all name one class id (skl2onnx's binary encoding) follow
onnxruntime: that column is the positive class score s, the label is positive when
s > 0.5 (all weights >= 0) or s > 0 (signed weights), and Z gets the missing column
as 1 - s or -s. When both class ids carry votes the label is the top class, as the
spec says (onnxruntime 1.31 answers the raw integers 0 / 1 when class 1 scores > 0).
https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsembleClassifier.html
"""

import numpy as np

from onnxkit.ops.ml._labels import class_labels, pick_labels, second_class
from onnxkit.ops.ml._post_transform import apply_post_transform, as_batch, post_transform_name
from onnxkit.ops.ml._tree_walk import (aggregate, int_ids, leaf_positions, leaves,
                                       legacy_forest, pick)
from onnxkit.ops.registry import ML_DOMAIN, op


@op("TreeEnsembleClassifier", 3, 5, domain=ML_DOMAIN)
def tree_ensemble_classifier(X, *, base_values=None, base_values_as_tensor=None,
                             class_ids=None, class_nodeids=None, class_treeids=None,
                             class_weights=None, class_weights_as_tensor=None,
                             classlabels_int64s=None, classlabels_strings=None,
                             nodes_falsenodeids=None, nodes_featureids=None,
                             nodes_hitrates=None, nodes_hitrates_as_tensor=None,
                             nodes_missing_value_tracks_true=None, nodes_modes=None,
                             nodes_nodeids=None, nodes_treeids=None, nodes_truenodeids=None,
                             nodes_values=None, nodes_values_as_tensor=None,
                             post_transform="NONE"):
    X = as_batch(X)
    post_transform = post_transform_name(post_transform)
    labels = class_labels(classlabels_int64s, classlabels_strings)
    forest, lookup = legacy_forest(
        nodes_treeids, nodes_nodeids, nodes_featureids,
        pick(nodes_values, nodes_values_as_tensor, "nodes_values"), nodes_modes,
        nodes_truenodeids, nodes_falsenodeids, nodes_missing_value_tracks_true)
    weights = pick(class_weights, class_weights_as_tensor, "class_weights")
    ids = int_ids(class_ids)
    weights = np.zeros(0) if weights is None else weights
    n_classes = max(labels.size, int(ids.max(initial=-1)) + 1)
    leaf = leaf_positions(lookup, class_treeids, class_nodeids)
    pos = leaves(forest, X)
    dtype = np.float64 if class_weights_as_tensor is not None else np.float32
    score = aggregate(forest, pos, leaf, ids, weights, n_classes, "SUM", dtype)
    has = aggregate(forest, pos, leaf, ids, np.ones_like(weights), n_classes, "SUM") > 0
    base = pick(base_values, base_values_as_tensor, "base_values")
    base = np.zeros(0, dtype) if base is None else base.astype(dtype)
    if n_classes == 2:
        index, Z = _binary(score, has, base, post_transform,
                           binary_case=np.unique(ids).size == 1,
                           positive_weights=bool(np.all(weights >= 0)))
    else:
        if base.size:
            score = score + base.reshape(1, -1)
            has[:, :base.size] = True
        masked = np.where(has, score, -np.inf)
        index = np.argmax(masked, axis=1)
        Z = apply_post_transform(score, post_transform)
    return pick_labels(labels, index), Z.astype(np.float32)


def _binary(score, has, base, post_transform, binary_case, positive_weights):
    """onnxruntime's two-class rules: which columns carry a score, which label wins."""
    s0, s1 = score[:, 0], score[:, 1]
    h0, h1 = has[:, 0], has[:, 1]
    if base.size == 2:
        s1 = np.where(h1, base[1] + s0, s1 + base[1])  # onnxruntime: column 1 from column 0
        s0 = np.where(h1, -s1, s0 + base[0])
        one_column = np.zeros_like(h1)
    else:
        s0 = s0 + (base[0] if base.size == 1 else 0.0)
        one_column = ~h1
    probabilities = binary_case and positive_weights
    if binary_case:
        positive = np.where(h1, s1, np.where(h0 | one_column, s0, 0.0))
        index = (positive > (0.5 if probabilities else 0.0)).astype(np.int64)
    else:
        index = (np.where(h1, s1, -np.inf) > np.where(h0, s0, -np.inf)).astype(np.int64)
    two = apply_post_transform(np.stack([np.where(h0, s0, 0.0), np.where(h1, s1, 0.0)], axis=1),
                               post_transform)
    one = second_class(s0, post_transform, probabilities)
    return index, np.where(one_column[:, None], one, two)


@op("TreeEnsembleClassifier", 1, domain=ML_DOMAIN)
def tree_ensemble_classifier_v1(X, *, base_values=None, class_ids=None, class_nodeids=None,
                                class_treeids=None, class_weights=None,
                                classlabels_int64s=None, classlabels_strings=None,
                                nodes_falsenodeids=None, nodes_featureids=None,
                                nodes_hitrates=None, nodes_missing_value_tracks_true=None,
                                nodes_modes=None, nodes_nodeids=None, nodes_treeids=None,
                                nodes_truenodeids=None, nodes_values=None,
                                post_transform="NONE"):
    return tree_ensemble_classifier(
        X, base_values=base_values, class_ids=class_ids, class_nodeids=class_nodeids,
        class_treeids=class_treeids, class_weights=class_weights,
        classlabels_int64s=classlabels_int64s, classlabels_strings=classlabels_strings,
        nodes_falsenodeids=nodes_falsenodeids, nodes_featureids=nodes_featureids,
        nodes_hitrates=nodes_hitrates,
        nodes_missing_value_tracks_true=nodes_missing_value_tracks_true,
        nodes_modes=nodes_modes, nodes_nodeids=nodes_nodeids, nodes_treeids=nodes_treeids,
        nodes_truenodeids=nodes_truenodeids, nodes_values=nodes_values,
        post_transform=post_transform)
