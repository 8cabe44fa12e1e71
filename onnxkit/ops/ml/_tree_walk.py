"""Vectorized tree ensemble evaluation shared by TreeEnsemble and its legacy forms.

Every node of every tree gets one index in a flat table; a leaf is a node whose
``is_leaf`` is set. All (row, tree) pairs walk together, one level per step:

    pos[n, t] = root[t]
    while some pos[n, t] is not a leaf:
        x = X[n, feature[pos]]
        go_true = compare(mode[pos], x, threshold[pos]) or (isnan(x) and missing_true[pos])
        pos = go_true ? true_next[pos] : false_next[pos]

Then the payload of each reached leaf (weights per target) is aggregated over trees.
(The ``cpu`` executor lays its forests out once, at plan time: ``kernels.cpu._forest``.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from onnxkit.errors import AttributeMismatchError

LEQ, LT, GTE, GT, EQ, NEQ, MEMBER = range(7)
LEGACY_MODES = {"BRANCH_LEQ": LEQ, "BRANCH_LT": LT, "BRANCH_GTE": GTE, "BRANCH_GT": GT,
                "BRANCH_EQ": EQ, "BRANCH_NEQ": NEQ}
AGGREGATES = ("AVERAGE", "SUM", "MIN", "MAX")  # index = TreeEnsemble's enum



@dataclass
class Forest:
    """Flat node table: arrays indexed by node position."""

    is_leaf: np.ndarray          # bool
    feature: np.ndarray          # int64
    threshold: np.ndarray        # float64
    mode: np.ndarray             # int8, one of LEQ..MEMBER
    true_next: np.ndarray        # int64 positions
    false_next: np.ndarray
    missing_true: np.ndarray     # bool
    roots: np.ndarray            # int64 position of each tree's root
    members: dict = field(default_factory=dict)  # position -> allowed values (MEMBER)


def leaves(forest: Forest, X: np.ndarray) -> np.ndarray:
    """Position of the leaf each row reaches in each tree: int64 [N, n_trees]."""
    n_rows = X.shape[0]
    pos = np.broadcast_to(forest.roots, (n_rows, len(forest.roots))).copy()
    if n_rows == 0 or len(forest.roots) == 0:
        return pos
    read = forest.feature[~forest.is_leaf]
    if read.size and (read.max() >= X.shape[1] or read.min() < 0):
        raise AttributeMismatchError(
            f"the trees read features {int(read.min())}..{int(read.max())}, "
            f"the input has {X.shape[1]} features")
    rows, cols = np.nonzero(~forest.is_leaf[pos])
    single_mode = int(forest.mode[0]) if np.all(forest.mode == forest.mode[0]) else None
    steps = 0
    while rows.size:
        node = pos[rows, cols]
        x = X[rows, forest.feature[node]]
        go_true = _compare(forest, node, x, single_mode)
        nan = np.isnan(x)
        if nan.any():
            go_true |= nan & forest.missing_true[node]
        nxt = np.where(go_true, forest.true_next[node], forest.false_next[node])
        pos[rows, cols] = nxt
        keep = ~forest.is_leaf[nxt]
        rows, cols = rows[keep], cols[keep]
        steps += 1
        if steps > forest.is_leaf.size:
            raise AttributeMismatchError("the trees contain a cycle (a node is its own ancestor)")
    return pos


def _compare(forest: Forest, node: np.ndarray, x: np.ndarray, single_mode) -> np.ndarray:
    th = forest.threshold[node]
    if single_mode == LEQ:
        return x <= th
    mode = forest.mode[node]
    result = np.select(
        [mode == LEQ, mode == LT, mode == GTE, mode == GT, mode == EQ, mode == NEQ],
        [x <= th, x < th, x >= th, x > th, x == th, x != th], default=False)
    for position, values in forest.members.items():
        at = node == position
        if at.any():
            result[at] = np.isin(x[at], values)
    return result


def aggregate(forest: Forest, pos: np.ndarray, leaf: np.ndarray, target: np.ndarray,
              weight: np.ndarray, n_targets: int, how: str, dtype=np.float64) -> np.ndarray:
    """Combine the weights (``leaf`` position, ``target``, ``weight`` triples) of the
    reached leaves over trees: SUM, AVERAGE (sum / n_trees), MIN or MAX -> [N, K].

    Sums run tree after tree in ``dtype`` (float32 for float attributes, as onnxruntime
    does, so that near-ties between classes break the same way).
    """
    n_rows, n_trees = pos.shape
    if how not in AGGREGATES:
        raise AttributeMismatchError(f"aggregate_function={how!r} is not one of {AGGREGATES}")
    if target.size and (target.min() < 0 or target.max() >= n_targets):
        raise AttributeMismatchError(
            f"a leaf names target/class {int(target.max())}, but there are {n_targets}")
    size = forest.is_leaf.size
    if how in ("SUM", "AVERAGE"):
        table = np.zeros((size, n_targets), dtype=dtype)
        np.add.at(table, (leaf, target), np.asarray(weight, dtype=dtype))
        out = np.zeros((n_rows, n_targets), dtype=dtype)
        for t in range(n_trees):
            out += table[pos[:, t]]
        return out / dtype(n_trees) if how == "AVERAGE" and n_trees else out
    fill = np.inf if how == "MIN" else -np.inf
    table = np.full((size, n_targets), fill, dtype=dtype)
    (np.minimum if how == "MIN" else np.maximum).at(table, (leaf, target), weight)
    reduce = np.minimum if how == "MIN" else np.maximum
    out = np.full((n_rows, n_targets), fill, dtype=dtype)
    for t in range(n_trees):
        out = reduce(out, table[pos[:, t]])
    return np.where(out == fill, dtype(0), out)


def pick(floats, as_tensor, name):
    """The float attribute or its double ``_as_tensor`` twin (not both)."""
    if floats is not None and as_tensor is not None:
        raise AttributeMismatchError(f"set {name} or {name}_as_tensor, not both")
    if as_tensor is not None:
        return np.asarray(as_tensor, dtype=np.float64).reshape(-1)
    return None if floats is None else np.asarray(floats, dtype=np.float32).astype(np.float64)


def int_ids(values) -> np.ndarray:
    """An optional INTS attribute as an int64 array (empty when absent)."""
    return np.asarray([] if values is None else values, dtype=np.int64)


def leaf_positions(lookup: "_NodeLookup", treeids, nodeids) -> np.ndarray:
    """Positions of the (tree id, node id) leaves the ``*_treeids`` / ``*_nodeids``
    attributes name."""
    return lookup.find(int_ids(treeids), int_ids(nodeids))


def legacy_forest(treeids, nodeids, featureids, values, modes, truenodeids, falsenodeids,
                  missing_tracks_true) -> tuple[Forest, "_NodeLookup"]:
    """Forest from the ``nodes_*`` attributes of TreeEnsembleClassifier/Regressor.

    Nodes are named (tree id, node id); returns the forest and a function-like lookup
    table from (tree id, node id) keys to positions.
    """
    treeids = np.asarray(treeids, dtype=np.int64)
    nodeids = np.asarray(nodeids, dtype=np.int64)
    n = treeids.size
    for name, seq in (("nodes_featureids", featureids), ("nodes_modes", modes),
                      ("nodes_truenodeids", truenodeids), ("nodes_falsenodeids", falsenodeids),
                      ("nodes_values", values)):
        if seq is None or len(seq) != n:
            raise AttributeMismatchError(
                f"{name} has {0 if seq is None else len(seq)} entries, nodes_treeids has {n}")
    unknown = sorted(set(modes) - set(LEGACY_MODES) - {"LEAF"})
    if unknown:
        raise AttributeMismatchError(f"unknown node mode(s) {unknown}; expected "
                                     f"{', '.join(LEGACY_MODES)} or LEAF")
    lookup = _NodeLookup(treeids, nodeids)
    is_leaf = np.array([m == "LEAF" for m in modes], dtype=bool)
    mode = np.array([LEGACY_MODES.get(m, LEQ) for m in modes], dtype=np.int8)
    true_next = np.where(is_leaf, np.arange(n), lookup.find(treeids, truenodeids, is_leaf))
    false_next = np.where(is_leaf, np.arange(n), lookup.find(treeids, falsenodeids, is_leaf))
    missing = np.zeros(n, dtype=bool)
    if missing_tracks_true is not None and len(missing_tracks_true):
        missing = np.asarray(missing_tracks_true, dtype=np.int64) != 0
    tree_order, first = np.unique(treeids, return_index=True)
    # the root of a tree is its node 0, or else the first node listed for it
    zero = lookup.find(tree_order, np.zeros_like(tree_order), None, missing_ok=True)
    roots = np.where(zero >= 0, zero, first)
    forest = Forest(is_leaf, np.asarray(featureids, dtype=np.int64),
                    np.asarray(values, dtype=np.float64), mode, true_next, false_next,
                    missing, roots.astype(np.int64))
    return forest, lookup


class _NodeLookup:
    """(tree id, node id) -> position in the node table, vectorized with searchsorted."""

    def __init__(self, treeids: np.ndarray, nodeids: np.ndarray):
        self.keys = np.stack([treeids, nodeids], axis=1)
        order = np.lexsort((nodeids, treeids))
        self.order = order
        self.sorted_tree = treeids[order]
        self.sorted_node = nodeids[order]
        self.span = int(nodeids.max(initial=0)) + 1
        combined = self.sorted_tree * self.span + self.sorted_node
        if np.any(np.diff(combined) == 0):
            raise AttributeMismatchError("a (tree id, node id) pair appears twice in nodes_*")
        self.combined = combined

    def find(self, treeids, nodeids, skip=None, missing_ok=False) -> np.ndarray:
        treeids = np.asarray(treeids, dtype=np.int64)
        nodeids = np.asarray(nodeids, dtype=np.int64)
        want = treeids * self.span + nodeids
        at = np.searchsorted(self.combined, want)
        at_clipped = np.minimum(at, max(self.combined.size - 1, 0))
        found = (at < self.combined.size) & (nodeids < self.span) & (nodeids >= 0)
        if self.combined.size:
            found &= self.combined[at_clipped] == want
        if skip is not None:
            found |= skip
        if not found.all():
            if missing_ok:
                return np.where(found, self.order[at_clipped] if self.order.size else -1, -1)
            bad = int(np.argmin(found))
            raise AttributeMismatchError(
                f"tree {int(treeids[bad])} refers to node {int(nodeids[bad])}, which is not in nodes_nodeids")
        return self.order[at_clipped] if self.order.size else at_clipped
