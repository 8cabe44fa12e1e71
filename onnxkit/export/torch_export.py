"""Trace or script a PyTorch module into an ONNX ModelProto.

- ``mode="trace"`` runs the module once and records the operations it happened to run:
  Python control flow is frozen to the path the example input took.
- ``mode="script"`` compiles the module with TorchScript first: ``if`` / ``for`` on tensor
  values become ONNX ``If`` / ``Loop`` nodes, so the graph keeps its control flow.
"""

from __future__ import annotations

import io
import warnings

import onnx


def export_module(module, args: tuple, *, mode: str = "trace", opset: int = 17,
                  input_names: list[str] | None = None, output_names: list[str] | None = None,
                  dynamic_axes: dict | None = None) -> onnx.ModelProto:
    import torch

    module = module.eval()
    if mode == "script":
        module = torch.jit.script(module)
    elif mode != "trace":
        raise ValueError(f"mode must be 'trace' or 'script', not {mode!r}")
    buffer = io.BytesIO()
    # eval-mode Transformer layers take a fused "fast path" the exporter cannot express
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, args, buffer, dynamo=False, opset_version=opset,
                              input_names=input_names, output_names=output_names,
                              dynamic_axes=dynamic_axes)
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
    return onnx.load_from_string(buffer.getvalue())
