"""Conv / Gemm / MatMul followed by an activation become one onnxkit fused node.

    before:  c = Conv <pads = [1, 1, 1, 1]> (x, W, B)
             y = Relu (c)
    after:   y = onnxkit.FusedConv <pads = [1, 1, 1, 1], activation = "Relu"> (x, W, B)

    before:  y = Clip (Gemm (a, B, C), lo, hi)             # lo, hi constants (ReLU6)
    after:   y = onnxkit.FusedGemm <activation = "Clip", activation_params = [0, 6]> (a, B, C)

    before:  y = Gelu (MatMul (a, W))
    after:   y = onnxkit.FusedMatMul <activation = "Gelu"> (a, W)

    before:  y = Relu (BatchNormalization <epsilon = 1e-5> (x, scale, B, mean, var))
    after:   y = onnxkit.FusedBatchNormalization <epsilon = 1e-5, activation = "Relu"> (...)
             (inference only: one output, per-channel statistics; DenseNet's BN-Relu-Conv)

    before:  c = Conv (x, W, B)                   # SiLU (EfficientNet, YOLO):
             y = Mul (c, Sigmoid (c))             #   x * sigmoid(x), either input order
    after:   y = onnxkit.FusedConv <activation = "Swish", activation_params = [1.0]> (x, W, B)

    before:  y = Gelu (Reshape (Gemm (a, W, B), shape))     # a traced nn.Linear on 3-D
    after:   y = Reshape (onnxkit.FusedGemm <activation = "Gelu"> (a, W, B), shape)
             (an activation works value by value: it may run before the Reshape)

Activations: Relu, LeakyRelu, Sigmoid, Tanh, Clip (constant bounds), HardSigmoid,
HardSwish, Elu, Gelu (standard or onnxkit), Swish (opset 24, or x * Sigmoid(x)). A
fused node that already has an activation is left alone. See docs/onnxkit-domain.md.
"""

from __future__ import annotations

import numpy as np

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.passes._util import is_float
from onnxkit.optimizer.pattern import RewriteRule, RulePass, attrs_of

FLOAT32_MAX = float(np.finfo(np.float32).max)

# (op_type, domain) of the activation -> the names of its float attributes
ACTIVATIONS = {
    ("Relu", ""): (), ("LeakyRelu", ""): ("alpha",), ("Sigmoid", ""): (), ("Tanh", ""): (),
    ("Clip", ""): (), ("HardSigmoid", ""): ("alpha", "beta"), ("HardSwish", ""): (),
    ("Elu", ""): ("alpha",), ("Gelu", ""): (), ("Gelu", "onnxkit"): (), ("Swish", ""): ("alpha",),
}
DEFAULTS = {("LeakyRelu", "alpha"): 0.01, ("HardSigmoid", "alpha"): 0.2, ("HardSigmoid", "beta"): 0.5,
            ("Elu", "alpha"): 1.0, ("Swish", "alpha"): 1.0}
# the node that the activation follows -> the fused operator
BASES = {"Conv": "FusedConv", "Gemm": "FusedGemm", "MatMul": "FusedMatMul",
         "BatchNormalization": "FusedBatchNormalization",
         "FusedConv": "FusedConv", "FusedGemm": "FusedGemm", "FusedMatMul": "FusedMatMul",
         "FusedBatchNormalization": "FusedBatchNormalization"}
# the attributes each base keeps in its fused form (None: all of them)
KEPT = {"BatchNormalization": ("epsilon",)}


def activation_of(g, act) -> tuple[str, list[float]] | str:
    """(activation name, params) of an activation node, or why it cannot be fused."""
    if act.op_type == "Mul":  # the SiLU rule's x * Sigmoid(x)
        return "Swish", [1.0]
    if act.op_type == "Clip":
        if g.opsets.get("", 0) < 11:
            return "Clip", [float(attr(act, "min", -FLOAT32_MAX)), float(attr(act, "max", FLOAT32_MAX))]
        bounds = []
        for i, default in ((1, -np.inf), (2, np.inf)):
            if len(act.input) > i and act.input[i]:
                v = g.constant(act.input[i])
                if v is None:
                    return "the Clip bounds are not constants"
                bounds.append(float(v.reshape(-1)[0]))
            else:
                bounds.append(float(default))
        return "Clip", bounds
    if act.op_type == "Gelu":
        return ("GeluTanh" if attr(act, "approximate", "none") == "tanh" else "Gelu"), []
    names = ACTIVATIONS[(act.op_type, "onnxkit" if act.domain == "onnxkit" else "")]
    return act.op_type, [float(attr(act, n, DEFAULTS[(act.op_type, n)])) for n in names]


