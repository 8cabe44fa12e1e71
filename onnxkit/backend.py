"""onnxkit as an ``onnx.backend.base.Backend``, so onnx's own ``BackendTest`` runs it.

    import onnx.backend.test
    import onnxkit.backend
    globals().update(onnx.backend.test.BackendTest(onnxkit.backend, __name__).test_cases)

The executor comes from ``ONNXKIT_EXECUTOR`` (default ``reference``), or use
``backend_for("cpu")`` to get a Backend class bound to one executor.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np
import onnx
from onnx import ModelProto, NodeProto, helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

from onnxkit.api import Session


class OnnxkitRep(BackendRep):
    """A prepared model: ``run`` takes a list (positional) or a dict of inputs."""

    def __init__(self, session: Session):
        self.session = session

    def run(self, inputs: Any, **kwargs) -> tuple:
        names = [i.name for i in self.session.get_inputs()]
        if isinstance(inputs, dict):
            feeds = inputs
        elif isinstance(inputs, (list, tuple)):
            feeds = dict(zip(names, inputs))
        else:
            feeds = {names[0]: inputs}
        return tuple(self.session.run(None, feeds))


class OnnxkitBackend(Backend):
    executor = None  # None: ONNXKIT_EXECUTOR or "reference"

    @classmethod
    def _executor(cls) -> str:
        return cls.executor or os.environ.get("ONNXKIT_EXECUTOR", "reference")

    @classmethod
    def is_compatible(cls, model: ModelProto, device: str = "CPU", **kwargs) -> bool:
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model: ModelProto, device: str = "CPU", **kwargs) -> OnnxkitRep:
        return OnnxkitRep(Session(model, executor=cls._executor()))

    @classmethod
    def run_model(cls, model: ModelProto, inputs: Any, device: str = "CPU", **kwargs) -> tuple:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: NodeProto, inputs: Sequence[np.ndarray], device: str = "CPU",
                 outputs_info=None, **kwargs) -> tuple:
        """Wrap one node in a model (default opset of the installed onnx) and run it."""
        opset = kwargs.get("opset_version", onnx.defs.onnx_opset_version())
        graph_inputs = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.asarray(v).dtype), None)
                        for name, v in zip(node.input, inputs) if name]
        graph_outputs = [helper.make_empty_tensor_value_info(name) for name in node.output if name]
        graph = helper.make_graph([node], "run_node", graph_inputs, graph_outputs)
        imports = [helper.make_opsetid("", opset)]
        if node.domain not in ("", "ai.onnx"):
            imports.append(helper.make_opsetid(node.domain, 1))
        model = helper.make_model(graph, opset_imports=imports)
        feeds = {name: np.asarray(v) for name, v in zip(node.input, inputs) if name}
        return tuple(Session(model, executor=cls._executor()).run(None, feeds))

    @classmethod
    def supports_device(cls, device: str) -> bool:
        kind = Device(device).type
        if cls._executor() == "cuda":
            return kind in (DeviceType.CPU, DeviceType.CUDA)
        return kind == DeviceType.CPU


def backend_for(executor: str) -> type[OnnxkitBackend]:
    """A Backend class bound to one onnxkit executor."""
    return type(f"Onnxkit{executor.capitalize()}Backend", (OnnxkitBackend,), {"executor": executor})


prepare = OnnxkitBackend.prepare
run_model = OnnxkitBackend.run_model
run_node = OnnxkitBackend.run_node
supports_device = OnnxkitBackend.supports_device
is_compatible = OnnxkitBackend.is_compatible
