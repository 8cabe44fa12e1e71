"""The node-case index finds exactly the cases of the full collection, for every operator."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest

from exercises.tests.cases import ROOT, build_index, index, node_cases_of
from onnxkit.conformance import node_cases

pytestmark = pytest.mark.maintainer


@pytest.fixture(scope="module")
def full():
    by_op = defaultdict(list)
    for case in node_cases():
        if len(case.op_types) == 1 and "::" not in case.op_types[0]:
            by_op[case.op_types[0]].append(case.name)
    return by_op


def test_the_shipped_index_is_what_a_fresh_build_records():
    assert index() == build_index()


def test_the_index_has_every_operator_of_the_full_collection(full):
    assert len(full) > 150
    assert sorted(full) == sorted(index())


@pytest.mark.parametrize("op_type", ["Cast", "Identity", "Clip", "LeakyRelu"])
def test_a_fresh_process_finds_exactly_the_operators_cases(full, op_type):
    """Cast and Identity cases come from modules that never name them (CastLike and Clip
    expanded), so a lookup in a process that imported nothing else must still find them."""
    code = ("import json, sys; from exercises.tests.cases import node_cases_of; "
            "print(json.dumps([c.name for c in node_cases_of(sys.argv[1])]))")
    done = subprocess.run([sys.executable, "-c", code, op_type], cwd=ROOT, check=True,
                          capture_output=True, text=True)
    assert json.loads(done.stdout) == sorted(full[op_type])


def test_the_cases_carry_the_collections_data_and_tolerances():
    by_name = {c.name: c for c in node_cases()}
    for op_type in ("LeakyRelu", "Softmax", "Gemm", "MaxPool", "Conv", "LayerNormalization"):
        mine = node_cases_of(op_type)
        assert mine
        for case in mine:
            theirs = by_name[case.name]
            assert (case.rtol, case.atol) == (theirs.rtol, theirs.atol)
            assert len(case.data_sets) == len(theirs.data_sets)
            for (ins, outs), (ins2, outs2) in zip(case.data_sets, theirs.data_sets):
                for a, b in zip(ins + outs, ins2 + outs2, strict=True):
                    np.testing.assert_array_equal(a, b)
