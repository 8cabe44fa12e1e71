"""Small models of the remaining kinds: a float16 conv + attention net, recurrent taggers
(LSTM, GRU) exported by TorchScript, and a model built from ONNX Script functions
(``scripted``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from benchmarks.kinds.export import torch_export


def _torch():
    import torch

    torch.manual_seed(0)
    return torch


def _conv_attention(torch):
    class ConvAttention(torch.nn.Module):
        """Two convolutions, then self-attention over the 8x8 positions (2 heads, 32 wide)."""

        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 16, 3, padding=1)
            self.conv2 = torch.nn.Conv2d(16, 32, 3, stride=2, padding=1)
            self.qkv = torch.nn.Linear(32, 96)
            self.out = torch.nn.Linear(32, 32)
            self.norm = torch.nn.LayerNorm(32)
            self.head = torch.nn.Linear(32, 10)

        def attention(self, h):
            batch, length, _ = h.shape
            q, k, v = self.qkv(h).reshape(batch, length, 3, 2, 16).permute(2, 0, 3, 1, 4)
            weights = torch.softmax(q @ k.transpose(-1, -2) / 4.0, dim=-1)
            return self.out((weights @ v).transpose(1, 2).reshape(batch, length, 32))

        def forward(self, x):
            h = torch.relu(self.conv2(torch.relu(self.conv1(x))))
            h = h.flatten(2).transpose(1, 2)  # (batch, 64 positions, 32)
            h = self.norm(h + self.attention(h))
            return self.head(h.mean(1))

    return ConvAttention().eval()


def fp16(path: Path) -> dict:
    """The conv + attention net exported in float32, then converted to float16 throughout
    (inputs and outputs too) by onnxconverter-common."""
    torch = _torch()
    import onnx
    from onnxconverter_common import float16

    inputs = {"x": torch.randn(2, 3, 16, 16)}
    feeds = torch_export(_conv_attention(torch), inputs, ["y"], path, "ts")
    model = float16.convert_float_to_float16(onnx.load(str(path)), keep_io_types=False)
    onnx.save(model, str(path))
    return {"x": feeds["x"].astype(np.float16)}


def _tagger(cell: str):
    def build(path: Path) -> dict:
        torch = _torch()

        class Tagger(torch.nn.Module):
            """Embedding, a 2-layer bidirectional recurrent net (hidden 64), a linear head."""

            def __init__(self):
                super().__init__()
                self.embed = torch.nn.Embedding(1000, 32)
                self.rnn = getattr(torch.nn, cell)(32, 64, num_layers=2, bidirectional=True,
                                                   batch_first=True)
                self.head = torch.nn.Linear(128, 12)

            def forward(self, tokens):
                return self.head(self.rnn(self.embed(tokens))[0])

        inputs = {"tokens": torch.randint(0, 1000, (4, 32))}
        return torch_export(Tagger().eval(), inputs, ["tags"], path, "ts")
    return build


def onnxscript_functions(path: Path) -> dict:
    """The ONNX Script MLP of ``scripted`` (model-local functions)."""
    import onnx

    from benchmarks.kinds import scripted

    model, feeds = scripted.model()
    onnx.save(model, str(path))
    return feeds


MODELS = {"fp16_conv_attention": fp16, "lstm_tagger": _tagger("LSTM"),
          "gru_tagger": _tagger("GRU"), "onnxscript_mlp": onnxscript_functions}
