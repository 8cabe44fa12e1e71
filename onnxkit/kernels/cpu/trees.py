"""Tree ensembles on the ``cpu`` executor: the reference kernels, with a Numba walk and the
node table kept from run to run.

    walk: for each tree t, each row n (rows shared among the threads):
        p = root[t]
        while p is not a leaf:                      (at most as many steps as nodes)
            x = X[n, feature[p]]
            p = true_next[p] if compare(mode[p], x, threshold[p])
                                 or (x is NaN and missing_true[p]) else false_next[p]
        pos[n, t] = p
    sum:  out[n] += weights of leaf pos[n, t], for t = 0, 1, ... (the reference's order)

The reference walks every (row, tree) pair one level per numpy step; here each pair
walks alone in compiled code, tree by tree (a tree's nodes stay in cache while the
rows pass). The node table and the arrays the reference builds from the attributes on
every call are built once per node: each plan step gets its own ``_Acceleration``
(``prepare``), whose entries hold the attribute values the step hands over unchanged
run after run, found again by ``is``. Set membership (TreeEnsemble's
BRANCH_MEMBER) keeps the numpy walk. Everything else (attribute checks, aggregation,
post-transforms, labels) is the reference kernel's code (``onnxkit.ops.ml._tree_walk``,
``ACCELERATION``).
https://onnx.ai/onnx/operators/onnx_aionnxml_TreeEnsemble.html
"""

from __future__ import annotations

import functools
import inspect

import numpy as np
from numba import njit, prange

from onnxkit.errors import AttributeMismatchError
from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._buffers import read_only
from onnxkit.kernels.cpu._threads import split
from onnxkit.ops.ml import _tree_walk
from onnxkit.ops.registry import ML_DOMAIN, REFERENCE, op

LEQ, LT, GTE, GT, EQ, NEQ = (_tree_walk.LEQ, _tree_walk.LT, _tree_walk.GTE, _tree_walk.GT,
                             _tree_walk.EQ, _tree_walk.NEQ)
TREE_OPS = ("TreeEnsembleClassifier", "TreeEnsembleRegressor", "TreeEnsemble")
FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


@njit(cache=True, error_model="numpy")
def _walk_rows(X, is_leaf, feature, threshold, mode, true_next, false_next, missing_true,
               roots, pos, lo, hi):
    """Rows lo .. hi - 1; False when a walk took more steps than there are nodes (a cycle)."""
    limit = is_leaf.size
    for t in range(roots.size):  # tree by tree: its nodes stay in cache for every row
        for r in range(lo, hi):
            p = roots[t]
            steps = 0
            while not is_leaf[p]:
                x = X[r, feature[p]]
                th = threshold[p]
                m = mode[p]
                if m == LEQ:
                    go = x <= th
                elif m == LT:
                    go = x < th
                elif m == GTE:
                    go = x >= th
                elif m == GT:
                    go = x > th
                elif m == EQ:
                    go = x == th
                else:  # NEQ
                    go = x != th
                if not go and x != x and missing_true[p]:
                    go = True
                p = true_next[p] if go else false_next[p]
                steps += 1
                if steps > limit:
                    return False
            pos[r, t] = p
    return True


@njit(cache=True, parallel=True)
def walk_leaves(X, is_leaf, feature, threshold, mode, true_next, false_next, missing_true,
                roots, pos):
    """``pos[n, t]``: the leaf row n reaches in tree t; False on a cycle. Rows are shared
    among the threads (``split``: one thread for small work)."""
    rows = X.shape[0]
    parts, per = split(rows, rows * roots.size * 8)
    if parts == 1:
        return _walk_rows(X, is_leaf, feature, threshold, mode, true_next, false_next,
                          missing_true, roots, pos, parts - 1, rows)
    ok = np.ones(parts, np.bool_)
    for q in prange(parts):
        ok[q] = _walk_rows(X, is_leaf, feature, threshold, mode, true_next, false_next,
                           missing_true, roots, pos, q * per, min(rows, (q + 1) * per))
    return ok.all()


@njit(cache=True, error_model="numpy")
def _sum_rows(table, pos, out, lo, hi):
    for r in range(lo, hi):
        for t in range(pos.shape[1]):  # tree after tree: the reference's order of sums
            row = table[pos[r, t]]
            for k in range(out.shape[1]):
                out[r, k] += row[k]


