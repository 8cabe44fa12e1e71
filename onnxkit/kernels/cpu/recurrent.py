"""LSTM, GRU and RNN on the ``cpu`` executor: one product for every step's input term,
then the time loop compiled (``_recurrent_cells``) for float32 LSTM and GRU with the
default activations; the reference's algorithm, its products on the Numba threads' BLAS,
for the rest.

    xp = X [seq * batch, input] @ W^T [input, dirs * gates * hidden] + biases
                          (one product for every direction and step, the bias its epilogue)
    per direction: the compiled loop over the steps, reading its columns of xp

The weights are arranged for this (``Arranged``: W^T side by side, R^T contiguous, the
biases summed) once per node when the plan is built, where W, R and B are initializers
(``prepare`` -> ``PreparedRecurrent``), else on each call.

The reference kernels take their matrix products as a function (``run_lstm(product,
...)``): ``np.matmul`` there, ``_blas.matmul`` here, which reads the transposed
weights in place and calls oneMKL or OpenBLAS (see there). numpy's product has one
BLAS thread during a run; these share the Numba threads (``docs/cpu.md``).
https://onnx.ai/onnx/operators/onnx__LSTM.html
"""

from __future__ import annotations

import inspect

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu._recurrent_cells import gru_direction, lstm_direction
from onnxkit.kernels.cpu._route import fall_back
from onnxkit.kernels.cpu.matmul import matmul_fast
from onnxkit.ops.registry import op
from onnxkit.ops.rnn._recurrent import DIRECTIONS, split_bias
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


def _compiled_case(X, W, R, B, P, direction, activations, count, sequence_lens, layout):
    """(x [seq, batch, input], lens) when the compiled loop covers the call: float32, the
    default activations, a known direction whose W, R, B and P have their shapes, valid
    lengths; else None (the reference's code then runs, and says what is wrong)."""
    if X.dtype != F32 or W.dtype != F32 or R.dtype != F32 or X.ndim != 3:
        return None
    names = [str(a).lower() for a in activations]
    if names[:count] != ["sigmoid", "tanh", "tanh"][:count] or direction not in DIRECTIONS:
        return None
    n_dirs = DIRECTIONS[direction]
    if len(names) not in (count, count * n_dirs) or names[count:] not in ([], names[:count]):
        return None
    gates, hidden = count + 1, R.shape[-1]
    if (W.ndim != 3 or W.shape != (n_dirs, gates * hidden, X.shape[-1])
            or R.shape != (n_dirs, gates * hidden, hidden)
            or B is not None and B.shape != (n_dirs, 2 * gates * hidden)
            or P is not None and P.shape != (n_dirs, 3 * hidden)):
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


class Arranged:
    """The weights of one LSTM / GRU node as the compiled loop reads them (``gates``: 4 or
    3 per hidden unit): ``wt`` [input, dirs * gates * hidden], every direction's W^T side
    by side, for one product of the whole sequence; ``bias`` [dirs * gates * hidden], the
    biases that product's epilogue adds (Wb + Rb for LSTM, Wb for GRU, whose Rb of the
    candidate gate goes inside the reset); ``rT`` [dirs, hidden, gates * hidden] (GRU:
    its gates z and r, [dirs, hidden, 2 * hidden], and ``rc`` [dirs, hidden, hidden] the
    candidate's); ``rb`` [dirs, gates * hidden] (GRU); ``peep`` [dirs, 3, hidden] (LSTM).
    Each contiguous: the loop reads its rows as they lie."""

    __slots__ = ("wt", "bias", "rT", "rc", "rb", "peep")

    def __init__(self, W, R, B, P, gates: int, lstm: bool):
        n_dirs, size, hidden = W.shape[0], W.shape[0] * gates * R.shape[-1], R.shape[-1]
        self.wt = np.ascontiguousarray(W.reshape(size, W.shape[-1]).T, dtype=F32)
        biases = [split_bias(B, d, gates, hidden, F32) for d in range(n_dirs)]
        self.bias = np.concatenate([wb + rb if lstm else wb for wb, rb in biases]).astype(F32)
        rT = np.swapaxes(R, 1, 2)
        self.rT = np.ascontiguousarray(rT if lstm else rT[..., :2 * hidden], dtype=F32)
        self.rc = None if lstm else np.ascontiguousarray(rT[..., 2 * hidden:], dtype=F32)
        self.rb = np.ascontiguousarray(np.stack([rb for _, rb in biases]), dtype=F32)
        self.peep = (np.zeros((n_dirs, 3, hidden), F32) if P is None
                     else np.ascontiguousarray(P, dtype=F32).reshape(n_dirs, 3, hidden))


