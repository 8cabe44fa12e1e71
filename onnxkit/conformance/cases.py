"""Where the cases come from.

- node cases: ``onnx.backend.test.case.node.collect_testcases()`` builds every node test
  of the installed onnx from its case definitions (inputs and expected outputs in memory),
  once per onnx version: later processes read them from a file (``case_file``);
- model cases: the folders shipped in ``onnx/backend/test/data`` (simple,
  pytorch-converted, pytorch-operator) and the light model-zoo nets, whose inputs onnx
  generates deterministically and whose expected outputs ship beside them.
"""

from __future__ import annotations

import glob
import os
import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import onnx
from onnx import ModelProto, numpy_helper

DATA_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
MODEL_KINDS = ("simple", "pytorch-converted", "pytorch-operator", "light")


@dataclass
class Case:
    """One conformance case: a model, its data sets (inputs, expected outputs), tolerances."""

    name: str
    kind: str  # "node", "simple", "pytorch-converted", "pytorch-operator", "light"
    rtol: float
    atol: float
    model_path: str | None = None
    _model: ModelProto | None = field(default=None, repr=False)
    _data_sets: list | None = field(default=None, repr=False)

    @property
    def model(self) -> ModelProto:
        if self._model is None:
            self._model = onnx.load(self.model_path)
        return self._model

    @property
    def data_sets(self) -> list[tuple[list, list]]:
        if self._data_sets is None:
            self._data_sets = _load_data_sets(self)
        return self._data_sets

    @property
    def op_types(self) -> list[str]:
        """Operators of the main graph, ``domain::Op`` outside the default domain."""
        return sorted({(f"{n.domain}::" if n.domain not in ("", "ai.onnx") else "") + n.op_type
                       for n in self.model.graph.node})

    def feeds(self, inputs: list) -> dict[str, Any]:
        init = {t.name for t in self.model.graph.initializer}
        names = [i.name for i in self.model.graph.input if i.name not in init]
        return dict(zip(names, inputs))


def _as_value(item):
    if isinstance(item, onnx.TensorProto):
        return numpy_helper.to_array(item)
    return item


@lru_cache(maxsize=1)
def node_cases() -> tuple[Case, ...]:
    """Every node case of the installed onnx, sorted by name: from the file an earlier
    process wrote (``case_file``), else built and written."""
    from onnxkit.conformance import case_file

    where = case_file.path()
    cases = case_file.read(where, lambda name, rtol, atol, model, data:
                           Case(name, "node", rtol, atol, None, model, data))
    if cases is None:
        cases = _build_node_cases()
        case_file.write(cases, where)
    return cases


def _build_node_cases() -> tuple[Case, ...]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        raw = collect_testcases(None)
    cases = []
    for tc in raw:
        data = [([_as_value(i) for i in ins], [_as_value(o) for o in outs]) for ins, outs in tc.data_sets]
        cases.append(Case(tc.name, "node", tc.rtol, tc.atol, None, tc.model, data))
    return tuple(sorted(cases, key=lambda c: c.name))


@lru_cache(maxsize=1)
def model_cases() -> tuple[Case, ...]:
    cases = []
    for kind in ("simple", "pytorch-converted", "pytorch-operator"):
        for folder in sorted(glob.glob(os.path.join(DATA_DIR, kind, "test_*"))):
            cases.append(Case(os.path.basename(folder), kind, 1e-3, 1e-7,
                              os.path.join(folder, "model.onnx")))
    for path in sorted(glob.glob(os.path.join(DATA_DIR, "light", "light_*.onnx"))):
        name = "test_" + os.path.basename(path)[len("light_"):-len(".onnx")]
        cases.append(Case(name, "light", 1e-3, 1e-7, path))
    return tuple(cases)


def all_cases() -> tuple[Case, ...]:
    return node_cases() + model_cases()


def _load_data_sets(case: Case) -> list[tuple[list, list]]:
    model = case.model
    if case.kind == "light":
        return [_light_data_set(case, model)]
    folder = os.path.dirname(case.model_path)
    sets = []
    for data_dir in sorted(glob.glob(os.path.join(folder, "test_data_set*"))):
        n_in = len(glob.glob(os.path.join(data_dir, "input_*.pb")))
        n_out = len(glob.glob(os.path.join(data_dir, "output_*.pb")))
        inputs = [_read_pb(os.path.join(data_dir, f"input_{i}.pb"), model.graph.input[i].type)
                  for i in range(n_in)]
        outputs = [_read_pb(os.path.join(data_dir, f"output_{i}.pb"), model.graph.output[i].type)
                   for i in range(n_out)]
        sets.append((inputs, outputs))
    return sets


def _light_data_set(case: Case, model: ModelProto):
    """onnx's own deterministic inputs for the light nets, and the shipped outputs."""
    from onnx.backend.test.runner import Runner

    init = {t.name for t in model.graph.initializer}
    inputs = [Runner.generate_dummy_data(vi, seed=0, name=case.name, random=False)
              for vi in model.graph.input if vi.name not in init]
    prefix = os.path.splitext(case.model_path)[0]
    outputs = []
    for i, vi in enumerate(model.graph.output):
        outputs.append(_read_pb(f"{prefix}_output_{i}.pb", vi.type))
    return inputs, outputs


def _read_pb(path: str, type_proto) -> Any:
    with open(path, "rb") as f:
        content = f.read()
    if type_proto.HasField("sequence_type"):
        seq = onnx.SequenceProto()
        seq.ParseFromString(content)
        return numpy_helper.to_list(seq)
    if type_proto.HasField("optional_type"):
        opt = onnx.OptionalProto()
        opt.ParseFromString(content)
        return numpy_helper.to_optional(opt)
    tensor = onnx.TensorProto()
    tensor.ParseFromString(content)
    return numpy_helper.to_array(tensor)
