"""Elementwise kernel templates: one thread per output element.

    map:   out[i] = f(x[i], p0, p1)                         (same shape)
    zip:   out[i] = f(a[off_a(i)], b[off_b(i)])             (numpy broadcasting)
    where: out[i] = x[off_x(i)] if cond[off_c(i)] else y[off_y(i)]
    strided: out[i] = x[base + off(i)]      (any strides: Transpose, Expand, Slice, Split)

``off(i) = broadcast_offset(i, out_shape, strides)`` with stride 0 on broadcast axes
(``onnxkit.kernels.indexing``); an input that already has the output's shape skips it.
A template is compiled once per formula (``f`` is a CUDA device function made from a
plain function of ``_scalar``) and then once per dtype signature by numba.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numba import cuda

from onnxkit.kernels.cuda._device import DeviceTensor, device, empty, launch_1d, shape_tuple
from onnxkit.kernels.indexing import broadcast_offset, broadcast_strides, for_cuda

_offset = for_cuda(broadcast_offset)


@lru_cache(maxsize=None)
def map_kernel(formula):
    f = for_cuda(formula)

    @cuda.jit
    def kernel(x, p0, p1, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = f(x[i], p0, p1)

    return kernel


@lru_cache(maxsize=None)
def zip_kernel(formula):
    f = for_cuda(formula)

    @cuda.jit
    def kernel(a, a_strides, a_full, b, b_strides, b_full, shape, out):
        i = cuda.grid(1)
        if i < out.size:
            ia = i if a_full else _offset(i, shape, a_strides)
            ib = i if b_full else _offset(i, shape, b_strides)
            out[i] = f(a[ia], b[ib])

    return kernel


@cuda.jit
def _where_kernel(c, c_strides, x, x_strides, y, y_strides, shape, out):
    i = cuda.grid(1)
    if i < out.size:
        if c[_offset(i, shape, c_strides)]:
            out[i] = x[_offset(i, shape, x_strides)]
        else:
            out[i] = y[_offset(i, shape, y_strides)]


@cuda.jit
def _strided_kernel(x, base, shape, strides, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[base + _offset(i, shape, strides)]


@cuda.jit
def _fill_kernel(value, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = value


def full(shape, dtype, value) -> DeviceTensor:
    """A new DeviceTensor of ``shape`` holding ``value`` everywhere."""
    out = empty(shape, dtype)
    launch_1d(_fill_kernel, out.size, np.dtype(dtype).type(value), out.flat)
    return out


def unary(X, formula, p0: float = 0.0, p1: float = 0.0, out_dtype=None) -> DeviceTensor:
    """``formula(x, p0, p1)`` of every element, in ``X``'s dtype (or ``out_dtype``)."""
    X = device(X)
    out = empty(X.shape, X.dtype if out_dtype is None else out_dtype)
    launch_1d(map_kernel(formula), out.size, X.flat, float(p0), float(p1), out.flat)
    return out


def broadcast_shape(*shapes) -> tuple:
    return tuple(np.broadcast_shapes(*shapes))


def _strides(t: DeviceTensor, shape) -> tuple:
    return shape_tuple(broadcast_strides(t.shape, shape)) if shape else (0,)


def binary(A, B, formula, out_dtype=None) -> DeviceTensor:
    """``formula(a, b)`` with numpy broadcasting, in ``A``'s dtype (or ``out_dtype``)."""
    A, B = device(A), device(B)
    shape = broadcast_shape(A.shape, B.shape)
    out = empty(shape, A.dtype if out_dtype is None else out_dtype)
    launch_1d(zip_kernel(formula), out.size, A.flat, _strides(A, shape), A.shape == shape,
              B.flat, _strides(B, shape), B.shape == shape, shape_tuple(shape), out.flat)
    return out


def where(C, X, Y) -> DeviceTensor:
    """``X`` where ``C`` is true, else ``Y`` (all three broadcast together)."""
    C, X, Y = device(C), device(X), device(Y)
    shape = broadcast_shape(C.shape, X.shape, Y.shape)
    out = empty(shape, X.dtype)
    launch_1d(_where_kernel, out.size, C.flat, _strides(C, shape), X.flat, _strides(X, shape),
              Y.flat, _strides(Y, shape), shape_tuple(shape), out.flat)
    return out


def strided(X: DeviceTensor, shape, strides, base: int = 0) -> DeviceTensor:
    """A new tensor of ``shape`` whose element ``i`` is ``X.flat[base + off(i)]``, ``off``
    walking ``strides`` (0: broadcast, permuted: transposed, step * stride: sliced)."""
    out = empty(shape, X.dtype)
    launch_1d(_strided_kernel, out.size, X.flat, int(base), shape_tuple(shape),
              shape_tuple(strides) if len(shape) else (0,), out.flat)
    return out
