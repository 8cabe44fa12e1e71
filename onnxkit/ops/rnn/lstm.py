"""LSTM: long short-term memory, gates ordered i, o, f, c; peepholes P ordered i, o, f.

    i = f(X_t Wi^T + H Ri^T + Pi * C + Wbi + Rbi)
    f_t = f(X_t Wf^T + H Rf^T + Pf * C + Wbf + Rbf)      (1 - i when input_forget)
    c = g(X_t Wc^T + H Rc^T + Wbc + Rbc)
    C_t = f_t * C + i * c
    o = f(X_t Wo^T + H Ro^T + Po * C_t + Wbo + Rbo)
    H_t = o * h(C_t)

f, g, h default to Sigmoid, Tanh, Tanh; ``clip`` bounds every gate's activation input.
Outputs Y, Y_h, Y_c. Version 14 adds ``layout``.
https://onnx.ai/onnx/operators/onnx__LSTM.html
"""

import numpy as np

from onnxkit.ops.registry import op
from onnxkit.ops.rnn._activations import per_direction
from onnxkit.ops.rnn._recurrent import (clipper, num_directions, project_steps, run_recurrent,
                                        split_bias, working_dtype)


def run_lstm(product, X, W, R, B, sequence_lens, initial_h, initial_c, P, activation_alpha,
             activation_beta, activations, clip, direction, hidden_size, input_forget, layout,
             output_sequence):
    """LSTM with ``product(a, b)`` for its matrix products (the cpu executor passes
    its threaded BLAS product; the reference, ``np.matmul``)."""
    dtype = working_dtype(X)
    n_dirs = num_directions(direction, W)
    hidden = R.shape[-1]
    funcs = per_direction(activations, 3, n_dirs, activation_alpha, activation_beta)
    bound = clipper(clip)
    weights = []
    for d in range(n_dirs):
        peep = np.zeros(3 * hidden, dtype=dtype) if P is None else P[d].astype(dtype)
        weights.append((W[d].astype(dtype).T, R[d].astype(dtype).T,
                        sum(split_bias(B, d, 4, hidden, dtype)), np.split(peep, 3)))

    def project(d, x):  # X_t W^T + Wb + Rb, for every step at once
        w, _, bias, _ = weights[d]
        return project_steps(x, w, product) + bias

    def cell(d, x_term, states):
        h_prev, c_prev = states
        _, r, _, (p_i, p_o, p_f) = weights[d]
        f, g, h = funcs[d]
        gates = x_term + product(h_prev, r)
        pre_i, pre_o, pre_f, pre_c = np.split(gates, 4, axis=-1)
        i = f(bound(pre_i + p_i * c_prev))
        forget = 1 - i if input_forget else f(bound(pre_f + p_f * c_prev))
        c = forget * c_prev + i * g(bound(pre_c))
        o = f(bound(pre_o + p_o * c))
        return o * h(c), c

    return run_recurrent(X, sequence_lens, [initial_h, initial_c], n_dirs, hidden, direction,
                         layout, cell, project)


@op("LSTM", 1, 7, 14, 22)
def lstm(X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None, P=None, *,
         activation_alpha=None, activation_beta=None, activations=("Sigmoid", "Tanh", "Tanh"),
         clip=None, direction="forward", hidden_size=None, input_forget=0, layout=0,
         output_sequence=0):
    return run_lstm(np.matmul, **locals())
