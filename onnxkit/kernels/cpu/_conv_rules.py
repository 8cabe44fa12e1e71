"""Which algorithm a 2-D floating-point convolution layer runs: one table, read top down.

A layer may run each algorithm whose "may run" test it passes. By default the first row
whose "the rule picks it" test it passes too runs it: the same choice on every machine
and in every process, so the same model gives the same bits. With ``tune=True``
(``Session(..., tune=True)`` or ``ONNXKIT_CPU_TUNE=1``) every algorithm the layer may
run is timed on its first call and the fastest serves it (``_tuning.timed``). The choice
is made per node and input shape, and kept on the plan's step (``conv.PreparedConv``).

| algorithm | may run                                              | the rule picks it          |
|-----------|------------------------------------------------------|----------------------------|
| depthwise | one input channel per filter, group = channels       | always (it alone may run)  |
| dots      | at most 64 output pixels per image                   | at most 16                 |
| winograd4 | 3x3, stride and dilation 1, one group, float32, 16+  | 49+ tiles of 4x4 per image |
|           | channels each side, W an initializer, U <= 16 MiB    | (28x28 output planes, up)  |
| winograd  | the same, U at most 8 MiB                            | 36+ tiles of 2x2 per image,|
|           |                                                      | or U at most 1 MiB         |
| bands     | 1x1, stride 1, unpadded, one group, M*C <= 65536,    | never: when timed only     |
|           | 2048+ output pixels                                  |                            |
| im2col    | any layer (im2col or the input as it lies, + BLAS;   | always                     |
|           | stems by row bands)                                  |                            |

Every algorithm but im2col needs an activation the kernels apply in their own loops
(``_math.split_activation``). The thresholds' measurements are in ``docs/cpu.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from onnxkit.kernels.cpu import _banded, _pixel_dots, _winograd, _winograd4
from onnxkit.kernels.cpu._pointwise import is_pointwise


@dataclass(frozen=True)
class Facts:
    """What the table reads of a layer: X (N, C, H, W), W (M, C/group, KH, KW)."""

    X: object
    W: object
    group: int
    strides: tuple
    dilations: tuple
    out: tuple  # the output plane (OH, OW)
    fused: bool  # the activation is one the kernels apply in their loops
    pointwise: bool  # 1x1, stride 1, unpadded, one group: the input is its own columns
    constant: bool = False  # W is an initializer of the plan (its transforms are kept)

    @property
    def pixels(self) -> int:
        return self.out[0] * self.out[1]


def facts(X, W, group: int, g, code, constant: bool = False) -> Facts:
    """The facts of a layer of geometry ``g`` (``_geometry.layer_geometry``) whose
    activation has the kernels' ``code`` (None: left to the reference); ``constant``:
    W is an initializer, which the plan knows."""
    return Facts(X, W, group, tuple(g.strides), tuple(g.dilations), tuple(g.out),
                 code is not None,
                 code is not None and group == 1 and is_pointwise(W, g, X.shape[2:]),
                 constant)


def _depthwise(f: Facts) -> bool:
    return f.fused and f.group == f.X.shape[1] and f.W.shape[1] == 1


def _winograd4_may(f: Facts) -> bool:
    return (f.fused and f.constant
            and _winograd4.eligible(f.X, f.W, f.group, f.strides, f.dilations))


def _winograd_may(f: Facts) -> bool:
    return (f.fused and f.constant
            and _winograd.eligible(f.X, f.W, f.group, f.strides, f.dilations))


def _bands_may(f: Facts) -> bool:
    m, c = f.W.shape[:2]
    return f.pointwise and _banded.pointwise_eligible(m, c, f.pixels, f.group, f.X.itemsize)


@dataclass(frozen=True)
class Row:
    algorithm: str
    may_run: Callable[[Facts], bool]
    rule: Callable[[Facts], bool]


def _always(f: Facts) -> bool:
    return True


def _never(f: Facts) -> bool:
    return False


CONV = (
    Row("depthwise", _depthwise, _always),
    Row("dots", lambda f: f.fused and _pixel_dots.eligible(f.pixels),
        lambda f: _pixel_dots.rule(f.pixels)),
    Row("winograd4", _winograd4_may, lambda f: _winograd4.size_rule(f.out)),
    Row("winograd", _winograd_may, lambda f: _winograd.size_rule(f.W, f.out)),
    Row("bands", _bands_may, _never),
    Row("im2col", _always, _always),
)


def may_run(f: Facts) -> list[str]:
    """The algorithms the layer may run, in the table's order (depthwise alone)."""
    names = [row.algorithm for row in CONV if row.may_run(f)]
    return names[:1] if names[0] == "depthwise" else names


def rule(f: Facts) -> str:
    """The algorithm the static rule runs the layer with."""
    return next(row.algorithm for row in CONV if row.may_run(f) and row.rule(f))
