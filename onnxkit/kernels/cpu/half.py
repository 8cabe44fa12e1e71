"""float16 nodes on the ``cpu`` executor: computed in float32, stored as float16.

The compiled kernels take float32 (``_dtypes.COMPILED``), and numpy computes float16 one
element at a time, far slower than float32 (docs/cpu.md). So a node of an
operator in ``OPS`` whose inputs are float16 runs that operator's float32 kernel between
two casts (``_half``):

    inputs:  float16 -> float32   (an initializer once, when the plan is built)
    kernel:  the operator's cpu kernel, prepared for the node as a float32 one
    outputs: float32 -> float16, rounded to nearest even (those of the inputs' type:
             not LayerNormalization's float32 Mean / InvStdDev)

Which nodes: decided when the plan is built (``HalfPrepare``), from what the plan knows
of the inputs: an initializer's dtype, or a type the model declares. A node with neither
keeps the operator's kernel as it is (float16 inputs then go to its reference kernel).
Rounding: Add, Sub, Mul, Div, Relu... give numpy's float16 answers bit for bit (float32
holds their exact results far past float16's precision); products, norms and softmax
accumulate in float32, as onnxruntime's cpu float16 nodes without a float16 kernel do
(between the Casts it inserts). Control-flow style kernels (``context=True``) are not
wrapped.

``install`` gives the cpu kernels of ``OPS`` their ``prepare`` hook (the plan's, see
``onnxkit.runtime.plan.prepare_kernel``), around the one an operator has already.
"""

from __future__ import annotations

import numpy as np

from onnxkit.kernels.cpu import CPU
from onnxkit.kernels.cpu import (activations, batch_norm, binary, conv,  # noqa: F401
                                 conv_transpose, einsum, gemm, instance_norm, layer_norm,
                                 matmul, pool, recurrent, reduce_mean, rms_norm, softmax)
from onnxkit.kernels.cpu._half import FLOAT, HALF, narrow, widen
from onnxkit.kernels.cpu._route import note, taken

ALL = None  # every float output is rounded to float16
WIDE = (FLOAT, np.dtype(np.float64))  # the outputs rounded back
ONNXKIT = "onnxkit"

#: (domain, op_type) -> the outputs rounded back to float16 (ALL: every float one);
#: the ops whose cpu kernels compute in float32 (``_dtypes.COMPILED``, numpy float32).
#: Not onnxkit::Attention: its kernel widens float16 itself, keeping the inputs' layout
#: (the 4-D views an unfused graph hands it run its products faster than copies)
OPS = {
    ("", "Conv"): ALL, (ONNXKIT, "FusedConv"): ALL, ("", "ConvTranspose"): ALL,
    ("", "MatMul"): ALL, (ONNXKIT, "FusedMatMul"): ALL, ("", "Gemm"): ALL,
    (ONNXKIT, "FusedGemm"): ALL, ("", "Einsum"): ALL,
    ("", "LayerNormalization"): (0,), (ONNXKIT, "LayerNormalization"): (0,),
    (ONNXKIT, "SkipLayerNormalization"): ALL,
    ("", "RMSNormalization"): ALL, (ONNXKIT, "RMSNormalization"): ALL,
    ("", "Softmax"): ALL,
    ("", "BatchNormalization"): ALL, (ONNXKIT, "FusedBatchNormalization"): ALL,
    ("", "InstanceNormalization"): ALL, ("", "AveragePool"): ALL,
    ("", "ReduceMean"): ALL, ("", "GlobalAveragePool"): ALL,
    ("", "Add"): ALL, ("", "Sub"): ALL, ("", "Mul"): ALL, ("", "Div"): ALL, ("", "Sum"): ALL,
    ("", "Relu"): ALL, ("", "LeakyRelu"): ALL, ("", "Clip"): ALL, ("", "HardSigmoid"): ALL,
    ("", "HardSwish"): ALL, ("", "Gelu"): ALL, (ONNXKIT, "Gelu"): ALL, ("", "Erf"): ALL,
    ("", "Sigmoid"): ALL, ("", "Tanh"): ALL, ("", "Swish"): ALL,
    ("", "LSTM"): ALL, ("", "GRU"): ALL, ("", "RNN"): ALL,
}


