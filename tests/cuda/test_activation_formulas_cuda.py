"""The activation formulas shared by the cpu and cuda kernels, as the cuda kernels run
them (``_scalar``'s set, in the elementwise map kernel), against onnx's reference runtime
on float32 edges: NaN, +-inf, +-0, large values (tests/activation_cases.py).

Runs on a GPU, or under the simulator: ``NUMBA_ENABLE_CUDASIM=1 pytest tests/cuda``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.activation_cases import CASES, expected, inputs, tolerance



@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # simulated threads meet inf * 0
@pytest.mark.parametrize("case", CASES, ids=[c.formula for c in CASES])
def test_cuda_formula_matches_onnx_reference(case):
    from onnxkit.kernels.cuda import _scalar
    from onnxkit.kernels.cuda._device import host
    from onnxkit.kernels.cuda._elementwise import unary

    x = inputs()
    y = host(unary(x, getattr(_scalar.FORMULAS, case.formula), case.p0, case.p1))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, expected(case, x), **tolerance(case))