@njit(cache=True, parallel=True)
def sum_leaves(table, pos, out):
    """``out[n] += table[pos[n, t]]`` for t = 0, 1, ...: each reached leaf's weights, rows
    shared among the threads."""
    rows = out.shape[0]
    parts, per = split(rows, pos.size * out.shape[1])
    if parts == 1:
        _sum_rows(table, pos, out, parts - 1, rows)
        return
    for q in prange(parts):
        _sum_rows(table, pos, out, q * per, min(rows, (q + 1) * per))


class _Acceleration:
    """What ``_tree_walk`` uses while one node's tree kernel runs (``ACCELERATION``)."""

    def __init__(self, max_entries: int = 64):
        # past this the memo starts again: a tree node keeps about eight entries (its node
        # table, leaf positions, attribute arrays: ~2.5 MB for 100 trees of ~470 nodes)
        self.max_entries = max_entries
        self._kept: list = []  # (objects, value)

    @staticmethod
    def walk(forest, X, pos) -> bool:
        """Fill ``pos``; False (nothing done) for modes past NEQ, left to numpy."""
        if forest.mode.size and int(forest.mode.max()) > NEQ:
            return False
        # float32 compares as it is; ints and float64 as float64, as numpy promotes them
        X = read_only(np.ascontiguousarray(X, dtype=np.float32 if X.dtype == np.float32
                                           else np.float64))
        arrays = (forest.is_leaf, forest.feature, forest.threshold, forest.mode,
                  forest.true_next, forest.false_next, forest.missing_true, forest.roots)
        kinds = (np.bool_, np.int64, np.float64, np.int8, np.int64, np.int64, np.bool_,
                 np.int64)
        arrays = tuple(read_only(np.ascontiguousarray(a, dtype=k)) for a, k in zip(arrays, kinds))
        if not walk_leaves(X, *arrays, pos):
            raise AttributeMismatchError("the trees contain a cycle (a node is its own ancestor)")
        return True

    @staticmethod
    def sum_leaves(table, pos, out) -> bool:
        if table.dtype not in FLOATS or out.dtype != table.dtype:
            return False
        sum_leaves(read_only(np.ascontiguousarray(table)),
                   read_only(np.ascontiguousarray(pos, dtype=np.int64)), out)
        return True

    def kept(self, objects: tuple, build):
        """``build()`` once per tuple of attribute objects (the step passes the same ones
        run after run; an entry holds them, and matches the very same objects only);
        arrays come back read-only."""
        for held, value in self._kept:
            if len(held) == len(objects) and all(a is b for a, b in zip(held, objects)):
                return value
        if len(self._kept) >= self.max_entries:
            self._kept.clear()
        value = build()
        if isinstance(value, np.ndarray):
            value = read_only(value)
        self._kept.append((objects, value))
        return value


class _Prepared:
    """A tree node's kernel on the plan: the reference kernel with the Numba walk and
    this node's own kept tables."""

    __slots__ = ("reference_fn", "acceleration", "op_type")

    def __init__(self, reference_fn, op_type: str):
        self.reference_fn, self.op_type = reference_fn, op_type
        self.acceleration = _Acceleration()

    def __call__(self, X, **attributes):
        token = _tree_walk.ACCELERATION.set(self.acceleration)
        try:
            return self.reference_fn(X, **attributes)
        finally:
            _tree_walk.ACCELERATION.reset(token)


def _accelerated(reference_fn, op_type: str):
    """``reference_fn`` run with the Numba walk; called outside a plan, nothing is kept
    from one call to the next. ``kernel.prepare`` gives a plan step its own kept tables."""

    @functools.wraps(reference_fn)
    def kernel(X, **attributes):
        return _Prepared(reference_fn, op_type)(X, **attributes)

    kernel.__signature__ = inspect.signature(reference_fn)
    kernel.prepare = lambda node, attrs, constants, shapes: _Prepared(reference_fn, op_type)
    return kernel


def _register() -> None:
    from onnxkit.ops.ml import (tree_ensemble, tree_ensemble_classifier,  # noqa: F401
                                tree_ensemble_regressor)

    for kernel in list(REFERENCE):
        if kernel.domain == ML_DOMAIN and kernel.op_type in TREE_OPS:
            op(kernel.op_type, kernel.since_version, domain=ML_DOMAIN, registry=CPU)(
                _accelerated(kernel.fn, kernel.op_type))


_register()
