"""One table of activation cases for the formulas shared by the cpu and cuda kernels
(``onnxkit.kernels.activation_formulas``), with onnx's reference runtime as the oracle.

Each case names a formula of ``Formulas``, the ONNX node that computes the same thing and
the (p0, p1) the formula gets for that node's attributes. The inputs are float32 with the
edges a kernel meets: NaN, +-inf, +-0, denormal-small, large and near-overflow values.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator


class Case(NamedTuple):
    formula: str  # a field of activation_formulas.Formulas
    op_type: str
    attributes: dict
    p0: float
    p1: float
    opset: int = 22
    clip_bounds: tuple = ()  # Clip's min and max inputs


CASES = (
    Case("identity", "Identity", {}, 0.0, 0.0),
    Case("relu", "Relu", {}, 0.0, 0.0),
    Case("leaky_relu", "LeakyRelu", {"alpha": 0.1}, 0.1, 0.0),
    Case("clip", "Clip", {}, -1.5, 2.0, clip_bounds=(-1.5, 2.0)),
    Case("hard_sigmoid", "HardSigmoid", {"alpha": 0.2, "beta": 0.5}, 0.2, 0.5),
    Case("hard_swish", "HardSwish", {}, 0.0, 0.0),
    Case("elu", "Elu", {"alpha": 0.7}, 0.7, 0.0),
    Case("sigmoid", "Sigmoid", {}, 0.0, 0.0),
    Case("tanh", "Tanh", {}, 0.0, 0.0),
    Case("erf", "Erf", {}, 0.0, 0.0),
    Case("swish", "Swish", {"alpha": 0.8}, 0.8, 0.0, opset=24),
    Case("gelu", "Gelu", {"approximate": "none"}, 0.0, 0.0, opset=20),
    Case("gelu_tanh", "Gelu", {"approximate": "tanh"}, 0.0, 0.0, opset=20),
)

# exact piecewise formulas: float32 rounding apart (a fused multiply-add, v / 6 against
# v * float32(1/6)), equal; the transcendental ones: within float32 reach of erf, exp, tanh
PIECEWISE = {"identity", "relu", "leaky_relu", "clip", "hard_sigmoid", "hard_swish"}


def tolerance(case: Case) -> dict:
    if case.formula in PIECEWISE:
        return {"rtol": 3e-7, "atol": 1e-7}
    return {"rtol": 1e-6, "atol": 1e-6}


def inputs() -> np.ndarray:
    edges = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e-3, -1e-3, 0.3, -0.3,
             3.0, -3.0, 5.9, -5.9, 30.0, -30.0, 100.0, -100.0, 1e10, -1e10, 3e38, -3e38]
    return np.concatenate([edges, np.linspace(-8, 8, 161)]).astype(np.float32)


def expected(case: Case, x: np.ndarray) -> np.ndarray:
    """What onnx's reference runtime computes for ``case``'s node on ``x``."""
    names = ["x"]
    initializers = []
    for name, bound in zip(("low", "high"), case.clip_bounds):
        names.append(name)
        initializers.append(helper.make_tensor(name, TensorProto.FLOAT, [], [bound]))
    node = helper.make_node(case.op_type, names, ["y"], **case.attributes)
    value = helper.make_tensor_value_info
    graph = helper.make_graph([node], case.formula, [value("x", TensorProto.FLOAT, [None])],
                              [value("y", TensorProto.FLOAT, [None])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)])
    onnx.checker.check_model(model)
    with np.errstate(all="ignore"):
        return ReferenceEvaluator(model).run(None, {"x": x})[0]
