"""LayerNormalization, SkipLayerNormalization and RMSNormalization of few rows in one
compiled call, for nodes whose scale (and bias) are initializers.

    for each row r of X (the last axis, D values):
        s = X[r] (+ Skip[r])                        S[r] = s when the node outputs S
        LayerNorm: Y[r] = (s - mean(s)) / sqrt(var(s) + eps) * scale + bias
        RMSNorm:   Y[r] = s / sqrt(mean(s^2) + eps) * scale

The same arithmetic as ``layer_norm._normalize`` and ``rms_norm._rms_rows`` (sums in
float64, in any order). At a decoder step the rows are a few hundred values; the
checks, views and read-only copies around the general kernels cost several times the
arithmetic. Here the plan works out the scale, bias and epsilon once (``prepare``), a
run checks the input's dtype, layout and last axis and makes one call; the kernels
flatten the arrays themselves and have one variant per rank (C-contiguous float32,
inputs read-only), compiled on first use and called through its entry point (``_entry``:
the types are checked here, not by the dispatcher). Anything else (Mean / InvStdDev
wanted, another axis, a strided input, work for several threads, another dtype) runs
the node's general kernel.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from onnxkit.kernels.cpu._buffers import empty_known
from onnxkit.kernels.cpu._entry import compiled_entry
from onnxkit.kernels.cpu._math import FASTMATH, mean_inv_std, rms_inv
from onnxkit.kernels.cpu._threads import min_parallel

F32 = np.dtype(np.float32)


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _layer_rows(x, skip, has_skip, scale, bias, eps, y, s_out, keep_s):
    d = scale.shape[0]
    rows = x.size // d
    x2, k2, y2, s2 = (x.reshape((rows, d)), skip.reshape((rows, d)), y.reshape((rows, d)),
                      s_out.reshape((rows, d)))
    for r in range(rows):
        out = y2[r]
        if has_skip:
            src = s2[r] if keep_s else out  # the sum, normalized in place when not kept
            xr, kr = x2[r], k2[r]
            for i in range(d):
                src[i] = xr[i] + kr[i]
        else:
            src = x2[r]
        mean, inv = mean_inv_std(src, eps)
        for i in range(d):
            out[i] = (src[i] - mean) * inv * scale[i] + bias[i]


@njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH)
def _rms_rows(x, scale, eps, y):
    d = scale.shape[0]
    rows = x.size // d
    x2, y2 = x.reshape((rows, d)), y.reshape((rows, d))
    for r in range(rows):
        row = x2[r]
        inv = rms_inv(row, eps)
        out = y2[r]
        for i in range(d):
            out[i] = row[i] * inv * scale[i]


# Compiled only for the signatures ``_signature`` gives them (``_entry``)
_layer_rows._can_compile = False
_rms_rows._can_compile = False


def _signature(kernel, rank: int) -> tuple:
    """``kernel``'s argument types for float32 arrays of ``rank`` dimensions."""
    read = types.Array(types.float32, rank, "C", readonly=True)
    write = types.Array(types.float32, rank, "C")
    vector = types.Array(types.float32, 1, "C", readonly=True)
    if kernel is _layer_rows:
        return (read, read, types.boolean, vector, vector, types.float64, write, write,
                types.boolean)
    return (read, vector, types.float64, write)


