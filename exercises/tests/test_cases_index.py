"""The node-case index finds exactly the cases of the full collection, for every operator."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from exercises.tests.cases import node_cases_of
from onnxkit.conformance import node_cases

pytestmark = pytest.mark.maintainer


def test_the_index_finds_every_operators_cases():
    full = defaultdict(list)
    for case in node_cases():
        if len(case.op_types) == 1 and "::" not in case.op_types[0]:
            full[case.op_types[0]].append(case)
    assert len(full) > 150
    for op_type, cases in full.items():
        got = node_cases_of(op_type)
        assert [c.name for c in got] == [c.name for c in cases], op_type
    for op_type in ("LeakyRelu", "Softmax", "Gemm", "MaxPool", "Conv", "LayerNormalization"):
        for mine, theirs in zip(node_cases_of(op_type), full[op_type]):
            assert (mine.rtol, mine.atol) == (theirs.rtol, theirs.atol)
            for (ins, outs), (ins2, outs2) in zip(mine.data_sets, theirs.data_sets):
                for a, b in zip(ins + outs, ins2 + outs2):
                    np.testing.assert_array_equal(a, b)