def _check(g, x, base, act):
    if base.domain == "onnxkit" and attr(base, "activation", ""):
        return f"{base.op_type} {base.name!r} already has an activation"
    if not is_float(g, base.output[0]) and g.dtype(base.output[0]) is not None:
        return "not a floating-point computation"
    if base.op_type == "MatMul" and g.rank(base.input[0]) is None:
        return "the MatMul's input rank is unknown"
    if base.op_type == "BatchNormalization":
        if len([o for o in base.output if o]) > 1 or attr(base, "training_mode", 0):
            return "a training-mode BatchNormalization (batch statistics)"
        if not attr(base, "spatial", 1):
            return "spatial=0: statistics per position, not per channel"
    spec = activation_of(g, act)
    return spec if isinstance(spec, str) else None


def _rewrite(op, x, base, act):
    name, params = activation_of(op.graph, act)
    kept = KEPT.get(base.op_type)
    attrs = {k: v for k, v in attrs_of(base).items() if k not in ("activation", "activation_params")
             and (kept is None or k in kept)}
    return getattr(op, BASES[base.op_type])(*base.input, _domain="onnxkit", activation=name,
                                            activation_params=params or None, **attrs)


def _detail(g, x, base, act):
    return f"{base.op_type} {base.name!r} + {act.op_type} -> {BASES[base.op_type]}"


def _rule(base_type: str, act_type: str, act_domain: str) -> RewriteRule:
    base_domain = "onnxkit" if base_type.startswith("Fused") else ""

    def pattern(op, x):
        base = getattr(op, base_type)(x, _allow_other_inputs=True, _domain=base_domain, _name="base")
        return getattr(op, act_type)(base, _allow_other_inputs=True, _domain=act_domain, _name="act")

    return RewriteRule(f"{base_type}+{act_type}", pattern, _rewrite, _check, _detail)


def _silu_rule(base_type: str) -> RewriteRule:
    base_domain = "onnxkit" if base_type.startswith("Fused") else ""

    def pattern(op, x):
        base = getattr(op, base_type)(x, _allow_other_inputs=True, _domain=base_domain, _name="base")
        return op.Mul(base, op.Sigmoid(base), _name="act")

    return RewriteRule(f"{base_type}+SiLU", pattern, _rewrite, _check, _detail)


#: the products whose activation may sit behind a Reshape (the exporters' 3-D Linear)
RESHAPED = ("Gemm", "MatMul", "FusedGemm", "FusedMatMul")


def _reshaped_rule(base_type: str, act_type: str, act_domain: str) -> RewriteRule:
    base_domain = "onnxkit" if base_type.startswith("Fused") else ""

    def pattern(op, x, shape):
        base = getattr(op, base_type)(x, _allow_other_inputs=True, _domain=base_domain, _name="base")
        shaped = op.Reshape(base, shape, _name="reshape")
        return getattr(op, act_type)(shaped, _allow_other_inputs=True, _domain=act_domain, _name="act")

    def check(g, x, shape, base, reshape, act):
        return _check(g, x, base, act)

    def rewrite(op, x, shape, base, reshape, act):
        kept = {"allowzero": 1} if attr(reshape, "allowzero", 0) else {}  # opset 14 on
        return op.Reshape(_rewrite(op, x, base, act), shape, **kept)

    def detail(g, x, shape, base, reshape, act):
        return f"{base.op_type} {base.name!r} + Reshape + {act.op_type} -> {BASES[base.op_type]} + Reshape"

    return RewriteRule(f"{base_type}+Reshape+{act_type}", pattern, rewrite, check, detail)


RULES = (tuple(_rule(b, a, d) for b in BASES for (a, d) in ACTIVATIONS)
         + tuple(_silu_rule(b) for b in BASES)
         + tuple(_reshaped_rule(b, a, d) for b in RESHAPED for (a, d) in ACTIVATIONS))
PASS = RulePass("activation_fusion", RULES, __doc__)
