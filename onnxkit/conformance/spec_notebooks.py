"""Write the spec-conformance notebooks (``spec_tests/notebooks/``) from the installed onnx.

One notebook per operator family; per operator its rule (the first sentences of onnx's
schema text) and a link to its spec page, then a cell per onnx node case calling
``spec_cells.show``. Each cell's saved output is ``spec_cells.render`` of onnx's expected
values (never of onnxkit's answers), so ``pytest --nbval spec_tests/notebooks`` passes for a
runtime exactly when it reproduces them within each case's tolerance. The runtime is
chosen with ``ONNXKIT_SPEC_RUNTIME`` (default ``reference``).

    python -m onnxkit.conformance.spec_notebooks [FOLDER] [--only OP,OP]
"""

from __future__ import annotations

import hashlib
import os
import re
import sys

import onnx

from onnxkit.conformance.cases import node_cases
from onnxkit.conformance.spec_cells import render

SPEC_PAGE = "https://onnx.ai/onnx/operators/onnx_{domain}_{op}.html"  # domain: "", "aionnxml"

# family -> operators (by op type); the rest of the default domain goes to "other"
FAMILIES = {
    "elementwise": "Abs Acos Acosh Add And Asin Asinh Atan Atanh BitShift BitwiseAnd BitwiseNot BitwiseOr "
                   "BitwiseXor Ceil Cos Cosh Div Equal Erf Exp Floor Greater GreaterOrEqual IsInf IsNaN Less "
                   "LessOrEqual Log Max Mean Min Mod Mul Neg Not Or Pow Reciprocal Round Sign Sin Sinh Sqrt "
                   "Sub Sum Tan Where Xor Clip",
    "activations": "Celu Elu Gelu HardSigmoid HardSwish Hardmax LeakyRelu LogSoftmax Mish PRelu Relu Selu "
                   "Shrink Sigmoid Softmax Softplus Softsign Swish Tanh ThresholdedRelu",
    "convolution-and-pooling": "AveragePool Conv ConvInteger ConvTranspose DeformConv GlobalAveragePool "
                               "GlobalLpPool GlobalMaxPool LpPool MaxPool MaxRoiPool MaxUnpool RoiAlign Col2Im",
    "normalization": "BatchNormalization GroupNormalization InstanceNormalization LayerNormalization "
                     "LpNormalization MeanVarianceNormalization RMSNormalization LRN",
    "reductions": "ArgMax ArgMin CumProd CumSum ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax "
                  "ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare TopK",
    "shape-and-indexing": "CenterCropPad Compress Concat Constant ConstantOfShape DepthToSpace Expand EyeLike "
                          "Flatten Gather GatherElements GatherND Identity NonZero OneHot Pad Range Reshape "
                          "Resize ReverseSequence ScatterElements ScatterND Shape Size Slice SpaceToDepth Split "
                          "Squeeze Tile Transpose Trilu Unique Unsqueeze Upsample",
    "control-flow": "If Loop Scan",
    "sequences-and-optionals": "ConcatFromSequence Optional OptionalGetElement OptionalHasElement "
                               "SequenceAt SequenceConstruct SequenceEmpty SequenceErase SequenceInsert "
                               "SequenceLength SequenceMap SplitToSequence",
    "strings": "RegexFullMatch StringConcat StringNormalizer StringSplit",
    "quantization": "DequantizeLinear DynamicQuantizeLinear MatMulInteger QLinearConv QLinearMatMul "
                    "QuantizeLinear",
}
_FAMILY_OF = {op: fam for fam, ops in FAMILIES.items() for op in ops.split()}


def family_of(domain: str, op: str) -> str:
    if domain == "ai.onnx.ml":
        return "ai-onnx-ml"
    if domain not in ("", "ai.onnx"):
        return "other-domains"
    return _FAMILY_OF.get(op, "other")


def rule(op: str, domain: str) -> str:
    """The first two sentences of onnx's schema text, on one line."""
    try:
        doc = onnx.defs.get_schema(op, domain).doc or ""
    except onnx.defs.SchemaError:
        return ""
    text = " ".join(re.sub(r"[`*]", "", doc).split())
    sentences = re.split(r"(?<=[.!?])\s+", text)
    return " ".join(sentences[:2])[:600]


def _tested_op(case) -> tuple[str, str]:
    node = case.model.graph.node
    main = node[-1] if node else None
    name = case.name
    for n in node:  # prefer the node whose op the case is named after
        if n.op_type.lower() in name.replace("_", "").lower():
            main = n
            break
    return (main.domain or "", main.op_type) if main is not None else ("", "?")