def _is_half(constants: dict, shapes: dict) -> bool:
    """A float16 initializer, or an input the model declares float16 (of a static shape
    or not: the plan's ``dtypes``)."""
    return (any(c.dtype == HALF for c in constants.values())
            or any(dtype == HALF for _, dtype in shapes.values())
            or any(dtype == HALF for dtype in getattr(shapes, "dtypes", {}).values()))


def _widened(a):
    """A float16 initializer as the float32 array the kernel is given on every call
    (read-only, as initializers are)."""
    if a.dtype != HALF:
        return a
    w = widen(a)
    w.flags.writeable = False
    return w


class HalfKernel:
    """One float16 node's kernel: ``kernel`` (the float32 one, prepared for the node when
    it has a ``prepare`` hook) between ``widen`` and ``narrow``; ``constants``: input index
    -> the float32 initializer given in its place. Called as the registered kernel is."""

    __slots__ = ("kernel", "constants", "outputs", "op_type")

    def __init__(self, kernel, constants: dict, outputs, op_type: str):
        self.kernel, self.constants, self.outputs = kernel, constants, outputs
        self.op_type = op_type  # (the compile notice names the operator: ``_notice``)

    @property
    def algorithm(self):
        """What the float32 kernel runs (a Conv's algorithm), as ``Step.algorithm`` reads."""
        return getattr(self.kernel, "algorithm", None)

    def __call__(self, *args, **attrs):
        constants, half, given = self.constants, bool(self.constants), []
        for i, a in enumerate(args):
            if i in constants:
                a = constants[i]
            elif a is not None and getattr(a, "dtype", None) == HALF:
                a, half = widen(a), True
            given.append(a)
        if not half:  # no float16 input after all: the float32 kernel's answer as it is
            return self.kernel(*given, **attrs)
        taken()  # an earlier node's note (an untraced run collects none): not this node's
        Y = self.kernel(*given, **attrs)
        inner = taken()
        note(f"{inner} in float32" if inner else "float32")
        if isinstance(Y, tuple):
            return tuple(self._narrowed(i, y) for i, y in enumerate(Y))
        return self._narrowed(0, Y)

    def _narrowed(self, i, y):
        dtype = getattr(y, "dtype", None)
        if dtype not in WIDE or self.outputs is not ALL and i not in self.outputs:
            return y
        # (float64: a reference kernel that computed wider; rounded once, by numpy)
        return narrow(y) if dtype == FLOAT else np.asarray(y).astype(HALF)


class HalfPrepare:
    """The plan-time hook of an operator of ``OPS``: for a float16 node, a ``HalfKernel``
    around the operator's kernel prepared as for float32 (``before``: the operator's own
    hook, or None); for any other node, what ``before`` gives (None: the kernel as is)."""

    def __init__(self, fn, before, outputs, op_type: str):
        self.fn, self.before, self.outputs, self.op_type = fn, before, outputs, op_type

    def __call__(self, node, attrs: dict, constants: dict, shapes: dict):
        if not _is_half(constants, shapes):
            return None if self.before is None else self.before(node, attrs, constants, shapes)
        wide = {i: _widened(c) for i, c in constants.items()}
        wide_shapes = type(shapes)({i: (shape, FLOAT if dtype == HALF else dtype)
                                    for i, (shape, dtype) in shapes.items()})
        if hasattr(shapes, "dtypes"):
            wide_shapes.dtypes = {i: FLOAT if dtype == HALF else dtype
                                  for i, dtype in shapes.dtypes.items()}
        kernel = None if self.before is None else self.before(node, attrs, wide, wide_shapes)
        return HalfKernel(self.fn if kernel is None else kernel,
                          {i: c for i, c in wide.items() if c is not constants[i]},
                          self.outputs, self.op_type)


def install(registry=CPU) -> None:
    """Give each kernel of ``OPS`` in ``registry`` its ``HalfPrepare`` hook (once)."""
    for kernel in registry:
        key = (kernel.domain, kernel.op_type)
        before = getattr(kernel.fn, "prepare", None)
        if key in OPS and not kernel.context and not isinstance(before, HalfPrepare):
            kernel.fn.prepare = HalfPrepare(kernel.fn, before, OPS[key], kernel.op_type)


install()
