"""onnx Backends that misbehave on purpose, for the isolation tests: a case whose graph is
named ``crash`` kills the process, ``hang`` sleeps; any other is Identity's answer."""

import os
import time


class _Rep:
    def __init__(self, model):
        self.model = model

    def run(self, inputs):
        name = self.model.graph.name
        if name == "crash":
            os.abort()
        if name == "hang":
            time.sleep(600)
        return [inputs[0]]


class Misbehaving:
    @staticmethod
    def prepare(model, device="CPU"):
        return _Rep(model)