def _projected(x, arranged: Arranged) -> np.ndarray:
    """x [seq, batch, input] @ W^T + bias for every direction and step: one product
    [seq, batch, dirs * gates * hidden]."""
    seq, batch, size = x.shape
    a = x.reshape(seq * batch, size)
    xp = matmul_fast(a, arranged.wt, arranged.bias)
    if xp is None:
        xp = a @ arranged.wt + arranged.bias
    return xp.reshape(seq, batch, -1)


def _buffers(x, n_dirs: int, hidden: int, clip, n_states: int):
    """Y [seq, dirs, batch, hidden] (zeros: rows past their length stay 0), the final
    states [dirs, batch, hidden] and the clip bound, for a compiled run."""
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


def run_lstm_compiled(x, lens, arranged: Arranged, initial_h, initial_c, clip, direction,
                      input_forget, layout):
    n_dirs, hidden, batch = arranged.rT.shape[0], arranged.rT.shape[1], x.shape[1]
    Y, (h_out, c_out), bound = _buffers(x, n_dirs, hidden, clip, 2)
    xp = _projected(x, arranged)
    for d in range(n_dirs):
        backward = direction == "reverse" or d == 1
        lstm_direction(xp, d * 4 * hidden, arranged.rT[d], arranged.peep[d],
                       _start(initial_h, d, batch, hidden, layout),
                       _start(initial_c, d, batch, hidden, layout), lens, backward, bound,
                       bool(input_forget), Y, d, h_out[d], c_out[d])
    return _outputs(Y, (h_out, c_out), layout)


def run_gru_compiled(x, lens, arranged: Arranged, initial_h, clip, direction,
                     linear_before_reset, layout):
    n_dirs, hidden, batch = arranged.rT.shape[0], arranged.rT.shape[1], x.shape[1]
    Y, (h_out,), bound = _buffers(x, n_dirs, hidden, clip, 1)
    xp = _projected(x, arranged)
    for d in range(n_dirs):
        backward = direction == "reverse" or d == 1
        gru_direction(xp, d * 3 * hidden, arranged.rT[d], arranged.rc[d], arranged.rb[d],
                      _start(initial_h, d, batch, hidden, layout), lens, backward, bound,
                      bool(linear_before_reset), Y, d, h_out[d])
    return _outputs(Y, (h_out,), layout)


@op("LSTM", 1, 7, 14, 22, registry=CPU)
def lstm(X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None, P=None, *,
         activation_alpha=None, activation_beta=None, activations=("Sigmoid", "Tanh", "Tanh"),
         clip=None, direction="forward", hidden_size=None, input_forget=0, layout=0,
         output_sequence=0):
    return _lstm(None, X, W, R, B, sequence_lens, initial_h, initial_c, P, activation_alpha,
                 activation_beta, activations, clip, direction, hidden_size, input_forget,
                 layout, output_sequence)


def _lstm(arranged, X, W, R, B, sequence_lens, initial_h, initial_c, P, activation_alpha,
          activation_beta, activations, clip, direction, hidden_size, input_forget, layout,
          output_sequence):
    """``arranged``: the node's weights as ``Arranged``, made when its plan was built
    (``PreparedRecurrent``), or None (made here)."""
    case = _compiled_case(X, W, R, B, P, direction, activations, 3, sequence_lens, layout)
    if case is None:
        return fall_back(run_lstm, product, X, W, R, B, sequence_lens, initial_h, initial_c,
                         P, activation_alpha, activation_beta, activations, clip, direction,
                         hidden_size, input_forget, layout, output_sequence)
    x, lens = case
    if arranged is None:
        arranged = Arranged(W, R, B, P, 4, True)
    return run_lstm_compiled(x, lens, arranged, initial_h, initial_c, clip, direction,
                             input_forget, layout)


