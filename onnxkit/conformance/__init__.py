"""The onnx backend test cases as a library: collect them, run them on any backend, report."""

from onnxkit.conformance.cases import Case, all_cases, model_cases, node_cases
from onnxkit.conformance.compare import assert_outputs_close
from onnxkit.conformance.runner import CaseResult, run_case

__all__ = ["Case", "all_cases", "node_cases", "model_cases", "assert_outputs_close",
           "CaseResult", "run_case"]
