"""Reverse-mode rules: for one node, the gradients of its inputs from its output's.

Each rule takes (inputs, output, grad_out, attrs) and returns one gradient per input
(None where the input is not differentiable). Broadcasting is undone by ``unbroadcast``.

    Add   dA = g, dB = g            Mul  dA = g * B, dB = g * A
    Sub   dA = g, dB = -g           Div  dA = g / B, dB = -g * A / B^2
    MatMul dA = g @ B^T, dB = A^T @ g    Relu dA = g * (A > 0)   ...
"""

from __future__ import annotations

import numpy as np


def unbroadcast(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum ``grad`` over the axes numpy broadcasting added or stretched to reach it."""
    grad = np.asarray(grad)
    extra = grad.ndim - len(shape)
    if extra > 0:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad.reshape(shape)


def _add(ins, out, g, attrs):
    return [unbroadcast(g, ins[0].shape), unbroadcast(g, ins[1].shape)]


def _sub(ins, out, g, attrs):
    return [unbroadcast(g, ins[0].shape), unbroadcast(-g, ins[1].shape)]


def _mul(ins, out, g, attrs):
    a, b = ins
    return [unbroadcast(g * b, a.shape), unbroadcast(g * a, b.shape)]


def _div(ins, out, g, attrs):
    a, b = ins
    return [unbroadcast(g / b, a.shape), unbroadcast(-g * a / (b * b), b.shape)]


def _sum(ins, out, g, attrs):
    return [unbroadcast(g, x.shape) for x in ins]


def _matmul(ins, out, g, attrs):
    a, b = ins
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    g2 = g
    if a.ndim == 1:
        g2 = np.expand_dims(g2, -2)
    if b.ndim == 1:
        g2 = np.expand_dims(g2, -1)
    da = np.matmul(g2, np.swapaxes(b2, -1, -2))
    db = np.matmul(np.swapaxes(a2, -1, -2), g2)
    da = unbroadcast(da, a2.shape).reshape(a.shape)
    db = unbroadcast(db, b2.shape).reshape(b.shape)
    return [da, db]


def _gemm(ins, out, g, attrs):
    a, b = ins[0], ins[1]
    alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
    trans_a, trans_b = attrs.get("transA", 0), attrs.get("transB", 0)
    a_ = a.T if trans_a else a
    b_ = b.T if trans_b else b
    da_ = alpha * g @ b_.T
    db_ = alpha * a_.T @ g
    grads = [da_.T if trans_a else da_, db_.T if trans_b else db_]
    if len(ins) > 2 and ins[2] is not None:
        grads.append(unbroadcast(beta * g, ins[2].shape))
    return grads


def _transpose(ins, out, g, attrs):
    perm = attrs.get("perm")
    if perm is None:
        perm = list(range(ins[0].ndim))[::-1]
    return [np.transpose(g, np.argsort(perm))]


def _reshape_like(ins, out, g, attrs):
    return [g.reshape(ins[0].shape)] + [None] * (len(ins) - 1)


def _reduce_axes(ins, attrs):
    x = ins[0]
    axes = attrs.get("axes")
    if axes is None and len(ins) > 1 and ins[1] is not None and np.size(ins[1]):
        axes = np.asarray(ins[1]).reshape(-1).tolist()
    if axes is None or len(axes) == 0:
        return () if attrs.get("noop_with_empty_axes", 0) else tuple(range(x.ndim))
    return tuple(sorted(int(a) % x.ndim for a in axes))


def _reduce_sum(ins, out, g, attrs):
    axes = _reduce_axes(ins, attrs)
    if not attrs.get("keepdims", 1):
        g = np.expand_dims(g, axes)
    return [np.broadcast_to(g, ins[0].shape).copy()] + [None] * (len(ins) - 1)


def _reduce_mean(ins, out, g, attrs):
    axes = _reduce_axes(ins, attrs)
    count = int(np.prod([ins[0].shape[a] for a in axes])) if axes else 1
    grads = _reduce_sum(ins, out, g, attrs)
    return [grads[0] / count] + grads[1:]


RULES = {
    "ReduceSum": _reduce_sum,
    "ReduceMean": _reduce_mean,
    "Add": _add,
    "Sub": _sub,
    "Mul": _mul,
    "Div": _div,
    "Sum": _sum,
    "MatMul": _matmul,
    "Gemm": _gemm,
    "Neg": lambda ins, out, g, attrs: [-g],
    "Identity": lambda ins, out, g, attrs: [g],
    "Relu": lambda ins, out, g, attrs: [g * (ins[0] > 0)],
    "Abs": lambda ins, out, g, attrs: [g * np.sign(ins[0])],
    "Exp": lambda ins, out, g, attrs: [g * out],
    "Log": lambda ins, out, g, attrs: [g / ins[0]],
    "Sqrt": lambda ins, out, g, attrs: [g / (2 * out)],
    "Sigmoid": lambda ins, out, g, attrs: [g * out * (1 - out)],
    "Tanh": lambda ins, out, g, attrs: [g * (1 - out * out)],
    "Transpose": _transpose,
    "Reshape": _reshape_like,
    "Flatten": _reshape_like,
    "Squeeze": _reshape_like,
    "Unsqueeze": _reshape_like,
}
