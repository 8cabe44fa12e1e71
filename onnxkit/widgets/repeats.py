"""Scopes for a graph whose node names give none: runs of the same op sequence, repeated.

Exporters write a model layer by layer, so a model's layers are tandem repeats of its op
types in graph order (``LN A B C A B C LN A B C A B C``). ``structural_scopes`` finds them:

    1. candidate lengths: the distances between consecutive nodes of one op type
    2. per length L, windows whose op sequence equals the next window's, chained into runs
       (leftmost first), compared through a rolling hash of the op sequence
    3. the longest L among those covering at least half as many nodes as the best one;
       each window of a run is a scope ``run<j>.<k>``, searched again inside for smaller runs

``blocks.find_blocks`` then keeps the windows whose wiring is alike too (their signature).
"""

from __future__ import annotations

from collections import Counter

MIN_LENGTH = 3
MAX_CANDIDATES = 8
MAX_DEPTH = 3
_MOD = (1 << 61) - 1
_BASE = 1_000_003


def structural_scopes(labels: list[str], ids: list[str], prefix: str = "",
                      depth: int = 0) -> dict[str, list[str]]:
    """Box id -> its scopes, outermost first, for the nodes (``labels``: op types in graph
    order) that fall in a repeated run; nodes outside every run are left out."""
    out: dict[str, list[str]] = {}
    length, runs = best_runs(labels)
    if not runs or depth >= MAX_DEPTH:
        return out
    for j, (start, count) in enumerate(runs):
        for k in range(count):
            scope = f"{prefix}run{j}.{k}" if not prefix else f"{prefix}/run{j}.{k}"
            lo, hi = start + k * length, start + (k + 1) * length
            for box_id in ids[lo:hi]:
                out[box_id] = [scope]
            inner = structural_scopes(labels[lo:hi], ids[lo:hi], scope, depth + 1)
            for box_id, scopes in inner.items():
                out[box_id] = [scope] + scopes
    return out


def best_runs(labels: list[str]) -> tuple[int, list[tuple[int, int]]]:
    """(window length, [(start, windows)]) of the repeats chosen by the rule above."""
    n = len(labels)
    found = []
    for length in candidate_lengths(labels):
        runs = tandem_runs(labels, length)
        covered = sum(count * length for _, count in runs)
        if covered:
            found.append((covered, length, runs))
    if not found:
        return 0, []
    best = max(c for c, _, _ in found)
    covered, length, runs = max((f for f in found if 2 * f[0] >= best), key=lambda f: (f[1], f[0]))
    return (length, runs) if covered * 10 >= n else (0, [])


def candidate_lengths(labels: list[str]) -> list[int]:
    last: dict[str, int] = {}
    gaps: Counter = Counter()
    for i, label in enumerate(labels):
        if label in last and i - last[label] >= MIN_LENGTH and 2 * (i - last[label]) <= len(labels):
            gaps[i - last[label]] += 1
        last[label] = i
    return sorted(g for g, _ in gaps.most_common(MAX_CANDIDATES))


def tandem_runs(labels: list[str], length: int) -> list[tuple[int, int]]:
    """Maximal runs of >= 2 equal consecutive windows of ``length`` ops, leftmost first."""
    codes: dict[str, int] = {}
    seq = [codes.setdefault(x, len(codes) + 1) for x in labels]
    n = len(seq)
    if 2 * length > n:
        return []
    power = pow(_BASE, length, _MOD)
    keys, h = [], 0
    for i, c in enumerate(seq):  # keys[i]: hash of seq[i:i+length]
        h = (h * _BASE + c) % _MOD
        if i >= length:
            h = (h - seq[i - length] * power) % _MOD
        if i >= length - 1:
            keys.append(h)
    runs, i = [], 0
    while i + 2 * length <= n:
        count = 1
        while (i + (count + 1) * length <= n and keys[i + count * length] == keys[i]
               and seq[i + count * length:i + (count + 1) * length] == seq[i:i + length]):
            count += 1
        if count >= 2:
            runs.append((i, count))
            i += count * length
        else:
            i += 1
    return runs
