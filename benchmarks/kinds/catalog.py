"""The model kinds of ``python -m benchmarks.kinds``: each model's kind, builder, the
libraries it needs (missing ones make it skipped, not failed), its output tolerance and
whether cpu levels 1 and 2 are timed too (``levels``: level 2 must not be slower).

A builder takes the ``.onnx`` path to write and returns the feeds (numpy arrays). The
torch builders of ``hf`` and ``vision`` return a module and inputs instead; ``_exported``
turns them into builders for one exporter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from benchmarks.kinds import hf, quant, small, trees, vision
from benchmarks.kinds.export import torch_export

# largest |onnxkit - onnxruntime| / largest |onnxruntime| accepted, by element type: float16
# keeps ~3 decimal digits; quantized models may round one value to the next step
TOLERANCE = {"float32": 1e-4, "float16": 1e-2, "quantized": 2e-2}


@dataclass(frozen=True)
class Entry:
    name: str
    kind: str
    build: Callable
    needs: tuple[str, ...]
    tolerance: float = TOLERANCE["float32"]
    levels: bool = False


def _exported(torch_builder, exporter: str):
    def build(path):
        module, inputs, names = torch_builder()
        return torch_export(module, inputs, names, path, exporter)
    return build


def _entries():
    hf_needs = ("torch", "transformers")
    for exporter, needs in (("ts", hf_needs), ("dynamo", hf_needs + ("onnxscript",))):
        for name, builder in hf.MODELS.items():
            yield Entry(f"{name}_{exporter}", f"transformers-{exporter}",
                        _exported(builder, exporter), needs)
    for name, builder in vision.MODELS.items():
        library = "timm" if name.startswith("timm") else "torchvision"
        yield Entry(name, "vision", _exported(builder, "ts"), ("torch", library))
    yield Entry("ssdlite320", "detection", _exported(vision.ssdlite, "ts"),
                ("torch", "torchvision"))
    yield Entry("bert_dynamic", "quantized", quant.MODELS["bert_dynamic"],
                hf_needs + ("onnxruntime",), TOLERANCE["quantized"])
    for name in ("resnet18_qdq", "resnet18_qoperator"):
        yield Entry(name, "quantized", quant.MODELS[name], ("torch", "torchvision", "onnxruntime"),
                    TOLERANCE["quantized"])
    # level 2's fused Attention and FusedMatMul once ran float16 without BLAS, 3x level 1
    yield Entry("fp16_conv_attention", "fp16", small.fp16, ("torch", "onnxconverter_common"),
                TOLERANCE["float16"], levels=True)
    for name in ("lstm_tagger", "gru_tagger"):
        yield Entry(name, "recurrent", small.MODELS[name], ("torch",))
    for name, builder in trees.MODELS.items():
        library = "lightgbm" if name.startswith("lgbm") else "xgboost"
        yield Entry(name, "trees", builder, (library, "onnxmltools"))
    yield Entry("onnxscript_mlp", "onnxscript", small.onnxscript_functions, ("onnxscript",))


CATALOG = {entry.name: entry for entry in _entries()}
KINDS = tuple(dict.fromkeys(entry.kind for entry in CATALOG.values()))
