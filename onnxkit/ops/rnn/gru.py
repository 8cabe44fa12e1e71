"""GRU: gated recurrent unit, gates ordered z (update), r (reset), h (hidden).

    z = f(X_t Wz^T + H Rz^T + Wbz + Rbz)
    r = f(X_t Wr^T + H Rr^T + Wbr + Rbr)
    h = g(X_t Wh^T + (r * H) Rh^T + Rbh + Wbh)          linear_before_reset = 0
    h = g(X_t Wh^T + r * (H Rh^T + Rbh) + Wbh)          linear_before_reset != 0
    H_t = (1 - z) * h + z * H

f, g default to Sigmoid, Tanh; ``clip`` bounds every activation input. Version 3 adds
``linear_before_reset`` (version 1 always uses 0), version 14 adds ``layout``.
https://onnx.ai/onnx/operators/onnx__GRU.html
"""

import numpy as np

from onnxkit.ops.registry import op
from onnxkit.ops.rnn._activations import per_direction
from onnxkit.ops.rnn._recurrent import (clipper, num_directions, project_steps, run_recurrent,
                                        split_bias, working_dtype)


def run_gru(product, X, W, R, B, sequence_lens, initial_h, activation_alpha, activation_beta,
            activations, clip, direction, hidden_size, layout, linear_before_reset,
            output_sequence):
    """GRU with ``product(a, b)`` for its matrix products (the cpu executor passes
    its threaded BLAS product; the reference, ``np.matmul``)."""
    dtype = working_dtype(X)
    n_dirs = num_directions(direction, W)
    hidden = R.shape[-1]
    funcs = per_direction(activations, 2, n_dirs, activation_alpha, activation_beta)
    bound = clipper(clip)
    weights = [(W[d].astype(dtype).T, R[d].astype(dtype).T) + split_bias(B, d, 3, hidden, dtype)
               for d in range(n_dirs)]

    def project(d, x):  # X_t W^T + Wb, for every step at once
        w, _, wb, _ = weights[d]
        return project_steps(x, w, product) + wb

    def cell(d, gx, states):
        (h_prev,) = states
        _, r, _, rb = weights[d]
        f, g = funcs[d]
        gh = product(h_prev, r[:, :2 * hidden]) + rb[:2 * hidden]
        z = f(bound(gx[:, :hidden] + gh[:, :hidden]))
        reset = f(bound(gx[:, hidden:2 * hidden] + gh[:, hidden:]))
        r_h, rb_h = r[:, 2 * hidden:], rb[2 * hidden:]
        if linear_before_reset:
            h = g(bound(gx[:, 2 * hidden:] + reset * (product(h_prev, r_h) + rb_h)))
        else:
            h = g(bound(gx[:, 2 * hidden:] + product(reset * h_prev, r_h) + rb_h))
        return ((1 - z) * h + z * h_prev,)

    return run_recurrent(X, sequence_lens, [initial_h], n_dirs, hidden, direction, layout, cell,
                         project)


@op("GRU", 1, 3, 7, 14, 22)
def gru(X, W, R, B=None, sequence_lens=None, initial_h=None, *, activation_alpha=None,
        activation_beta=None, activations=("Sigmoid", "Tanh"), clip=None, direction="forward",
        hidden_size=None, layout=0, linear_before_reset=0, output_sequence=0):
    return run_gru(np.matmul, **locals())
