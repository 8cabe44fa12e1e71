"""Exercise 3: write models in ONNX text syntax.

The syntax (https://onnx.ai/onnx/repo-docs/Syntax.html) is the one notebook 1 uses:

    <ir_version: 8, opset_import: ["" : 18]>
    scale_relu (float[N] x, float[N] w) => (float[N] y) {
      s = Mul (x, w)
      two = Constant <value = float {2.0}> ()
      y = Relu (s)
    }

Each function returns the text of a whole model. The checks parse it, run onnx's checker,
run it with onnxkit and compare with values computed by hand.

Check your work:   ONNXKIT_EXERCISES=learner python -m pytest exercises -m task3_1
"""

from __future__ import annotations


def softplus_text() -> str:
    """A model ``softplus (float[N] x) => (float[N] y)`` computing ``y = log(1 + exp(x))``,
    importing opset 18, WITHOUT the Softplus operator (use Exp, Add, Log and a Constant)."""
    # ## Task 3.1
    raise NotImplementedError("Need to implement for Task 3.1")


def normalize_text() -> str:
    """A model ``normalize (float[B, N] x) => (float[B, N] y)`` that normalizes each row:

        mean = mean of the row,  var = mean of (x - mean)^2,  y = (x - mean) / sqrt(var + 1e-5)

    importing opset 18, WITHOUT LayerNormalization or MeanVarianceNormalization. Careful:
    since opset 18 ReduceMean takes its axes as an INPUT, not an attribute (notebook 6)."""
    # ## Task 3.2
    raise NotImplementedError("Need to implement for Task 3.2")
