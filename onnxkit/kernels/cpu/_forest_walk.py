"""The cpu tree-ensemble kernel: every tree for a block of rows, aggregated in the same
pass, then each row's finish (base values, post_transform, the classifier's label).

    for each block of rows in [lo, hi):
        for the (row r, tree t) pairs of the block, tree after tree, four at a time:
            p = roots[t]                    (the four walks interleaved)
            while p >= 0:                   (interior node; p < 0 is leaf -1 - p)
                x = X[r, feature[p]]
                go = compare(mode[p], x, threshold[p]) or (x is NaN and missing_true[p])
                p = true[p] if go else false[p]          (an index, not a branch)
            acc[r] = acc[r] + table[leaf]   (or min / max; has[r] |= votes[leaf])
        finish every row of the block into Z[r] (and Y[r])

The walks do not branch on the comparisons (on new rows they go either way, and a
mispredicted branch costs more than a step), and four walks share the wait for their
loads. (Rows that come back run after run are the exception: a branch predictor learns
their paths.)

Sums run tree after tree in float32, as the reference's and onnxruntime's do; the
post-transforms compute in float64 (PROBIT and the binary classifier's one-column rules
in float32) as ``onnxkit.ops.ml._post_transform`` and ``_labels`` do. ``X`` is float32,
compared with float64 thresholds. Rows are independent: ``run_parts`` shares them among
threads and the answer does not depend on how many there are.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from onnxkit.kernels.cpu._forest import AVERAGE, CLASSIFIER, MAX, MIN, REGRESSOR, SUM

LEQ, LT, GTE, GT, EQ = range(5)  # then NEQ (onnxkit.ops.ml._tree_walk's numbering)
NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO, PROBIT = range(5)
BLOCK = 64  # rows whose sums stay in a scratch block while every tree passes
LANES = 4  # (row, tree) walks at once: one's loads wait while the others' run
F32 = np.float32
ONE, TWO, HALF = np.float32(1.0), np.float32(2.0), np.float32(0.5)
ERF_A, PI, SQRT2 = np.float32(0.147), np.float32(np.pi), np.float32(1.41421356)


@njit(cache=True, nogil=True, error_model="numpy")
def forest_rows(X, nodes, thresholds, roots, table, votes, base, labels, params, Z, Y,
                lo, hi):
    """Rows lo .. hi - 1 of ``Z`` (scores after post_transform) and ``Y`` (labels)."""
    kind, how, post = params[0], params[1], params[2]
    n = table.shape[1]
    n_trees = roots.size
    voting = kind != REGRESSOR
    fill = F32(np.inf) if how == MIN else (F32(-np.inf) if how == MAX else F32(0.0))
    acc = np.empty((BLOCK, n), F32)
    has = np.empty((BLOCK, n), np.uint8)
    row = np.empty(n, np.float64)
    for start in range(lo, hi, BLOCK):
        stop = min(hi, start + BLOCK)
        for i in range(stop - start):
            for k in range(n):
                acc[i, k] = fill
                has[i, k] = 0
        rows = stop - start
        i3, t3 = rows - 1, -1  # (row, tree) pairs tree after tree, four walking at once
        for j in range(0, n_trees * rows, LANES):
            lanes = min(LANES, n_trees * rows - j)
            i0, t0 = _next_pair(i3, t3, rows)
            i1, t1 = _next_pair(i0, t0, rows)
            i2, t2 = _next_pair(i1, t1, rows)
            i3, t3 = _next_pair(i2, t2, rows)
            p0 = roots[t0]
            p1 = roots[t1] if lanes > 1 else -1
            p2 = roots[t2] if lanes > 2 else -1
            p3 = roots[t3] if lanes > 3 else -1
            while (p0 & p1 & p2 & p3) >= 0:  # one of them is not at a leaf yet
                if p0 >= 0:
                    p0 = _step(X, start + i0, nodes, thresholds, p0)
                if p1 >= 0:
                    p1 = _step(X, start + i1, nodes, thresholds, p1)
                if p2 >= 0:
                    p2 = _step(X, start + i2, nodes, thresholds, p2)
                if p3 >= 0:
                    p3 = _step(X, start + i3, nodes, thresholds, p3)
            _gather(acc[i0], has[i0], table, votes, -1 - p0, how, voting)
            if lanes > 1:  # each row's leaves in tree order: the sums' order
                _gather(acc[i1], has[i1], table, votes, -1 - p1, how, voting)
            if lanes > 2:
                _gather(acc[i2], has[i2], table, votes, -1 - p2, how, voting)
            if lanes > 3:
                _gather(acc[i3], has[i3], table, votes, -1 - p3, how, voting)
        for r in range(start, stop):
            i = r - start
            z = Z[r]
            one_column = False
            if kind == REGRESSOR:  # ``aggregate``'s ending, then the base values
                for k in range(n):
                    s = acc[i, k]
                    if how == AVERAGE and n_trees:
                        s = s / F32(n_trees)
                    elif (how == MIN or how == MAX) and s == fill:
                        s = F32(0.0)
                    if base.size:
                        s = s + base[0 if base.size == 1 else k]
                    row[k] = s
            elif kind == CLASSIFIER:  # the top class voted for (or with a base value)
                best, best_v = 0, F32(0.0)
                for k in range(n):
                    s = acc[i, k]
                    voted = has[i, k] != 0
                    if base.size:
                        s = s + base[0 if base.size == 1 else k]
                        voted = voted or k < base.size
                    row[k] = s
                    v = s if voted else F32(-np.inf)
                    if k == 0 or (best_v == best_v and (v != v or v > best_v)):
                        best, best_v = k, v  # as np.argmax: the first NaN wins
                Y[r] = best
            else:  # two classes: ``tree_ensemble_classifier._binary`` (onnxruntime's rules)
                s0, s1 = acc[i, 0], acc[i, 1]
                h0, h1 = has[i, 0] != 0, has[i, 1] != 0
                if base.size == 2:
                    s1 = base[1] + s0 if h1 else s1 + base[1]
                    s0 = -s1 if h1 else s0 + base[0]
                else:
                    s0 = s0 + (base[0] if base.size == 1 else F32(0.0))
                    one_column = not h1
                if params[3]:  # one class id votes: s is that class's score
                    positive = s1 if h1 else (s0 if h0 or one_column else F32(0.0))
                    Y[r] = 1 if positive > (HALF if params[4] else F32(0.0)) else 0
                else:
                    Y[r] = 1 if (s1 if h1 else F32(-np.inf)) > (s0 if h0 else F32(-np.inf)) else 0
                row[0] = s0 if h0 or one_column else F32(0.0)
                row[1] = s1 if h1 else F32(0.0)
            if voting and labels.size:
                Y[r] = labels[Y[r]]
            if one_column:  # ``_labels.second_class``, in float32
                s0 = F32(row[0])
                if post == PROBIT:
                    z[0], z[1] = _probit(s0), F32(0.0)
                elif params[4]:
                    q = _logistic32(s0) if post == LOGISTIC else s0
                    z[0], z[1] = ONE - q, q
                elif post == LOGISTIC:
                    z[0], z[1] = _logistic32(-s0), _logistic32(s0)
                else:
                    z[0], z[1] = -s0, s0
            elif post == NONE:  # post_transform in float64 (PROBIT in float32)
                for k in range(n):
                    z[k] = row[k]
            elif post == LOGISTIC:
                for k in range(n):
                    e = math.exp(-abs(row[k]))
                    z[k] = 1.0 / (1.0 + e) if row[k] >= 0 else e / (1.0 + e)
            elif post == PROBIT:
                for k in range(n):
                    z[k] = _probit(F32(row[k]))
            else:  # SOFTMAX, SOFTMAX_ZERO: the row's max (NaN wins), exp, divide by the sum
                top = row[0]
                for k in range(1, n):
                    if top == top and (row[k] != row[k] or row[k] > top):
                        top = row[k]
                total = 0.0
                for k in range(n):
                    if post == SOFTMAX_ZERO and not abs(row[k]) > 1e-7:
                        row[k] = 0.0
                    else:
                        row[k] = math.exp(row[k] - top)
                    total += row[k]
                for k in range(n):
                    z[k] = row[k] / total if post == SOFTMAX or total != 0 else 0.0


@njit(nogil=True, error_model="numpy", inline="always")
def _next_pair(i, t, rows):
    """The (row, tree) pair after (i, t), rows of a tree first."""
    return (0, t + 1) if i + 1 == rows else (i + 1, t)


@njit(nogil=True, error_model="numpy", inline="always")
def _step(X, r, nodes, thresholds, p):
    """The node (p >= 0) or leaf (-1 - p) row r goes to from interior node p."""
    x = X[r, nodes[p, 0]]
    th = thresholds[p]
    flags = nodes[p, 3]
    m = flags & 7
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
    go = go | ((flags >= 8) & (x != x))  # no branch on the answer: it is a coin toss
    return nodes[p, 2 - np.int64(go)]


@njit(nogil=True, error_model="numpy", inline="always")
def _gather(acc, has, table, votes, leaf, how, voting):
    """acc = acc + the leaf's weights (or min / max); has |= the leaf's votes."""
    for k in range(acc.size):
        v = table[leaf, k]
        a = acc[k]
        if how == SUM or how == AVERAGE:
            acc[k] = a + v
        elif a == a and (v != v or (v < a if how == MIN else v > a)):
            acc[k] = v  # np.minimum / np.maximum: a NaN on either side wins
        if voting:
            has[k] |= votes[leaf, k]


@njit(nogil=True, error_model="numpy")
def _logistic32(s):
    e = np.float32(math.exp(-abs(s)))
    return ONE / (ONE + e) if s >= 0 else e / (ONE + e)


@njit(nogil=True, error_model="numpy")
def _probit(s):
    """sqrt(2) * erfinv(2 s - 1), Winitzki's approximation in float32 (as onnxruntime)."""
    x = TWO * s - ONE
    sign = F32(-1.0) if x < 0 else ONE
    log = np.float32(math.log((ONE - x) * (ONE + x)))
    v = TWO / (PI * ERF_A) + HALF * log
    return SQRT2 * (sign * np.float32(math.sqrt(-v + np.float32(math.sqrt(v * v - log / ERF_A)))))
