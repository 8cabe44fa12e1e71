"""Cases for the older versions of each operator onnxkit implements (kind ``"version"``).

onnx's suite tests each operator at its newest version; models in the wild use opsets
7-21. Two sources of older-version cases, neither of which asks onnxkit what is right:

1. **onnx's own cases, re-stamped**: every single-node onnx case, for every older version
   of its operator that onnxkit implements, with the opset lowered to that version (IR
   version to match). Kept only where (a) onnx's checker with strict shape inference accepts
   the node under the older schema (inputs, attributes, types: "the signature allows") and
   (b) onnx's ``ReferenceEvaluator``, which implements each version separately, reproduces
   the case's expected outputs at that version within the case's tolerance: where the
   semantics changed between versions the two disagree and the case is dropped. Where
   onnx.reference has one implementation for all versions it cannot tell, so the versions
   the changelog marks as different (``SEMANTICS_CHANGED``) are left to (2), and a string
   attribute value must be named in the older schema's text.
   Expected values are the case's own (onnx's numpy definitions).
2. **hand-written cases** for the differences the changelog names (``versions_written``):
   Softmax's 2-D coercion before 13, Split's attribute before 13, Resize-10's asymmetric
   coordinates, attributes that became inputs (Clip, Pad, ReduceSum, Unsqueeze, TopK, Slice),
   with expected values computed by hand in numpy from the spec's formula.

Building (1) runs onnx's checker and reference on ~1,400 cases, so its result is recorded in
``version_cases.json`` (case name, version): ``python -m onnxkit.conformance.versions``
rebuilds it for the installed onnx; the kit re-stamps the listed cases when it loads them.
"""

from __future__ import annotations

import copy
import json
import os
import warnings
from functools import lru_cache

import numpy as np
import onnx
from onnx import helper

from onnxkit.conformance.cases import Case, node_cases
from onnxkit.conformance.compare import assert_outputs_close

OLDEST_OPSET = 7  # the oldest opset onnx's version converter and most runtimes still read
MANIFEST = os.path.join(os.path.dirname(__file__), "version_cases.json")

# Versions whose semantics differ from the newer one for inputs the older signature still
# accepts, where onnx.reference has one implementation for all versions (so it cannot tell):
# op -> the first version with today's semantics. From onnx's Changelog.md.
SEMANTICS_CHANGED = {
    "Softmax": 13, "LogSoftmax": 13, "Hardmax": 13,  # before 13: input coerced to 2-D at axis
    "Resize": 11, "Upsample": 9,                     # before 11: asymmetric coordinates only
    "BatchNormalization": 9,                         # before 9: the 'spatial' attribute
    "OneHot": 11,                                    # before 11: negative indices are "off"
    "GridSample": 20,                                # before 20: 4-D inputs only
}


def implemented_versions() -> dict[tuple[str, str], list[int]]:
    """(domain, op_type) -> since_versions onnxkit's reference executor implements."""
    from onnxkit.ops import load_reference_kernels

    table: dict[tuple[str, str], list[int]] = {}
    for kernel in load_reference_kernels():
        table.setdefault((kernel.domain, kernel.op_type), []).append(kernel.since_version)
    return {k: sorted(v) for k, v in table.items()}


def _older_model(model: onnx.ModelProto, opset: int) -> onnx.ModelProto:
    out = copy.deepcopy(model)
    del out.opset_import[:]
    out.opset_import.append(helper.make_opsetid("", opset))
    out.ir_version = helper.find_min_ir_version_for([helper.make_opsetid("", opset)], True)
    return out


def _string_values_known(node, schema) -> bool:
    """Every string attribute value is named in the older schema's text (enum values such as
    Resize's ``half_pixel_symmetric`` arrived in later versions)."""
    text = schema.doc or ""
    for attr in node.attribute:
        if attr.type == onnx.AttributeProto.STRING and attr.name in schema.attributes:
            value = attr.s.decode("utf-8", "replace")
            if value and value not in text + schema.attributes[attr.name].description:
                return False
    return True


def _agrees_with_onnx(case: Case, model: onnx.ModelProto) -> bool:
    from onnx.reference import ReferenceEvaluator

    node = model.graph.node[0]
    schema = onnx.defs.get_schema(node.op_type, model.opset_import[0].version, "")
    if not _string_values_known(node, schema):
        return False
    try:
        onnx.checker.check_model(model, full_check=True)
        sess = ReferenceEvaluator(model)
        for inputs, expected in case.data_sets:
            with np.errstate(all="ignore"):
                got = sess.run(None, case.feeds(inputs))
            assert_outputs_close(expected, list(got), case.rtol, case.atol)
    except Exception:  # refused by the older schema, or the semantics differ there
        return False
    return True


def restamped_cases(min_opset: int = OLDEST_OPSET) -> list[Case]:
    """onnx's single-node cases at each older version of their operator (see the module doc)."""
    implemented = implemented_versions()
    out = []
    for case in node_cases():
        graph = case.model.graph
        if len(graph.node) != 1 or graph.node[0].domain not in ("", "ai.onnx"):
            continue
        if len(case.model.opset_import) != 1 or case.model.functions:
            continue
        node = graph.node[0]
        opset = case.model.opset_import[0].version
        try:
            current = onnx.defs.get_schema(node.op_type, opset, "").since_version
        except onnx.defs.SchemaError:
            continue
        for since in implemented.get(("", node.op_type), []):
            if since >= current or since < max(min_opset, SEMANTICS_CHANGED.get(node.op_type, 0)):
                continue
            older = _older_model(case.model, since)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if not _agrees_with_onnx(case, older):
                    continue
            out.append(Case(f"{case.name}_v{since}", "version", case.rtol, case.atol, None,
                            older, case.data_sets))
    return out


def write_manifest(path: str = MANIFEST) -> int:
    """Build the re-stamped cases and record them (case name, version) in ``path``."""
    pairs = sorted((c.name.rsplit("_v", 1)[0], c.model.opset_import[0].version) for c in restamped_cases())
    with open(path, "w") as f:
        json.dump({"onnx": onnx.__version__, "cases": pairs}, f, indent=0)
    return len(pairs)


def manifest_cases(path: str = MANIFEST) -> list[Case]:
    """The re-stamped cases the manifest lists, rebuilt from onnx's cases (no checks re-run)."""
    with open(path) as f:
        manifest = json.load(f)
    by_name = {c.name: c for c in node_cases()}
    out = []
    for name, since in manifest["cases"]:
        case = by_name.get(name)
        if case is not None:
            out.append(Case(f"{name}_v{since}", "version", case.rtol, case.atol, None,
                            _older_model(case.model, since), case.data_sets))
    return out


@lru_cache(maxsize=1)
def version_cases() -> tuple[Case, ...]:
    """Every older-version case: onnx's re-stamped (from the manifest), then the hand-written."""
    from onnxkit.conformance.versions_written import written_cases

    return tuple(manifest_cases()) + tuple(written_cases())


if __name__ == "__main__":  # python -m onnxkit.conformance.versions: rebuild the manifest
    print(f"{write_manifest()} re-stamped cases written to {MANIFEST}")


__all__ = ["version_cases", "restamped_cases", "implemented_versions", "OLDEST_OPSET"]
