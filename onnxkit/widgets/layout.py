"""Layered ("Sugiyama") layout of a DAG, in plain Python, deterministic.

    1. layers: longest path from the sources; a source (graph input, Constant) is then
       pulled down to sit just above its first reader
    2. an edge spanning k layers gets k-1 dummy points, so it can bend around boxes
    3. order within layers: barycenter sweeps down and up, keeping the order with the
       fewest crossings seen
    4. x: each box wants the mean x of its neighbours; the closest positions that keep
       boxes apart are found exactly (isotonic regression, pool-adjacent-violators)
    5. y: layers stacked top to bottom; edges leave a box's bottom and enter the top

Ties are broken by the order boxes and edges were given in, never by hashing.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

H_GAP = 24.0
V_GAP = 44.0
DUMMY_WIDTH = 8.0
MARGIN = 12.0


@dataclass
class Layout:
    positions: dict[str, tuple[float, float]]  # box id -> top-left corner
    sizes: dict[str, tuple[float, float]]
    routes: list[list[tuple[float, float]]]  # per edge: points from source bottom to target top
    width: float
    height: float


def layered_layout(boxes: list[tuple[str, float, float]], edges: list[tuple[str, str]],
                   *, sweeps: int = 8, ports: list[tuple[int, int]] | None = None) -> Layout:
    """Lay out ``boxes`` (id, width, height) joined by ``edges`` (source id, target id).

    ``ports`` optionally gives, per edge, (output index at the source, number of outputs):
    edges carrying different outputs of one node leave it at different points.
    """
    ids = [b[0] for b in boxes]
    index = {b: i for i, b in enumerate(ids)}
    width = [float(b[1]) for b in boxes]
    height = [float(b[2]) for b in boxes]
    n = len(ids)
    pairs = [(index[s], index[t]) for s, t in edges]
    succ: list[list[int]] = [[] for _ in range(n)]
    pred: list[list[int]] = [[] for _ in range(n)]
    for s, t in pairs:
        if s != t and t not in succ[s]:
            succ[s].append(t)
            pred[t].append(s)

    order = _topological(n, pred, succ)
    layer = _layers(order, pred, succ)

    # dummy points on long edges
    chains: list[list[int]] = []
    up: list[list[int]] = [list(p) for p in pred]  # neighbours used by the ordering steps
    down: list[list[int]] = [list(s) for s in succ]
    for s, t in pairs:
        a, b = (s, t) if layer[s] < layer[t] else (t, s)
        chain = [a]
        for lv in range(layer[a] + 1, layer[b]):
            d = len(width)
            width.append(DUMMY_WIDTH)
            height.append(0.0)
            layer.append(lv)
            up.append([])
            down.append([])
            chain.append(d)
        chain.append(b)
        if len(chain) > 2:  # replace the long link by the chain of short ones
            if b in down[a]:
                down[a].remove(b)
                up[b].remove(a)
            for u, v in zip(chain, chain[1:]):
                down[u].append(v)
                up[v].append(u)
        chains.append(chain if layer[s] < layer[t] else chain[::-1])
    total = len(width)

    rows = _initial_rows(total, layer, order)
    if total > 20_000:  # huge drawings (dense skip connections): fewer, still useful, sweeps
        sweeps = min(sweeps, 2)
    rows = _reduce_crossings(rows, up, down, sweeps)
    xs = _assign_x(rows, width, up, down, rounds=2 if total > 20_000 else 4)
    ys, row_heights = _assign_y(rows, height)

    left = min((xs[v] - width[v] / 2 for v in range(total)), default=0.0)
    shift = MARGIN - left
    positions, sizes = {}, {}
    for v in range(n):
        cy = ys[layer[v]] + (row_heights[layer[v]] - height[v]) / 2
        positions[ids[v]] = (round(xs[v] + shift - width[v] / 2, 1), round(cy, 1))
        sizes[ids[v]] = (width[v], height[v])

    in_edges: dict[int, list[int]] = {}
    for e, chain in enumerate(chains):
        in_edges.setdefault(chain[-1], []).append(e)
    routes = []
    for e, chain in enumerate(chains):
        s, t = chain[0], chain[-1]
        out_port, n_ports = ports[e] if ports is not None else (0, 1)
        sx = xs[s] + shift - width[s] / 2 + width[s] * (out_port + 1) / (max(n_ports, 1) + 1)
        sy = ys[layer[s]] + (row_heights[layer[s]] + height[s]) / 2
        points = [(sx, sy)]
        for d in chain[1:-1]:
            points.append((xs[d] + shift, ys[layer[d]] + row_heights[layer[d]] / 2))
        # spread the edges entering one box over its top side, ordered by where they come from
        entering = sorted(in_edges[t], key=lambda k: (_arrival_x(chains[k], xs), k))
        slot = entering.index(e)
        tx = xs[t] + shift - width[t] / 2 + width[t] * (slot + 1) / (len(entering) + 1)
        ty = ys[layer[t]] + (row_heights[layer[t]] - height[t]) / 2
        points.append((tx, ty))
        routes.append([(round(x, 1), round(y, 1)) for x, y in points])

    right = max((xs[v] + shift + width[v] / 2 for v in range(total)), default=0.0)
    bottom = (ys[-1] + row_heights[-1]) if ys else 0.0
    return Layout(positions, sizes, routes, round(right + MARGIN, 1), round(bottom + MARGIN, 1))


def _arrival_x(chain: list[int], xs: list[float]) -> float:
    return xs[chain[-2]] if len(chain) >= 2 else 0.0


def _topological(n: int, pred: list[list[int]], succ: list[list[int]]) -> list[int]:
    """Kahn's algorithm, lowest index first; a cycle (invalid model) is broken at its lowest index."""
    remaining = [len(p) for p in pred]
    done = [False] * n
    order: list[int] = []
    ready = [v for v in range(n) if remaining[v] == 0]
    heapq.heapify(ready)
    while len(order) < n:
        if not ready:
            ready = [min(v for v in range(n) if not done[v])]
        v = heapq.heappop(ready)
        if done[v]:
            continue
        done[v] = True
        order.append(v)
        for w in succ[v]:
            remaining[w] -= 1
            if remaining[w] == 0 and not done[w]:
                heapq.heappush(ready, w)
    return order


