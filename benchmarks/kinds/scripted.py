"""A two-block MLP whose blocks, GELU and LayerNorm are ONNX Script functions; the model
keeps them as model-local functions (a FunctionProto each). ONNX Script reads these
functions' source, so they live at module level."""

from __future__ import annotations

import numpy as np
import onnx
from onnxscript import FLOAT, script
from onnxscript import opset18 as op
from onnxscript.values import Opset

local = Opset("kinds.local", 1)


@script(local, default_opset=op)
def gelu(x):
    return 0.5 * x * (1.0 + op.Tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


@script(local, default_opset=op)
def layer_norm(x):
    mean = op.ReduceMean(x, [-1])
    centred = x - mean
    var = op.ReduceMean(centred * centred, [-1])
    return centred / op.Sqrt(var + 1e-5)


@script(local, default_opset=op)
def block(x, w):
    return layer_norm(gelu(op.MatMul(x, w)))


@script(default_opset=op)
def mlp(x: FLOAT[32, 64], w1: FLOAT[64, 128], w2: FLOAT[128, 128],
        w3: FLOAT[128, 16]) -> FLOAT[32, 16]:
    return op.MatMul(block(block(x, w1), w2), w3)


def model(seed: int = 0) -> tuple[onnx.ModelProto, dict]:
    """The model with random weights as initializers, and a feed for ``x``."""
    rng = np.random.default_rng(seed)
    proto = mlp.to_model_proto()
    graph = proto.graph
    weights = {inp.name: rng.standard_normal([d.dim_value for d in inp.type.tensor_type.shape.dim])
               .astype(np.float32) * 0.1 for inp in graph.input if inp.name != "x"}
    graph.initializer.extend(onnx.numpy_helper.from_array(w, name) for name, w in weights.items())
    keep = [inp for inp in graph.input if inp.name == "x"]
    del graph.input[:]
    graph.input.extend(keep)
    out = onnx.helper.make_model(graph, functions=proto.functions,
                                 opset_imports=proto.opset_import, ir_version=10)
    return out, {"x": rng.standard_normal((32, 64)).astype(np.float32)}
