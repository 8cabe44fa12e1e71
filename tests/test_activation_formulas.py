"""The activation formulas shared by the cpu and cuda kernels, as the cpu kernels compile
them (njit, their fast-math flags, float32 constants and primitives), against onnx's
reference runtime on float32 edges: NaN, +-inf, +-0, large values.

The cuda side of the same table runs under the simulator:
tests/cuda/test_activation_formulas_cuda.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import float32, njit

from onnxkit.kernels.cpu._math import FASTMATH, FORMULAS
from tests.activation_cases import CASES, expected, inputs, tolerance


def _compiled(formula):
    f = njit(fastmath=FASTMATH, error_model="numpy")(formula)

    @njit(fastmath=FASTMATH, error_model="numpy")
    def apply(x, p0, p1, y):
        for i in range(x.size):
            y[i] = f(x[i], p0, p1)

    return f, apply


@pytest.mark.parametrize("case", CASES, ids=[c.formula for c in CASES])
def test_cpu_formula_matches_onnx_reference(case):
    x = inputs()
    f, apply = _compiled(getattr(FORMULAS, case.formula))
    y = np.empty_like(x)
    with np.errstate(all="ignore"):
        apply(x, np.float32(case.p0), np.float32(case.p1), y)
    np.testing.assert_allclose(y, expected(case, x), **tolerance(case))
    # float32 in, float32 out: no float64 constant promotes the kernel's arithmetic
    assert [s.return_type for s in f.nopython_signatures] == [float32]
