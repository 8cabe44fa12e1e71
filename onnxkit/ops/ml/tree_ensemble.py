"""TreeEnsemble (ml opset 5): the unified tree ensemble, interior nodes and leaves apart.

    for each row n, tree t: walk from tree_roots[t]; at interior node i
        go_true = mode_i(X[n, nodes_featureids[i]], nodes_splits[i])
                  or (isnan(x) and nodes_missing_value_tracks_true[i])
        next = nodes_true/falsenodeids[i], a leaf when nodes_true/falseleafs[i]
    Y[n, k] = aggregate_t(leaf_weights of reached leaves with leaf_targetids == k)
    Y = post_transform(Y)

post_transform: 0 NONE, 1 SOFTMAX, 2 LOGISTIC, 3 SOFTMAX_ZERO, 4 PROBIT, as the spec
numbers them (onnxruntime 1.31 reads 1 as LOGISTIC and 2 as SOFTMAX).
Modes: 0 LEQ, 1 LT, 2 GTE, 3 GT, 4 EQ, 5 NEQ, 6 MEMBER (x in the node's run of
``membership_values``, runs separated by NaN). Aggregates: 0 AVERAGE, 1 SUM, 2 MIN, 3 MAX.
https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsemble.html
"""

import numpy as np

from onnxkit.errors import AttributeMismatchError
from onnxkit.ops.ml._post_transform import apply_post_transform
from onnxkit.ops.ml._tree_walk import AGGREGATES, MEMBER, Forest, aggregate, leaves
from onnxkit.ops.registry import ML_DOMAIN, op


@op("TreeEnsemble", 5, domain=ML_DOMAIN)
def tree_ensemble(X, *, aggregate_function=1, leaf_targetids, leaf_weights, membership_values=None,
                  n_targets=None, nodes_falseleafs, nodes_falsenodeids, nodes_featureids,
                  nodes_hitrates=None, nodes_missing_value_tracks_true=None, nodes_modes,
                  nodes_splits, nodes_trueleafs, nodes_truenodeids, post_transform=0,
                  tree_roots):
    if not 0 <= aggregate_function < len(AGGREGATES):
        raise AttributeMismatchError(f"aggregate_function={aggregate_function} is not one of 0..3")
    args = (nodes_featureids, nodes_splits, nodes_modes, nodes_truenodeids, nodes_trueleafs,
            nodes_falsenodeids, nodes_falseleafs, nodes_missing_value_tracks_true,
            membership_values, tree_roots, len(leaf_targetids))
    forest = _forest(*args)
    batch = X.reshape(1, -1) if X.ndim == 1 else X
    pos = leaves(forest, batch.astype(np.float64))
    n_nodes = len(nodes_featureids)
    targets = np.asarray(leaf_targetids, dtype=np.int64)
    if n_targets is None:
        n_targets = int(targets.max(initial=0)) + 1
    scores = aggregate(forest, pos, n_nodes + np.arange(targets.size), targets,
                       np.asarray(leaf_weights, dtype=np.float64).reshape(-1), n_targets,
                       AGGREGATES[aggregate_function],
                       np.float64 if X.dtype == np.float64 else np.float32)
    return apply_post_transform(scores, post_transform).astype(X.dtype)


def _forest(featureids, splits, modes, truenodeids, trueleafs, falsenodeids, falseleafs,
            missing, membership, roots, n_leaves) -> Forest:
    """Positions 0..n_nodes-1 are interior nodes, n_nodes.. are leaves."""
    n = len(featureids)
    modes = np.asarray(modes).reshape(-1).astype(np.int8)
    for name, seq in (("nodes_splits", np.asarray(splits).reshape(-1)), ("nodes_modes", modes),
                      ("nodes_truenodeids", truenodeids), ("nodes_trueleafs", trueleafs),
                      ("nodes_falsenodeids", falsenodeids), ("nodes_falseleafs", falseleafs)):
        if len(seq) != n:
            raise AttributeMismatchError(f"{name} has {len(seq)} entries, nodes_featureids has {n}")
    if np.any((modes < 0) | (modes > MEMBER)):
        raise AttributeMismatchError("nodes_modes holds a value outside 0..6")

    def target(ids, is_leaf):
        ids = np.asarray(ids, dtype=np.int64)
        is_leaf = np.asarray(is_leaf, dtype=np.int64) != 0
        bound = np.where(is_leaf, n_leaves, n)
        if np.any((ids < 0) | (ids >= bound)):
            raise AttributeMismatchError("a node points at a node or leaf index out of range")
        return np.where(is_leaf, n + ids, ids)

    pad = np.zeros(n_leaves, dtype=np.int64)
    missing_true = np.zeros(n, dtype=bool)
    if missing is not None and len(missing):
        missing_true = np.asarray(missing, dtype=np.int64) != 0
    forest = Forest(
        is_leaf=np.concatenate([np.zeros(n, dtype=bool), np.ones(n_leaves, dtype=bool)]),
        feature=np.concatenate([np.asarray(featureids, dtype=np.int64), pad]),
        threshold=np.concatenate([np.asarray(splits, dtype=np.float64).reshape(-1), pad]),
        mode=np.concatenate([modes, pad.astype(np.int8)]),
        true_next=np.concatenate([target(truenodeids, trueleafs), pad]),
        false_next=np.concatenate([target(falsenodeids, falseleafs), pad]),
        missing_true=np.concatenate([missing_true, pad.astype(bool)]),
        roots=np.asarray(roots, dtype=np.int64),
        members=_members(modes, membership))
    return forest


def _members(modes: np.ndarray, membership) -> dict:
    """MEMBER node i -> its values: the runs of ``membership_values`` between NaNs, in order."""
    member_nodes = np.flatnonzero(modes == MEMBER)
    if member_nodes.size == 0:
        return {}
    if membership is None:
        raise AttributeMismatchError("nodes_modes uses MEMBER (6) but membership_values is missing")
    values = np.asarray(membership, dtype=np.float64).reshape(-1)
    runs = np.split(values, np.flatnonzero(np.isnan(values)))
    runs = [r[~np.isnan(r)] for r in runs][:member_nodes.size]
    if len(runs) < member_nodes.size:
        raise AttributeMismatchError(
            f"{member_nodes.size} MEMBER nodes but membership_values holds {len(runs)} sets")
    return dict(zip(member_nodes.tolist(), runs))