def _layers(order: list[int], pred: list[list[int]], succ: list[list[int]]) -> list[int]:
    position = {v: i for i, v in enumerate(order)}
    layer = [0] * len(order)
    for v in order:
        earlier = [layer[p] + 1 for p in pred[v] if position[p] < position[v]]
        layer[v] = max(earlier, default=0)
    for v in reversed(order):  # sources sit just above their first reader
        if not pred[v] and succ[v]:
            later = [layer[s] for s in succ[v] if position[s] > position[v]]
            if later:
                layer[v] = max(min(later) - 1, 0)
    return layer


def _initial_rows(total: int, layer: list[int], order: list[int]) -> list[list[int]]:
    depth = max(layer, default=-1) + 1
    rank = {v: i for i, v in enumerate(order)}
    rows: list[list[int]] = [[] for _ in range(depth)]
    for v in sorted(range(total), key=lambda v: (rank.get(v, len(rank) + v))):
        rows[layer[v]].append(v)
    return rows


def _reduce_crossings(rows, up, down, sweeps: int):
    best = [list(r) for r in rows]
    best_count = _crossings(best, down)
    current = [list(r) for r in rows]
    for sweep in range(sweeps):
        if best_count == 0:
            break
        downward = sweep % 2 == 0
        span = range(1, len(current)) if downward else range(len(current) - 2, -1, -1)
        for i in span:
            ref = current[i - 1] if downward else current[i + 1]
            where = {v: k for k, v in enumerate(ref)}
            neighbours = up if downward else down

            def key(item, where=where, neighbours=neighbours):
                k, v = item
                near = [where[u] for u in neighbours[v] if u in where]
                return (sum(near) / len(near) if near else float(k), k)

            current[i] = [v for _, v in sorted(enumerate(current[i]), key=key)]
        count = _crossings(current, down)
        if count < best_count:
            best, best_count = [list(r) for r in current], count
    return best


def _crossings(rows, down) -> int:
    """Edge crossings between consecutive rows: inversions of the lower ends, Fenwick-counted."""
    total = 0
    for upper, lower in zip(rows, rows[1:]):
        where = {v: k for k, v in enumerate(lower)}
        ends = [j for _, j in sorted((i, where[w]) for i, v in enumerate(upper)
                                     for w in down[v] if w in where)]
        size = len(lower)
        tree = [0] * (size + 1)
        for seen, j in enumerate(ends):
            k, not_greater = j + 1, 0  # how many earlier ends are <= j
            while k > 0:
                not_greater += tree[k]
                k -= k & -k
            total += seen - not_greater
            k = j + 1
            while k <= size:
                tree[k] += 1
                k += k & -k
    return total


def _assign_x(rows, width, up, down, rounds: int = 4) -> list[float]:
    xs = [0.0] * len(width)
    for row in rows:
        x = 0.0
        for v in row:
            xs[v] = x + width[v] / 2
            x += width[v] + H_GAP
    for rnd in range(rounds):
        passes = [(range(1, len(rows)), up), (range(len(rows) - 2, -1, -1), down)]
        if rnd == rounds - 1:
            passes = [(range(len(rows)), None)]
        for span, neighbours in passes:
            for i in span:
                row = rows[i]
                wanted = []
                for v in row:
                    near = (up[v] + down[v]) if neighbours is None else neighbours[v]
                    wanted.append(sum(xs[u] for u in near) / len(near) if near else xs[v])
                for v, x in zip(row, _pack(row, wanted, width)):
                    xs[v] = x
    return xs


def _pack(row: list[int], wanted: list[float], width: list[float]) -> list[float]:
    """Centres closest (least squares) to ``wanted`` that keep the row's order and gaps."""
    offsets, acc = [], 0.0
    for k, v in enumerate(row):
        if k:
            acc += (width[row[k - 1]] + width[v]) / 2 + H_GAP
        offsets.append(acc)
    targets = [w - o for w, o in zip(wanted, offsets)]
    blocks: list[list[float]] = []  # [mean, count], non-decreasing means
    for t in targets:
        blocks.append([t, 1.0])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, c2 = blocks.pop()
            m1, c1 = blocks.pop()
            blocks.append([(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2])
    fitted = []
    for mean, count in blocks:
        fitted += [mean] * int(count)
    return [f + o for f, o in zip(fitted, offsets)]


def _assign_y(rows, height) -> tuple[list[float], list[float]]:
    ys, row_heights, y = [], [], MARGIN
    for row in rows:
        h = max((height[v] for v in row), default=0.0)
        ys.append(y)
        row_heights.append(h)
        y += h + V_GAP
    return ys, row_heights
