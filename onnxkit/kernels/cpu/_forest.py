"""A tree ensemble node laid out once, at plan time, for the cpu walk (``_forest_walk``).

The reference kernels' own attribute readers (``onnxkit.ops.ml._tree_walk``) build the
node table; here it is compacted and numbered for the walk:

    nodes[i]       = (feature, true child, false child, mode | missing_true << 3)   int32
    thresholds[i]  = the split value                                                 float64
    a child c >= 0 is interior node c, c < 0 is leaf -1 - c; roots[t] likewise
    table[l, k]    = the summed (or min, max) weights leaf l votes for target / class k
    votes[l, k]    = 1 when leaf l votes for class k at all (classifiers)

``table`` is made with the reference's own ``np.add.at`` / ``minimum.at`` in float32, so
the walk adds exactly the numbers the reference adds, tree after tree. ``layout`` answers
None for what the walk does not cover (double weights, set membership, a cycle, values
the reference would reject): that node keeps the reference kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from onnxkit.errors import OnnxkitError
from onnxkit.kernels.cpu._buffers import read_only
from onnxkit.ops.ml import _tree_walk
from onnxkit.ops.ml._labels import class_labels
from onnxkit.ops.ml._post_transform import NAMES, post_transform_name

F32 = np.float32
REGRESSOR, CLASSIFIER, BINARY = range(3)  # params[0]: what the row's finish does
AVERAGE, SUM, MIN, MAX = range(4)  # params[1], TreeEnsemble's numbering
NO_LAYOUT = (OnnxkitError, ValueError, IndexError, TypeError, KeyError, OverflowError,
             MemoryError)


@dataclass(frozen=True)
class Layout:
    """The arrays the walk reads (all read-only), in its argument order (``arrays``), and
    what the call needs around it."""

    arrays: tuple        # nodes, thresholds, roots, table, votes, base, labels, params
    n_trees: int
    n_outputs: int       # columns of the scores
    max_feature: int     # the largest feature an interior node reads (-1: none)
    classifier: bool
    string_labels: np.ndarray | None  # labels picked in Python (object arrays)


def layout(op_type: str, attrs: dict) -> Layout | None:
    """The layout of a TreeEnsembleRegressor / TreeEnsembleClassifier / TreeEnsemble node
    with these attributes (every parameter of the reference kernel, defaults filled), or
    None when the reference kernel keeps the node."""
    build = {"TreeEnsembleRegressor": _regressor, "TreeEnsembleClassifier": _classifier,
             "TreeEnsemble": _ensemble}[op_type]
    try:
        return build(attrs)
    except NO_LAYOUT:  # the reference kernel raises it again, at run time, as it always has
        return None


def _legacy(a: dict):
    return _tree_walk.legacy_forest(
        a["nodes_treeids"], a["nodes_nodeids"], a["nodes_featureids"],
        _tree_walk.pick(a["nodes_values"], a.get("nodes_values_as_tensor"), "nodes_values"),
        a["nodes_modes"], a["nodes_truenodeids"], a["nodes_falsenodeids"],
        a["nodes_missing_value_tracks_true"])


def _regressor(a: dict) -> Layout | None:
    if a.get("target_weights_as_tensor") is not None:
        return None  # sums in float64
    forest, lookup = _legacy(a)
    weights = _tree_walk.pick(a["target_weights"], None, "target_weights")
    targets = _tree_walk.int_ids(a["target_ids"])
    weights = np.zeros(0) if weights is None else weights
    n_targets = a["n_targets"]
    if n_targets is None:
        n_targets = int(targets.max(initial=0)) + 1
    leaf = _tree_walk.leaf_positions(lookup, a["target_treeids"], a["target_nodeids"])
    how = _tree_walk.AGGREGATES.index(a["aggregate_function"]) if isinstance(
        a["aggregate_function"], str) else -1
    if how < 0:
        return None
    table = _table(forest, leaf, targets, weights, int(n_targets), how)
    base = _tree_walk.pick(a["base_values"], a.get("base_values_as_tensor"), "base_values")
    base = np.zeros(0, F32) if base is None else base.astype(F32)
    if base.size not in (0, 1, int(n_targets)):
        return None  # does not broadcast: the reference says so
    post = NAMES.index(post_transform_name(a["post_transform"]))
    return _made(forest, table, None, base, np.zeros(0, np.int64),
                 [REGRESSOR, how, post, 0, 0], classifier=False)


def _classifier(a: dict) -> Layout | None:
    if a.get("class_weights_as_tensor") is not None:
        return None  # sums in float64
    post = NAMES.index(post_transform_name(a["post_transform"]))
    labels = class_labels(a["classlabels_int64s"], a["classlabels_strings"])
    forest, lookup = _legacy(a)
    weights = _tree_walk.pick(a["class_weights"], None, "class_weights")
    ids = _tree_walk.int_ids(a["class_ids"])
    weights = np.zeros(0) if weights is None else weights
    n_classes = max(labels.size, int(ids.max(initial=-1)) + 1)
    if labels.size and labels.size < n_classes:
        return None  # a class without a label: the reference's pick raises, when it meets it
    leaf = _tree_walk.leaf_positions(lookup, a["class_treeids"], a["class_nodeids"])
    table = _table(forest, leaf, ids, weights, n_classes, SUM)
    votes = _table(forest, leaf, ids, np.ones_like(weights), n_classes, SUM, np.float64) > 0
    base = _tree_walk.pick(a["base_values"], a.get("base_values_as_tensor"), "base_values")
    base = np.zeros(0, F32) if base is None else base.astype(F32)
    if n_classes == 2:
        kind = BINARY
        # [one class id votes, and its weights are all >= 0: probabilities, 1 - s]
        one_id = np.unique(ids).size == 1
        flags = [int(one_id), int(one_id and bool(np.all(weights >= 0)))]
        if base.size > 2:  # the reference reads base[0] (size 1), both (size 2), else none
            base = np.zeros(0, F32)
    else:
        kind, flags = CLASSIFIER, [0, 0]
        if base.size not in (0, 1, n_classes):
            return None
    strings = labels if labels.dtype == object else None
    ints = np.zeros(0, np.int64) if strings is not None else labels.astype(np.int64)
    return _made(forest, table, votes, base, ints, [kind, SUM, post] + flags,
                 classifier=True, string_labels=strings)


def _ensemble(a: dict) -> Layout | None:
    from onnxkit.ops.ml.tree_ensemble import _forest  # the opset-5 node table, checked

    how = a["aggregate_function"]
    if not 0 <= how < len(_tree_walk.AGGREGATES):
        return None
    targets, weights = a["leaf_targetids"], a["leaf_weights"]
    args = (a["nodes_featureids"], a["nodes_splits"], a["nodes_modes"],
            a["nodes_truenodeids"], a["nodes_trueleafs"], a["nodes_falsenodeids"],
            a["nodes_falseleafs"], a["nodes_missing_value_tracks_true"],
            a["membership_values"], a["tree_roots"], len(targets))
    forest = _forest(*args)
    if forest.members:
        return None  # set membership: the numpy walk
    targets = np.asarray(targets, dtype=np.int64)
    n_targets = a["n_targets"]
    if n_targets is None:
        n_targets = int(targets.max(initial=0)) + 1
    n_nodes = len(a["nodes_featureids"])
    table = _table(forest, n_nodes + np.arange(targets.size), targets,
                   np.asarray(weights, dtype=np.float64).reshape(-1), int(n_targets), how)
    post = NAMES.index(post_transform_name(a["post_transform"]))
    return _made(forest, table, None, np.zeros(0, F32), np.zeros(0, np.int64),
                 [REGRESSOR, how, post, 0, 0], classifier=False)


def _table(forest, leaf, target, weight, n_targets: int, how: int, dtype=F32) -> np.ndarray:
    """[node positions, n_targets]: what ``_tree_walk.aggregate`` makes before its sums."""
    if target.size and (target.min() < 0 or target.max() >= n_targets):
        raise ValueError("a leaf names a target out of range")
    size = forest.is_leaf.size
    if how in (SUM, AVERAGE):
        table = np.zeros((size, n_targets), dtype=dtype)
        np.add.at(table, (leaf, target), np.asarray(weight, dtype=dtype))
        return table
    table = np.full((size, n_targets), np.inf if how == MIN else -np.inf, dtype=dtype)
    (np.minimum if how == MIN else np.maximum).at(table, (leaf, target), weight)
    return table


def _made(forest, table, votes, base, labels, params, classifier: bool,
          string_labels=None) -> Layout | None:
    """Compact the node table (interior nodes and leaves numbered apart) and freeze it."""
    is_leaf = forest.is_leaf
    inner, leaves = np.flatnonzero(~is_leaf), np.flatnonzero(is_leaf)
    if max(inner.size, leaves.size) >= 2 ** 31 or _has_cycle(forest, inner):
        return None  # the reference walk finds the cycle (or not) row by row
    code = np.empty(is_leaf.size, np.int64)
    code[inner] = np.arange(inner.size)
    code[leaves] = -1 - np.arange(leaves.size)
    feature = forest.feature[inner]
    if feature.size and feature.min() < 0:
        return None
    nodes = np.stack([feature, code[forest.true_next[inner]], code[forest.false_next[inner]],
                      forest.mode[inner].astype(np.int64)
                      | (forest.missing_true[inner].astype(np.int64) << 3)], axis=1)
    roots = code[forest.roots] if forest.roots.size else np.zeros(0, np.int64)
    n_out = table.shape[1]
    table = table[leaves].astype(F32)
    votes = (np.zeros((0, 0), np.uint8) if votes is None else votes[leaves].astype(np.uint8))
    arrays = (nodes.astype(np.int32), forest.threshold[inner].astype(np.float64),
              roots.astype(np.int32), table, votes, base.astype(F32), labels.astype(np.int64),
              np.asarray(params, np.int64))
    return Layout(tuple(read_only(np.ascontiguousarray(x)) for x in arrays), int(forest.roots.size), n_out,
                  int(feature.max(initial=-1)), classifier, string_labels)


def _has_cycle(forest, inner: np.ndarray) -> bool:
    """Whether an interior node is reachable from itself, starting at the roots: levels
    of reachable interior nodes, which run out within ``inner.size`` steps unless there
    is a cycle."""
    is_leaf = forest.is_leaf
    level = np.unique(forest.roots[~is_leaf[forest.roots]]) if forest.roots.size else inner[:0]
    for _ in range(inner.size + 1):
        if level.size == 0:
            return False
        nxt = np.concatenate([forest.true_next[level], forest.false_next[level]])
        level = np.unique(nxt[~is_leaf[nxt]])
    return True
