"""Bundled example models: the light model-zoo nets that ship inside the onnx package."""

from __future__ import annotations

import os

import onnx

from onnxkit.errors import ModelLoadError

LIGHT_DIR = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
EXAMPLES = ("squeezenet", "resnet50", "densenet121", "inception_v1", "inception_v2",
            "shufflenet", "bvlc_alexnet", "vgg19", "zfnet512")


def example_path(name: str) -> str:
    """Path of a bundled example model, e.g. ``example_path("squeezenet")``."""
    if name not in EXAMPLES:
        raise ModelLoadError(f"unknown example {name!r}; examples: {', '.join(EXAMPLES)}")
    return os.path.join(LIGHT_DIR, f"light_{name}.onnx")
