"""Torch modules to ONNX files with either exporter, and their inputs as numpy feeds."""

from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path

OPSET = {"ts": 17, "dynamo": 18}


def torch_export(module, inputs: dict, output_names: list[str], path: Path, exporter: str,
                 dynamic_axes: dict | None = None) -> dict:
    """Export ``module(*inputs.values())`` to ``path`` with ``exporter`` ("ts": TorchScript
    tracing, "dynamo": ``torch.export``-based); returns the inputs as numpy arrays."""
    import torch

    kwargs = {"input_names": list(inputs), "output_names": output_names,
              "opset_version": OPSET[exporter], "dynamo": exporter == "dynamo"}
    if dynamic_axes and exporter == "ts":
        kwargs["dynamic_axes"] = dynamic_axes
    with warnings.catch_warnings(), torch.no_grad(), \
            contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        program = torch.onnx.export(module, tuple(inputs.values()),
                                    None if exporter == "dynamo" else str(path), **kwargs)
        if exporter == "dynamo":
            program.save(str(path), external_data=False)
    return {name: value.numpy() for name, value in inputs.items()}
