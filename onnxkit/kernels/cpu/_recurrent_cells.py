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

from onnxkit.kernels.cpu._math import add_product, sigmoid, tanh


@njit(cache=True, error_model="numpy", inline="always")
def _clip(x, bound):
    return -bound if x < -bound else (bound if x > bound else x)


@njit(cache=True, error_model="numpy")
def lstm_direction(xp, off, rT, p, h0, c0, lens, backward, bound, input_forget, Y, d, h_out,
                   c_out):
    """One direction of an LSTM: xp [seq, batch, :] whose columns off..off+4h are this
    direction's input terms (gates i, o, f, c), rT [h, 4h], peepholes p [3, h] (i, o, f);
    writes Y[:, d] and the final h_out, c_out [batch, h]. Each gate is one loop over the
    hidden units, so that its activation vectorizes."""
    batch, four = xp.shape[1], rT.shape[1]
    hidden = four // 4
    gates = xp[0, 0, off:off + four].copy()
    i, o, f, g = gates[:hidden], gates[hidden:2 * hidden], gates[2 * hidden:3 * hidden], \
        gates[3 * hidden:]
    one = xp.dtype.type(1)
    for b in range(batch):
        h = h0[b].copy()
        c = c0[b].copy()
        n = lens[b]
        for k in range(n):
            t = n - 1 - k if backward else k
            gates[:] = xp[t, b, off:off + four]
            add_product(gates, h, rT)
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
def gru_direction(xp, off, rzr, rc, rb, h0, lens, backward, bound, linear_before_reset, Y, d,
                  h_out):
    """One direction of a GRU: xp [seq, batch, :] whose columns off..off+3h are this
    direction's input terms (gates z, r, h; W's bias added), R^T in two parts: rzr [h, 2h]
    (gates z, r) and rc [h, h] (the candidate), rb [3h]; writes Y[:, d] and the final
    h_out [batch, h]."""
    batch, hidden = xp.shape[1], rc.shape[0]
    three = 3 * hidden
    gh = rb.copy()
    z, r, cand, zr = gh[:hidden], gh[hidden:2 * hidden], gh[2 * hidden:], gh[:2 * hidden]
    rh = rb[:hidden].copy()
    one = xp.dtype.type(1)
    for b in range(batch):
        h = h0[b].copy()
        n = lens[b]
        for k in range(n):
            t = n - 1 - k if backward else k
            x = xp[t, b, off:off + three]
            gh[:] = rb
            add_product(zr, h, rzr)
            if linear_before_reset:
                add_product(cand, h, rc)
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
                add_product(cand, rh, rc)
                for q in range(hidden):
                    cand[q] = tanh(_clip(x[2 * hidden + q] + cand[q], bound))
            for q in range(hidden):
                h[q] = (one - z[q]) * cand[q] + z[q] * h[q]
            Y[t, d, b] = h
        h_out[b] = h
