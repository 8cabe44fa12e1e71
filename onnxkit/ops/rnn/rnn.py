"""RNN: the simple (Elman) recurrent network.

    H_t = f(clip(X_t W^T + H_{t-1} R^T + Wb + Rb))        f defaults to Tanh

Outputs Y (every H_t) and Y_h (the last H). Version 1 also takes ``output_sequence``
(whether Y is produced; here Y is always computed, the node decides which outputs it
keeps); version 14 adds ``layout``. https://onnx.ai/onnx/operators/onnx__RNN.html
"""

import numpy as np

from onnxkit.ops.registry import op
from onnxkit.ops.rnn._activations import per_direction
from onnxkit.ops.rnn._recurrent import (clipper, num_directions, project_steps, run_recurrent,
                                        split_bias, working_dtype)


def run_rnn(product, X, W, R, B, sequence_lens, initial_h, activation_alpha, activation_beta,
            activations, clip, direction, hidden_size, layout, output_sequence):
    """RNN with ``product(a, b)`` for its matrix products (the cpu executor passes
    its threaded BLAS product; the reference, ``np.matmul``)."""
    dtype = working_dtype(X)
    n_dirs = num_directions(direction, W)
    hidden = R.shape[-1]
    funcs = per_direction(activations, 1, n_dirs, activation_alpha, activation_beta)
    bound = clipper(clip)
    weights = [(W[d].astype(dtype).T, R[d].astype(dtype).T, sum(split_bias(B, d, 1, hidden, dtype)))
               for d in range(n_dirs)]

    def project(d, x):  # X_t W^T + Wb + Rb, for every step at once
        w, _, bias = weights[d]
        return project_steps(x, w, product) + bias

    def cell(d, x_term, states):
        _, r, _ = weights[d]
        (f,) = funcs[d]
        return (f(bound(x_term + product(states[0], r))),)

    return run_recurrent(X, sequence_lens, [initial_h], n_dirs, hidden, direction, layout, cell,
                         project)


@op("RNN", 1, 7, 14, 22)
def rnn(X, W, R, B=None, sequence_lens=None, initial_h=None, *, activation_alpha=None,
        activation_beta=None, activations=("Tanh", "Tanh"), clip=None, direction="forward",
        hidden_size=None, layout=0, output_sequence=0):
    return run_rnn(np.matmul, **locals())
