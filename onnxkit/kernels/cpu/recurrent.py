"""LSTM, GRU and RNN on the ``cpu`` executor: one product for every step's input term,
then the time loop compiled (``_recurrent_cells``) for float32 LSTM and GRU with the
default activations; the reference's algorithm, its products on the Numba threads' BLAS,
for the rest.

The reference kernels take their matrix products as a function (``run_lstm(product,
...)``): ``np.matmul`` there, ``_blas.matmul`` here, which reads the transposed
weights in place and calls oneMKL or OpenBLAS (see there). numpy's product has one
BLAS thread during a run; these share the Numba threads (``docs/cpu.md``). The gates
stay numpy. https://onnx.ai/onnx/operators/onnx__LSTM.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._recurrent_cells import gru_direction, lstm_direction
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu.matmul import matmul_fast
from onnxkit.ops.registry import op
from onnxkit.ops.rnn._recurrent import DIRECTIONS, project_steps, split_bias
from onnxkit.ops.rnn.gru import run_gru
from onnxkit.ops.rnn.lstm import run_lstm
from onnxkit.ops.rnn.rnn import run_rnn

F32 = np.dtype(np.float32)


#: multiply-adds below which a product is numpy's (one BLAS call on this thread): a
#: step's ``H @ R`` is small, and handing it to the Numba threads costs more than it
SMALL_PRODUCT = 1 << 18


def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b: small ones by numpy, the rest by the MatMul kernel's fast path
    (``_blas.matmul``) where it applies."""
    if a.ndim == 2 and b.ndim == 2 and a.shape[0] * a.shape[1] * b.shape[1] < SMALL_PRODUCT:
        return a @ b
    Y = matmul_fast(a, b)
    return a @ b if Y is None else Y


def _compiled_case(X, W, R, direction, activations, count, sequence_lens, layout):
    """(x [seq, batch, input], lens) when the compiled loop covers the call: float32, the
    default activations, a known direction whose W matches, valid lengths; else None
    (the reference's code then runs, and says what is wrong with the rest)."""
    if X.dtype != F32 or W.dtype != F32 or R.dtype != F32 or X.ndim != 3:
        return None
    names = [str(a).lower() for a in activations]
    if names[:count] != ["sigmoid", "tanh", "tanh"][:count] or direction not in DIRECTIONS:
        return None
    n_dirs = DIRECTIONS[direction]
    if len(names) not in (count, count * n_dirs) or names[count:] not in ([], names[:count]):
        return None
    if W.shape[0] != n_dirs or R.shape[0] != n_dirs:
        return None
    x = X if layout == 0 else np.swapaxes(X, 0, 1)
    seq, batch = x.shape[0], x.shape[1]
    if sequence_lens is None:
        lens = np.full(batch, seq, np.int64)
    else:
        lens = sequence_lens.astype(np.int64).reshape(-1)
        if lens.size != batch or np.any(lens < 0) or np.any(lens > seq):
            return None
    return np.ascontiguousarray(x), lens


def _buffers(x, W, R, clip, n_states: int):
    """Y [seq, dirs, batch, hidden] (zeros: rows past their length stay 0), the final
    states [dirs, batch, hidden] and the clip bound, for a compiled run."""
    n_dirs, hidden = W.shape[0], R.shape[-1]
    seq, batch = x.shape[0], x.shape[1]
    finals = tuple(np.empty((n_dirs, batch, hidden), F32) for _ in range(n_states))
    return (np.zeros((seq, n_dirs, batch, hidden), F32), finals,
            F32.type(np.inf if clip is None else clip))


def _start(state, d: int, batch: int, hidden: int, layout: int) -> np.ndarray:
    if state is None:
        return np.zeros((batch, hidden), F32)
    s = state[:, d] if layout != 0 else state[d]
    return np.ascontiguousarray(s, dtype=F32)


def _outputs(Y, finals, layout: int) -> tuple:
    if layout != 0:
        return (np.ascontiguousarray(np.transpose(Y, (2, 0, 1, 3))),) + tuple(
            np.ascontiguousarray(np.swapaxes(f, 0, 1)) for f in finals)
    return (Y,) + tuple(finals)


@op("LSTM", 1, 7, 14, 22, registry=CPU)
def lstm(X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None, P=None, *,
         activation_alpha=None, activation_beta=None, activations=("Sigmoid", "Tanh", "Tanh"),
         clip=None, direction="forward", hidden_size=None, input_forget=0, layout=0,
         output_sequence=0):
    case = _compiled_case(X, W, R, direction, activations, 3, sequence_lens, layout)
    if case is None:
        return fall_back(run_lstm, product, **locals())
    x, lens = case
    Y, (h_out, c_out), bound = _buffers(x, W, R, clip, 2)
    n_dirs, hidden, batch = W.shape[0], R.shape[-1], x.shape[1]
    for d in range(n_dirs):
        wb, rb = split_bias(B, d, 4, hidden, F32)
        xp = np.ascontiguousarray(project_steps(x, W[d].T, product) + (wb + rb), dtype=F32)
        peep = np.zeros((3, hidden), F32) if P is None else \
            np.ascontiguousarray(P[d], dtype=F32).reshape(3, hidden)
        backward = direction == "reverse" or d == 1
        lstm_direction(xp, np.ascontiguousarray(R[d].T), peep,
                       _start(initial_h, d, batch, hidden, layout),
                       _start(initial_c, d, batch, hidden, layout), lens, backward, bound,
                       bool(input_forget), Y, d, h_out[d], c_out[d])
    return _outputs(Y, (h_out, c_out), layout)


@op("GRU", 1, 3, 7, 14, 22, registry=CPU)
def gru(X, W, R, B=None, sequence_lens=None, initial_h=None, *, activation_alpha=None,
        activation_beta=None, activations=("Sigmoid", "Tanh"), clip=None, direction="forward",
        hidden_size=None, layout=0, linear_before_reset=0, output_sequence=0):
    case = _compiled_case(X, W, R, direction, activations, 2, sequence_lens, layout)
    if case is None:
        return fall_back(run_gru, product, **locals())
    x, lens = case
    Y, (h_out,), bound = _buffers(x, W, R, clip, 1)
    n_dirs, hidden, batch = W.shape[0], R.shape[-1], x.shape[1]
    for d in range(n_dirs):
        wb, rb = split_bias(B, d, 3, hidden, F32)
        xp = np.ascontiguousarray(project_steps(x, W[d].T, product) + wb, dtype=F32)
        backward = direction == "reverse" or d == 1
        gru_direction(xp, np.ascontiguousarray(R[d].T), np.ascontiguousarray(rb),
                      _start(initial_h, d, batch, hidden, layout), lens, backward, bound,
                      bool(linear_before_reset), Y, d, h_out[d])
    return _outputs(Y, (h_out,), layout)


@op("RNN", 1, 7, 14, 22, registry=CPU)
def rnn(X, W, R, B=None, sequence_lens=None, initial_h=None, *, activation_alpha=None,
        activation_beta=None, activations=("Tanh", "Tanh"), clip=None, direction="forward",
        hidden_size=None, layout=0, output_sequence=0):
    return fall_back(run_rnn, product, **locals())
