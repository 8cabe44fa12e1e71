"""onnx2torch (``pip install onnx2torch``) converting the model to a PyTorch module (torch 2.13).

``onnx2torch.convert`` builds a ``torch.fx.GraphModule``; it is called in ``torch.no_grad()``
with one ``torch.Tensor`` per graph input, positionally in graph input order. Its result
(a tensor or a tuple of them, in graph output order) is read back with ``.numpy()``; a
Python list stays a list (sequences). Inputs of dtypes torch lacks (strings, float8 ...)
are the converter's or torch's errors.

onnx2torch imports torchvision (for NonMaxSuppression and RoiAlign only). PyPI's torchvision
is built against torch with CUDA and fails to import beside the CPU torch, so where it cannot
be imported a stand-in module is put in its place whose ops raise: those two operators are
then errors, and every other converts.
"""

from __future__ import annotations

import numpy as np

from onnxkit.conformance.runtimes._common import dist_version, graph_inputs

DISTRIBUTION = "onnx2torch"


def version() -> str | None:
    v = dist_version(DISTRIBUTION, "onnx2torch")
    if v is None or dist_version("torch", "torch") is None:
        return None
    return v


def _to_numpy(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, (list, tuple)):
        return [_to_numpy(v) for v in value]
    return value


def _torchvision_stand_in() -> None:
    try:
        import torchvision  # noqa: F401
    except Exception:  # not installed, or its compiled ops do not match this torch
        import sys
        import types

        def missing(*args, **kwargs):
            raise NotImplementedError("torchvision cannot be imported beside this torch")

        ops = types.ModuleType("torchvision.ops")
        ops.nms = ops.box_convert = ops.roi_align = missing
        stand_in = types.ModuleType("torchvision")
        stand_in.ops = ops
        sys.modules["torchvision"], sys.modules["torchvision.ops"] = stand_in, ops


def runner():
    import torch

    _torchvision_stand_in()
    from onnx2torch import convert

    torch.set_num_threads(1)

    def run(model, feeds_list):
        module = convert(model).eval()
        names = graph_inputs(model)
        n_out = len(model.graph.output)
        results = []
        for feeds in feeds_list:
            args = [torch.from_numpy(np.ascontiguousarray(feeds[n])) for n in names]
            with torch.no_grad():
                out = module(*args)
            out = list(out) if n_out > 1 else [out]
            results.append([_to_numpy(o) for o in out])
        return results

    return run