@op("GRU", 1, 3, 7, 14, 22, registry=CPU)
def gru(X, W, R, B=None, sequence_lens=None, initial_h=None, *, activation_alpha=None,
        activation_beta=None, activations=("Sigmoid", "Tanh"), clip=None, direction="forward",
        hidden_size=None, layout=0, linear_before_reset=0, output_sequence=0):
    return _gru(None, X, W, R, B, sequence_lens, initial_h, activation_alpha, activation_beta,
                activations, clip, direction, hidden_size, layout, linear_before_reset,
                output_sequence)


def _gru(arranged, X, W, R, B, sequence_lens, initial_h, activation_alpha, activation_beta,
         activations, clip, direction, hidden_size, layout, linear_before_reset,
         output_sequence):
    case = _compiled_case(X, W, R, B, None, direction, activations, 2, sequence_lens, layout)
    if case is None:
        return fall_back(run_gru, product, X, W, R, B, sequence_lens, initial_h,
                         activation_alpha, activation_beta, activations, clip, direction,
                         hidden_size, layout, linear_before_reset, output_sequence)
    x, lens = case
    if arranged is None:
        arranged = Arranged(W, R, B, None, 3, False)
    return run_gru_compiled(x, lens, arranged, initial_h, clip, direction,
                            linear_before_reset, layout)


class PreparedRecurrent:
    """One LSTM or GRU node's kernel, made when the plan is built: its weights arranged
    once (``Arranged``) from the initializers W, R, B (and P). Called as the registered
    kernel is; a W, R, B or P other than those (fed at each run) is arranged per call."""

    def __init__(self, kernel, inner, n_inputs: int, constants: tuple, arranged: Arranged):
        self.kernel, self.inner, self.n_inputs = kernel, inner, n_inputs
        self.constants, self.arranged = constants, arranged
        self.defaults = {name: p.default for name, p in
                         inspect.signature(kernel).parameters.items() if p.kind == p.KEYWORD_ONLY}

    def __call__(self, *inputs, **attributes):
        inputs = inputs + (None,) * (self.n_inputs - len(inputs))
        W, R, B, P = inputs[1], inputs[2], inputs[3], inputs[7] if self.n_inputs > 7 else None
        fixed = all(a is c for a, c in zip((W, R, B, P), self.constants))
        return self.inner(self.arranged if fixed else None, *inputs,
                          **{**self.defaults, **attributes})


def _prepare(kernel, inner, n_inputs: int, gates: int):
    def prepare(node, attrs: dict, constants: dict, shapes: dict):
        """W, R and the B (and P) the node has, float32 initializers: the node's
        ``PreparedRecurrent``; else None (the kernel as it is)."""
        given = list(node.input) + [""] * n_inputs
        present = [i for i in (3, 7) if i < n_inputs and given[i]]
        if any(i not in constants or constants[i].dtype != F32 for i in [1, 2] + present):
            return None
        W, R, B, P = (constants.get(i) for i in (1, 2, 3, 7))
        try:
            arranged = Arranged(W, R, B, P, gates, gates == 4)
        except (ValueError, IndexError):
            return None  # a shape the run's checks report (the reference kernel's)
        return PreparedRecurrent(kernel, inner, n_inputs, (W, R, B, P), arranged)

    return prepare


lstm.prepare = _prepare(lstm, _lstm, 8, 4)
gru.prepare = _prepare(gru, _gru, 6, 3)


@op("RNN", 1, 7, 14, 22, registry=CPU)
def rnn(X, W, R, B=None, sequence_lens=None, initial_h=None, *, activation_alpha=None,
        activation_beta=None, activations=("Tanh", "Tanh"), clip=None, direction="forward",
        hidden_size=None, layout=0, output_sequence=0):
    return fall_back(run_rnn, product, **locals())
