"""The time loops of LSTM and GRU, one direction at a time, compiled.

The input's product with W (every step at once) and the biases come in already added,
``xp[t, b]``; here each row walks its own valid steps (forward 0..len-1, backward
len-1..0), adds ``H @ R^T`` as a dot per gate, and applies the default activations
(sigmoid, tanh, tanh) with the clip: the reference's cell (``onnxkit.ops.rnn``) with
nothing between two steps but a few loops. Rows past their length leave Y at 0 and keep
their last state, as the reference does.
"""

from __future__ import annotations

from numba import njit

from onnxkit.kernels.cpu._math import sigmoid, tanh


@njit(cache=True, error_model="numpy", inline="always")
def _clip(x, bound):
    return -bound if x < -bound else (bound if x > bound else x)


@njit(cache=True, error_model="numpy", inline="always")
def _add_product(gates, h, rT, lo, hi):
    """gates[lo:hi] += h @ rT[:, lo:hi] (a row of rT at a time: contiguous, vectorized)."""
    for q in range(h.size):
        hq = h[q]
        for j in range(lo, hi):
            gates[j] += hq * rT[q, j]


@njit(cache=True, error_model="numpy")
def lstm_direction(xp, rT, p, h0, c0, lens, backward, bound, input_forget, Y, d, h_out, c_out):
    """One direction of an LSTM: xp [seq, batch, 4h] (gates i, o, f, c), rT [h, 4h],
    peepholes p [3, h] (i, o, f); writes Y[:, d] and the final h_out, c_out [batch, h].
    Each gate is one loop over the hidden units, so that its activation vectorizes."""
    batch, four = xp.shape[1], xp.shape[2]
    hidden = four // 4
    gates = xp[0, 0].copy()
    i, o, f, g = gates[:hidden], gates[hidden:2 * hidden], gates[2 * hidden:3 * hidden], \
        gates[3 * hidden:]
    one = xp.dtype.type(1)
    for b in range(batch):
        h = h0[b].copy()
        c = c0[b].copy()
        n = lens[b]
        for k in range(n):
            t = n - 1 - k if backward else k
            gates[:] = xp[t, b]
            _add_product(gates, h, rT, 0, four)
            for q in range(hidden):
                i[q] = sigmoid(_clip(i[q] + p[0, q] * c[q], bound))
            if input_forget:
                for q in range(hidden):
                    f[q] = one - i[q]
            else:
                for q in range(hidden):
                    f[q] = sigmoid(_clip(f[q] + p[2, q] * c[q], bound))
            for q in range(hidden):
                c[q] = f[q] * c[q] + i[q] * tanh(_clip(g[q], bound))
            for q in range(hidden):
                h[q] = sigmoid(_clip(o[q] + p[1, q] * c[q], bound)) * tanh(c[q])
            Y[t, d, b] = h
        h_out[b] = h
        c_out[b] = c


@njit(cache=True, error_model="numpy")
def gru_direction(xp, rT, rb, h0, lens, backward, bound, linear_before_reset, Y, d, h_out):
    """One direction of a GRU: xp [seq, batch, 3h] (gates z, r, h; W's bias added),
    rT [h, 3h], rb [3h]; writes Y[:, d] and the final h_out [batch, h]."""
    batch, three = xp.shape[1], xp.shape[2]
    hidden = three // 3
    gh = xp[0, 0].copy()
    z, r, cand = gh[:hidden], gh[hidden:2 * hidden], gh[2 * hidden:]
    rh = xp[0, 0, :hidden].copy()
    one = xp.dtype.type(1)
    for b in range(batch):
        h = h0[b].copy()
        n = lens[b]
        for k in range(n):
            t = n - 1 - k if backward else k
            x = xp[t, b]
            gh[:] = rb
            _add_product(gh, h, rT, 0, three if linear_before_reset else 2 * hidden)
            for q in range(hidden):
                z[q] = sigmoid(_clip(x[q] + z[q], bound))
            for q in range(hidden):
                r[q] = sigmoid(_clip(x[hidden + q] + r[q], bound))
            if linear_before_reset:
                for q in range(hidden):
                    cand[q] = tanh(_clip(x[2 * hidden + q] + r[q] * cand[q], bound))
            else:
                for q in range(hidden):
                    rh[q] = r[q] * h[q]
                _add_product(gh, rh, rT, 2 * hidden, three)
                for q in range(hidden):
                    cand[q] = tanh(_clip(x[2 * hidden + q] + cand[q], bound))
            for q in range(hidden):
                h[q] = (one - z[q]) * cand[q] + z[q] * h[q]
            Y[t, d, b] = h
        h_out[b] = h
