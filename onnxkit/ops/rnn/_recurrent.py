"""The loop every recurrent op shares: layouts, directions and ``sequence_lens``.

    X: [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1)
    for each direction d (forward: t = 0..len-1, reverse: t = len-1..0, per batch row):
        P = project(d, X)                       # every step's input term at once: X @ W^T
        states = cell(d, P[t], states)          # states[0] is the hidden state H
        Y[t, d] = H                             # rows past their sequence_lens stay 0
    Y_h (and Y_c) = the states after each row's last valid step

A row whose ``sequence_lens`` is shorter than ``seq`` keeps its state unchanged past
its end, so the final state is the state at its last valid step. ``project`` takes the
input's product with W out of the loop: one [seq * batch, input] x [input, gates]
product instead of one per step. The ops take their products as a function
(``run_lstm(product, ...)``): ``np.matmul`` here, the cpu executor's BLAS there
(``onnxkit/kernels/cpu/recurrent.py``, which is faster: measured in ``docs/cpu.md``).
https://onnx.ai/onnx/operators/onnx__RNN.html
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from onnxkit.errors import AttributeValueError, KernelInputError

DIRECTIONS = {"forward": 1, "foward": 1, "reverse": 1, "bidirectional": 2}  # GRU-1 spells it "foward"


def working_dtype(X: np.ndarray) -> type:
    """Compute in float64 for double inputs, float32 otherwise (float16, bfloat16...)."""
    return np.float64 if X.dtype == np.float64 else np.float32


def num_directions(direction: str, W: np.ndarray) -> int:
    if direction not in DIRECTIONS:
        raise AttributeValueError("direction must be forward, reverse or bidirectional, got "
                                  f"{direction!r}")
    count = DIRECTIONS[direction]
    if W.shape[0] != count:
        raise AttributeValueError(f"direction={direction!r} needs W with {count} direction(s), "
                                  f"W has shape {list(W.shape)}")
    return count


def clipper(clip: float | None) -> Callable[[np.ndarray], np.ndarray]:
    """``clip`` bounds the inputs of the activations to [-clip, clip]."""
    if clip is None:
        return lambda x: x
    return lambda x: np.clip(x, -clip, clip)


def split_bias(B: np.ndarray | None, d: int, gates: int, hidden: int,
               dtype) -> tuple[np.ndarray, np.ndarray]:
    """``(Wb, Rb)`` of direction ``d``, each [gates*hidden] (zeros when B is absent)."""
    if B is None:
        zeros = np.zeros(gates * hidden, dtype=dtype)
        return zeros, zeros
    wb, rb = np.split(B[d].astype(dtype), 2)
    return wb, rb


def project_steps(x: np.ndarray, w: np.ndarray, product=np.matmul) -> np.ndarray:
    """x [seq, batch, input] @ w [input, n] as one product of (seq * batch) rows (numpy's
    matmul runs a 3-D @ 2-D product as seq separate ones)."""
    return product(x.reshape(-1, x.shape[-1]), w).reshape(x.shape[:-1] + (w.shape[-1],))


def run_recurrent(X: np.ndarray, sequence_lens: np.ndarray | None,
                  initial: Sequence[np.ndarray | None], n_dirs: int, hidden: int,
                  direction: str, layout: int, cell: Callable,
                  project: Callable | None = None) -> tuple[np.ndarray, ...]:
    """Run ``cell(d, p_t, states) -> states`` over the sequence, ``p = project(d, x)`` (x
    [seq, batch, input] in the order direction d visits it; x itself without
    ``project``); return Y and final states.

    ``initial`` holds one optional [dirs, batch, hidden] array per state ([batch, dirs,
    hidden] for layout 1). Results come back in X's dtype and the requested layout.
    """
    dtype = working_dtype(X)
    x = X.astype(dtype)
    if layout != 0:
        x = np.swapaxes(x, 0, 1)
    seq, batch = x.shape[0], x.shape[1]
    lens = np.full(batch, seq, dtype=np.int64) if sequence_lens is None \
        else sequence_lens.astype(np.int64).reshape(batch)
    if np.any(lens < 0) or np.any(lens > seq):
        raise KernelInputError(f"sequence_lens must lie in [0, {seq}], got {lens.tolist()}")

    starts = []
    for state in initial:
        if state is None:
            starts.append(np.zeros((n_dirs, batch, hidden), dtype=dtype))
        else:
            s = state.astype(dtype)
            starts.append(np.swapaxes(s, 0, 1) if layout != 0 else s)

    steps = np.arange(seq)[:, None]
    valid = steps < lens[None, :]                       # [seq, batch]
    rows = np.arange(batch)[None, :]
    Y = np.zeros((seq, n_dirs, batch, hidden), dtype=dtype)
    finals = [np.empty_like(s) for s in starts]
    for d in range(n_dirs):
        backward = direction == "reverse" or d == 1
        # time index visited at step k by each row (reverse walks each row's valid prefix)
        order = np.where(valid, lens[None, :] - 1 - steps, steps) if backward \
            else np.broadcast_to(steps, (seq, batch))
        xd = x[order, rows]                             # [seq, batch, input]
        if project is not None:
            xd = project(d, xd)
        states = tuple(s[d] for s in starts)
        for k in range(seq):
            new = cell(d, xd[k], states)
            keep = valid[k][:, None]
            states = tuple(np.where(keep, n, s) for n, s in zip(new, states))
            Y[order[k], d, rows[0]] = np.where(keep, states[0], 0)
        for final, s in zip(finals, states):
            final[d] = s
    out_dtype = X.dtype
    if layout != 0:
        Y = np.transpose(Y, (2, 0, 1, 3))
        finals = [np.swapaxes(f, 0, 1) for f in finals]
    return (Y.astype(out_dtype),) + tuple(f.astype(out_dtype) for f in finals)
