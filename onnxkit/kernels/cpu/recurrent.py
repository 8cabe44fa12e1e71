"""LSTM, GRU and RNN on the ``cpu`` executor: the reference's algorithm, its products on
the Numba threads' BLAS.

The reference kernels take their matrix products as a function (``run_lstm(product,
...)``): ``np.matmul`` there, ``_blas.matmul`` here, which reads the transposed
weights in place and calls oneMKL or OpenBLAS (see there). numpy's product has one
BLAS thread during a run; these share the Numba threads (``docs/cpu.md``). The gates
stay numpy. https://onnx.ai/onnx/operators/onnx__LSTM.html
"""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu.matmul import matmul_fast
from onnxkit.ops.registry import op
from onnxkit.ops.rnn.gru import run_gru
from onnxkit.ops.rnn.lstm import run_lstm
from onnxkit.ops.rnn.rnn import run_rnn


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


@op("LSTM", 1, 7, 14, 22, registry=CPU)
def lstm(X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None, P=None, *,
         activation_alpha=None, activation_beta=None, activations=("Sigmoid", "Tanh", "Tanh"),
         clip=None, direction="forward", hidden_size=None, input_forget=0, layout=0,
         output_sequence=0):
    return run_lstm(product, **locals())


@op("GRU", 1, 3, 7, 14, 22, registry=CPU)
def gru(X, W, R, B=None, sequence_lens=None, initial_h=None, *, activation_alpha=None,
        activation_beta=None, activations=("Sigmoid", "Tanh"), clip=None, direction="forward",
        hidden_size=None, layout=0, linear_before_reset=0, output_sequence=0):
    return run_gru(product, **locals())


@op("RNN", 1, 7, 14, 22, registry=CPU)
def rnn(X, W, R, B=None, sequence_lens=None, initial_h=None, *, activation_alpha=None,
        activation_beta=None, activations=("Tanh", "Tanh"), clip=None, direction="forward",
        hidden_size=None, layout=0, output_sequence=0):
    return run_rnn(product, **locals())
