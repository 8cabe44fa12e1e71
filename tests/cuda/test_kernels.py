"""Every cuda kernel against the reference kernels, one node at a time (tests/op_cases.py).

Runs on a GPU, or under the simulator: ``NUMBA_ENABLE_CUDASIM=1 pytest tests/cuda``.
"""

import warnings

import numpy as np
import pytest

import onnxkit
from tests.op_cases import CASES
from tests.op_cases_kinds import KINDS


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():  # simulated threads compute NaN/inf edge cases in numpy
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.mark.parametrize("case", CASES + KINDS, ids=[c.name for c in CASES + KINDS])
def test_matches_reference(case):
    model = case.model()
    expected = onnxkit.Session(model).run(None, case.feeds())
    sess = onnxkit.Session(model, executor="cuda")
    got = sess.run(None, case.feeds())
    for want, have in zip(expected, got):
        assert isinstance(have, np.ndarray)
        assert have.dtype == want.dtype and have.shape == want.shape
        np.testing.assert_allclose(have, want, rtol=case.rtol, atol=case.atol)
    stats = sess.executor.stats()
    if case.where == "cuda":
        assert stats["host_nodes"] == 0, stats["host_kernels"]
    else:
        assert stats["cuda_nodes"] == 0 and stats["host_nodes"] == 1