def case_modules() -> dict[str, str]:
    """case name -> the module of ``onnx.backend.test.case.node`` that defines it.

    onnx makes a module's cases while the module is imported, so they are listed by a
    fresh interpreter: in one that imported them before (``node_cases``, say) importing
    again makes nothing."""
    import json
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    code = ("import json; from onnxkit.conformance.spec_notebooks import _case_modules_here; "
            "print(json.dumps(_case_modules_here()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"listing onnx's node case modules failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def _case_modules_here() -> dict[str, str]:
    """``case_modules`` in this interpreter, which must not have imported them yet."""
    import importlib
    import pkgutil
    import warnings

    import numpy as np
    import onnx.backend.test.case.node as node_pkg

    where = {}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        prefix = node_pkg.__name__ + "."
        for info in sorted(pkgutil.walk_packages(node_pkg.__path__, prefix), key=lambda m: m.name):
            if info.ispkg:
                continue
            before = len(node_pkg._NodeTestCases)
            importlib.import_module(info.name)
            for tc in node_pkg._NodeTestCases[before:]:
                where[tc.name] = info.name[len(prefix):]
    return where


def _excluded() -> set[str]:
    """The cases the kit excludes (random outputs, e.g. Bernoulli's)."""
    from onnxkit.conformance.exclusions import EXCLUDED

    return set(EXCLUDED)


def build(only: set[str] | None = None) -> dict[str, list]:
    """family -> [(domain, op, [(case, module)])] for every node case (expanded ones left out)."""
    modules = case_modules()
    excluded = _excluded()
    table: dict[str, dict[tuple[str, str], list]] = {}
    for case in node_cases():
        if case.name not in modules or "_expanded" in case.name or case.name in excluded:
            continue
        domain, op = _tested_op(case)
        if only and op not in only:
            continue
        table.setdefault(family_of(domain, op), {}).setdefault((domain, op), []).append((case, modules[case.name]))
    return {fam: [(d, o, cs) for (d, o), cs in sorted(ops.items(), key=lambda kv: kv[0][1])]
            for fam, ops in sorted(table.items())}


def notebook(family: str, ops: list):
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

    cells = [new_markdown_cell(
        f"# Spec conformance: {family}\n\n"
        "Each cell runs one onnx backend test case on the runtime named by the environment "
        "variable `ONNXKIT_SPEC_RUNTIME` (default `reference`; `onnxruntime`, `onnx.reference`, "
        "`cpu`, any adapter of `onnxkit.conformance.runtimes`) and prints its outputs, rounded to "
        "the case's tolerance. The saved outputs are onnx's expected values: "
        "`pytest --nbval spec_tests/notebooks` passes exactly when the runtime reproduces them; "
        "a value outside the tolerance is printed marked `!`. The cases `spec_tests/exclusions.py` "
        "excludes are left out.\n\n"
        "Generated by `python -m onnxkit.conformance.spec_notebooks` from onnx "
        f"{onnx.__version__}: do not edit."),
        new_code_cell("from onnxkit.conformance.spec_cells import show", execution_count=1)]
    count = 1
    for domain, op, cases in ops:
        link = SPEC_PAGE.format(domain=domain.replace(".", "") if domain not in ("", "ai.onnx") else "", op=op)
        text = rule(op, domain).replace("<", "&lt;")
        cells.append(new_markdown_cell(f"## {op}\n\n{text}\n\n[{op} in the ONNX spec]({link})"))
        for case, module in cases:
            count += 1
            cell = new_code_cell(f"show({case.name!r}, {op!r}, {module!r}, rtol={case.rtol!r}, atol={case.atol!r})",
                                 execution_count=count)
            expected_text = "\n".join(render(case.name, op, exp, exp, case.rtol, case.atol)
                                      for _, exp in case.data_sets)
            cell.outputs = [new_output("stream", name="stdout", text=expected_text + "\n")]
            cells.append(cell)
    for k, cell in enumerate(cells):  # ids from the place, so a rerun writes the same file
        cell["id"] = hashlib.sha1(f"{family}:{k}".encode()).hexdigest()[:8]
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                             "language": "python"}})
    nbformat.validate(nb)
    return nb


def write_notebooks(folder: str, only: set[str] | None = None) -> list[str]:
    import nbformat

    os.makedirs(folder, exist_ok=True)
    paths = []
    for family, ops in build(only).items():
        path = os.path.join(folder, f"{family}.ipynb")
        nbformat.write(notebook(family, ops), path)
        paths.append(path)
    return paths


if __name__ == "__main__":
    args = sys.argv[1:]
    only = None
    if "--only" in args:
        i = args.index("--only")
        only = set(args[i + 1].split(","))
        del args[i:i + 2]
    for p in write_notebooks(args[0] if args else "spec_tests/notebooks", only):
        print(p)
