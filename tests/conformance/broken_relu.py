"""An onnx Backend that is onnxkit's reference executor with Relu broken on purpose
(negative values pass through): the spec notebooks must show it as an nbval diff."""

import dataclasses

import numpy as np

from onnxkit.ops import load_reference_kernels


def _broken_relu(X):
    return np.asarray(X)


class _Rep:
    def __init__(self, model):
        from onnxkit.runtime.session import Session

        self.session = Session(model, executor="reference")

    def run(self, inputs):
        names = [i.name for i in self.session.get_inputs()]
        return self.session.run(None, dict(zip(names, inputs)))


class BrokenRelu:
    @staticmethod
    def prepare(model, device="CPU"):
        registry = load_reference_kernels()
        for kernel in list(registry):
            if kernel.op_type == "Relu":  # fault injection: swap the registered function
                registry._table[(kernel.domain, "Relu")][kernel.since_version] = dataclasses.replace(
                    kernel, fn=_broken_relu)
        return _Rep(model)
