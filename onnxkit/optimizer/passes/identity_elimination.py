"""Identity and inference-time Dropout pass their input through: read the input instead.

    before:  h = Identity (x)
             y = Relu (h)
    after:   y = Relu (x)

    before:  d = Dropout <ratio = 0.1> (x)           # no training_mode, mask unused
    after:   (readers of d read x)

When the removed node's output is a graph output, the value feeding it is renamed to the
output's name instead (not possible when that value is itself a graph input or constant).
https://onnx.ai/onnx/operators/onnx__Identity.html
https://onnx.ai/onnx/operators/onnx__Dropout.html
"""

from __future__ import annotations

from onnxkit.optimizer.nodes import attr
from onnxkit.optimizer.pattern import RewriteRule, RulePass


def _identity(op, x):
    return op.Identity(x)


def _dropout(op, x):
    return op.Dropout(x, _allow_other_inputs=True, _name="drop")


def _dropout_check(g, x, drop):
    if len(drop.input) > 2 and drop.input[2]:
        training = g.constant(drop.input[2])
        if training is None:
            return "training_mode is not a constant"
        if bool(training.reshape(-1)[0]):
            return "training_mode is true: the node drops values"
    if g.opsets.get("", 0) < 7 and attr(drop, "is_test", 0) == 0:
        return "is_test is 0 (opset < 7): the node drops values"
    return None


def _pass_through(op, x, **_):
    return x


RULES = (
    RewriteRule("Identity", _identity, _pass_through),
    RewriteRule("Dropout", _dropout, _pass_through, _dropout_check),
)
PASS = RulePass("identity_elimination", RULES, __doc__)