class PreparedNorm:
    """A LayerNormalization, SkipLayerNormalization or RMSNormalization node whose scale
    and bias are the plan's initializers (``given``). ``kind``: "layer", "skip" or
    "rms"; ``outputs``: how many results the node takes (Y; Y and S for a skip whose S
    is used); ``last``: the normalized axis as the node gives it, -1 or a rank - 1."""

    __slots__ = ("general", "given", "kind", "scale", "bias", "eps", "d", "last", "outputs",
                 "op_type", "calls")

    def __init__(self, general, given, kind, scale, bias, eps, last, outputs, op_type=""):
        self.op_type = op_type  # (the compile notice names the operator: ``_notice``)
        self.general, self.given, self.kind = general, given, kind
        self.scale = np.ascontiguousarray(scale.reshape(-1), F32)
        self.d = self.scale.size
        self.bias = np.zeros(self.d, F32) if bias is None else \
            np.ascontiguousarray(bias.reshape(-1), F32)
        self.eps, self.last, self.outputs = float(eps), last, outputs
        self.calls = {}  # rank -> the kernel's compiled entry point (``_entry``)

    def _kernel(self, rank: int):
        call = self.calls.get(rank)
        if call is None:
            kernel = _rms_rows if self.kind == "rms" else _layer_rows
            call = self.calls[rank] = compiled_entry(kernel, _signature(kernel, rank))
        return call

    def _fits(self, X) -> bool:
        return (X.dtype is F32 and X.ndim > 0 and X.shape[-1] == self.d and X.size > 0
                and (self.last == -1 or self.last == X.ndim - 1) and X.flags.c_contiguous
                and X.size < min_parallel())

    def __call__(self, X, *inputs, **attributes):
        given = self.given
        if self.kind == "skip":
            Skip, scale, bias = (inputs + (None, None))[:3]
            if scale is given[0] and bias is given[1] and self._fits(X) \
                    and type(Skip) is np.ndarray and Skip.shape == X.shape \
                    and Skip.dtype is F32 and Skip.flags.c_contiguous:
                Y = empty_known(X.shape, F32, X.nbytes)
                S = empty_known(X.shape, F32, X.nbytes) if self.outputs > 1 else Y
                self._kernel(X.ndim)(X, Skip, True, self.scale, self.bias, self.eps, Y, S,
                                     self.outputs > 1)
                return (Y, S) if self.outputs > 1 else Y
        else:
            scale, bias = (inputs + (None,))[:2]
            if scale is given[0] and bias is given[1] and self._fits(X):
                Y = empty_known(X.shape, F32, X.nbytes)
                if self.kind == "rms":
                    self._kernel(X.ndim)(X, self.scale, self.eps, Y)
                else:
                    self._kernel(X.ndim)(X, X, False, self.scale, self.bias, self.eps, Y, Y,
                                         False)
                return Y
        return self.general(X, *inputs, **attributes)


def prepare_norm(general, kind, node, attrs: dict, constants: dict):
    """The ``PreparedNorm`` of a node, or None where its scale or bias is not an
    initializer of float32, or it normalizes more than the last axis or keeps its
    statistics."""
    first = 2 if kind == "skip" else 1  # the scale's input index
    names = list(node.input) + [""] * 4
    scale, bias = constants.get(first), constants.get(first + 1)
    if scale is None or scale.dtype != F32 or (names[first + 1] and bias is None) \
            or kind == "rms" and names[first + 1]:
        return None
    if bias is not None and (bias.dtype != F32 or bias.size != scale.size):
        return None
    if scale.ndim != 1 or attrs.get("stash_type", 1) != 1:
        return None  # a scale over several axes: the general kernel's rules
    axis = attrs.get("axis", -1)
    if axis != -1 and axis < 0:
        return None
    outputs = max((i + 1 for i, name in enumerate(node.output) if name), default=0)
    if outputs > (2 if kind == "skip" else 1):
        return None  # Mean / InvStdDev wanted: the general kernel computes them
    last = -1 if axis == -1 else axis
    return PreparedNorm(general, (scale, bias), kind, scale, bias,
                        attrs.get("epsilon", 1e-5), last, outputs, node.op_type)


def install_prepare(general, kind: str) -> None:
    """Give the norm kernel ``general`` its plan-time hook: ``prepare_norm`` for its nodes."""
    def prepare(node, attrs: dict, constants: dict, shapes: dict):
        return prepare_norm(general, kind, node, attrs, constants)

    general.prepare = prepare
