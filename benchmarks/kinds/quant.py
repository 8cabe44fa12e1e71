"""Quantized models from onnxruntime.quantization: dynamic (MatMulInteger, on a
TorchScript-exported BERT-like encoder), static QDQ and QOperator (QLinearConv, on a
TorchScript-exported ResNet-18 at 64x64), calibrated on random images."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

from benchmarks.kinds import hf, vision
from benchmarks.kinds.export import torch_export


def _float_model(builder, folder: Path) -> tuple[Path, dict]:
    module, inputs, names = builder()
    path = folder / "float.onnx"
    return path, torch_export(module, inputs, names, path, "ts")


def dynamic(path: Path) -> dict:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory() as tmp:
        source, feeds = _float_model(hf.bert, Path(tmp))
        quantize_dynamic(str(source), str(path), weight_type=QuantType.QInt8)
    return feeds


def _static(quant_format: str):
    def build(path: Path) -> dict:
        from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                              quantize_static)
        from onnxruntime.quantization.shape_inference import quant_pre_process

        class Images(CalibrationDataReader):
            def __init__(self):
                rng = np.random.default_rng(1)
                self.batches = iter([{"x": rng.standard_normal((1, 3, 64, 64), np.float32)}
                                     for _ in range(4)])

            def get_next(self):
                return next(self.batches, None)

        with tempfile.TemporaryDirectory() as tmp:
            source, feeds = _float_model(vision.MODELS["tv_resnet18"], Path(tmp))
            prepared = Path(tmp) / "prepared.onnx"  # the preprocessing ORT's docs ask for
            quant_pre_process(str(source), str(prepared))
            quantize_static(str(prepared), str(path), Images(),
                            quant_format=getattr(QuantFormat, quant_format),
                            activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        return feeds
    return build


MODELS = {"bert_dynamic": dynamic, "resnet18_qdq": _static("QDQ"),
          "resnet18_qoperator": _static("QOperator")}
