"""Build the benchmark models into ``benchmarks/models/`` (git-ignored).

    python -m benchmarks.models                 # builds what is missing (ALL_MODELS)
    python -m benchmarks.models --force         # rebuilds them
    python -m benchmarks.models resnet50_b32    # the GPU benchmark's model, on demand

| file                 | what                                                       |
|----------------------|------------------------------------------------------------|
| resnet18.onnx        | ResNet-18, input 1x3x224x224 (written here in torch)       |
| mobilenetv2.onnx     | MobileNetV2 (width 1.0), input 1x3x224x224                 |
| bert_mini.onnx       | BERT-mini encoder: 4 layers, d=256, 4 heads, seq 128,      |
|                      | word/position/type embeddings and an attention mask        |
| mlp.onnx             | MLP 784-512-512-10, batch 64                               |
| resnet50.onnx        | onnx's light ResNet-50 (``onnx/backend/test/data/light``)  |
| densenet121.onnx     | onnx's light DenseNet-121                                  |
| resnet50_b32.onnx    | ResNet-50 (bottleneck blocks), input 32x3x224x224, ~100 MB |
|                      | (written here in torch; only built when named: it is the   |
|                      | GPU benchmark's model, ``benchmarks.cuda_run``)            |

``ALL_MODELS`` is what the CPU benchmark (``benchmarks.run``) runs by default;
``ON_DEMAND_MODELS`` are built only when named. The torch models are written by hand
(torchvision is not needed), put in eval mode with random weights drawn from a fixed seed
(``torch_module``), and exported with the TorchScript exporter (``dynamo=False``) at
opset 17. ``feeds(name)`` gives a seeded input for each model.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import onnx

MODELS_DIR = Path(__file__).resolve().parent / "models"
LIGHT_DIR = Path(onnx.__file__).resolve().parent / "backend" / "test" / "data" / "light"
TORCH_MODELS = ("resnet18", "mobilenetv2", "bert_mini", "mlp")
LIGHT_MODELS = {"resnet50": "light_resnet50.onnx", "densenet121": "light_densenet121.onnx"}
ALL_MODELS = TORCH_MODELS + tuple(LIGHT_MODELS)
#: torch models too big for the CPU benchmark: built only when named
ON_DEMAND_MODELS = ("resnet50_b32",)
KNOWN_MODELS = ALL_MODELS + ON_DEMAND_MODELS
#: the image models' input shape where it is not 1x3x224x224
IMAGE_SHAPES = {"resnet50_b32": (32, 3, 224, 224)}
BERT_VOCAB, BERT_SEQ = 30522, 128


def model_path(name: str) -> Path:
    return MODELS_DIR / f"{name}.onnx"


def feeds(name: str, seed: int = 0) -> dict[str, np.ndarray]:
    """A seeded input for benchmark model ``name``."""
    rng = np.random.default_rng(seed)
    if name == "bert_mini":
        ids = rng.integers(0, BERT_VOCAB, size=(1, BERT_SEQ), dtype=np.int64)
        mask = np.ones((1, BERT_SEQ), dtype=np.int64)
        mask[:, BERT_SEQ - 16:] = 0  # the last 16 tokens are padding
        return {"input_ids": ids, "attention_mask": mask}
    if name == "mlp":
        return {"x": rng.standard_normal((64, 784), dtype=np.float32)}
    model = onnx.load(str(model_path(name)), load_external_data=False)
    init = {t.name for t in model.graph.initializer}
    first = next(i for i in model.graph.input if i.name not in init)
    shape = [d.dim_value for d in first.type.tensor_type.shape.dim]
    return {first.name: rng.standard_normal(shape, dtype=np.float32)}


# --- the torch models ------------------------------------------------------------------

def _torch_modules():
    """Define the modules lazily so that importing this file does not need torch."""
    import torch
    from torch import nn

    def shortcut(cin, cout, stride):
        """The residual branch's projection (1x1 conv + BatchNorm), or None for identity."""
        if stride == 1 and cin == cout:
            return None
        return nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = shortcut(cin, cout, stride)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            skip = x if self.down is None else self.down(x)
            return torch.relu(y + skip)

    def resnet_stem():
        return nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                             nn.ReLU(), nn.MaxPool2d(3, 2, 1))

    class ResNet18(nn.Module):
        def __init__(self, classes=1000):
            super().__init__()
            self.stem = resnet_stem()
            blocks, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                blocks += [BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)]
                cin = cout
            self.blocks = nn.Sequential(*blocks)
            self.fc = nn.Linear(512, classes)

        def forward(self, x):
            x = self.blocks(self.stem(x))
            return self.fc(x.mean(dim=(2, 3)))

    class Bottleneck(nn.Module):
        """1x1 reduce, 3x3 (carrying the stride, as torchvision's ResNet v1.5), 1x1 expand x4."""

        def __init__(self, cin, width, stride):
            super().__init__()
            cout = 4 * width
            self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(cout)
            self.down = shortcut(cin, cout, stride)

        def forward(self, x):
            y = torch.relu(self.bn1(self.conv1(x)))
            y = torch.relu(self.bn2(self.conv2(y)))
            y = self.bn3(self.conv3(y))
            skip = x if self.down is None else self.down(x)
            return torch.relu(y + skip)

    class ResNet50(nn.Module):
        """ResNet-50: stem, bottleneck stages of 3, 4, 6 and 3 blocks, global average pool, fc."""

        def __init__(self, classes=1000):
            super().__init__()
            self.stem = resnet_stem()
            blocks, cin = [], 64
            for width, count, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
                for i in range(count):
                    blocks.append(Bottleneck(cin, width, stride if i == 0 else 1))
                    cin = 4 * width
            self.blocks = nn.Sequential(*blocks)
            self.fc = nn.Linear(cin, classes)

        def forward(self, x):
            x = self.blocks(self.stem(x))
            x = nn.functional.adaptive_avg_pool2d(x, 1)  # GlobalAveragePool, as torchvision's
            return self.fc(torch.flatten(x, 1))

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = cin * expand
            layers = []
            if expand != 1:
                layers += [nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6()]
            layers += [nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                       nn.BatchNorm2d(hidden), nn.ReLU6(),
                       nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
            self.body = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.body(x) if self.residual else self.body(x)

    class MobileNetV2(nn.Module):
        SETTINGS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                    (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))

        def __init__(self, classes=1000):
            super().__init__()
            layers = [nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6()]
            cin = 32
            for t, c, n, s in self.SETTINGS:
                for i in range(n):
                    layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                    cin = c
            layers += [nn.Conv2d(cin, 1280, 1, bias=False), nn.BatchNorm2d(1280), nn.ReLU6()]
            self.features = nn.Sequential(*layers)
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, classes))

        def forward(self, x):
            x = self.features(x)
            x = nn.functional.adaptive_avg_pool2d(x, 1)
            return self.classifier(torch.flatten(x, 1))

    class SelfAttention(nn.Module):
        def __init__(self, d, heads):
            super().__init__()
            self.heads, self.dk = heads, d // heads
            self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            self.out = nn.Linear(d, d)

        def split(self, x):
            b, s, _ = x.shape
            return x.view(b, s, self.heads, self.dk).transpose(1, 2)

        def forward(self, x, mask_bias):
            q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / (self.dk ** 0.5) + mask_bias
            ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
            b, h, s, dk = ctx.shape
            return self.out(ctx.transpose(1, 2).reshape(b, s, h * dk))

    class LayerNorm(nn.Module):
        """Written out as in the original BERT code, so the export holds the decomposed form."""

        def __init__(self, d, eps=1e-12):
            super().__init__()
            self.weight, self.bias = nn.Parameter(torch.ones(d)), nn.Parameter(torch.zeros(d))
            self.eps = eps

        def forward(self, x):
            u = x.mean(-1, keepdim=True)
            s = (x - u).pow(2).mean(-1, keepdim=True)
            return self.weight * ((x - u) / torch.sqrt(s + self.eps)) + self.bias

    class EncoderLayer(nn.Module):
        def __init__(self, d, heads, ff):
            super().__init__()
            self.attn = SelfAttention(d, heads)
            self.ln1 = LayerNorm(d)
            self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)
            self.ln2 = LayerNorm(d)
            self.drop = nn.Dropout(0.1)

        def forward(self, x, mask_bias):
            x = self.ln1(x + self.drop(self.attn(x, mask_bias)))
            h = nn.functional.gelu(self.ff1(x))
            return self.ln2(x + self.drop(self.ff2(h)))

    class BertMini(nn.Module):
        def __init__(self, vocab=BERT_VOCAB, d=256, heads=4, layers=4, ff=1024, max_pos=512):
            super().__init__()
            self.word = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(max_pos, d)
            self.token_type = nn.Embedding(2, d)
            self.ln = LayerNorm(d)
            self.layers = nn.ModuleList(EncoderLayer(d, heads, ff) for _ in range(layers))

        def forward(self, input_ids, attention_mask):
            seq = input_ids.shape[1]
            positions = torch.arange(seq, device=input_ids.device).unsqueeze(0)
            types = torch.zeros_like(input_ids)
            x = self.ln(self.word(input_ids) + self.pos(positions) + self.token_type(types))
            mask_bias = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
            for layer in self.layers:
                x = layer(x, mask_bias)
            return x

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                     nn.Linear(512, 10))

        def forward(self, x):
            return self.net(x)

    return {"resnet18": ResNet18, "mobilenetv2": MobileNetV2, "bert_mini": BertMini, "mlp": MLP,
            "resnet50_b32": ResNet50}


def _randomize_norms(module) -> None:
    """Give every BatchNorm and LayerNorm non-trivial statistics and affine terms (seeded by the caller)."""
    import torch
    from torch import nn

    for m in module.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)
        elif type(m).__name__ == "LayerNorm":
            with torch.no_grad():
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)


def torch_module(name: str):
    """Torch model ``name`` in eval mode, with the seeded weights and statistics it is
    exported with (on the CPU; move it where you like)."""
    import torch

    torch.manual_seed(0)
    module = _torch_modules()[name]()
    _randomize_norms(module)
    return module.eval()


def _example_feeds(name: str) -> dict[str, np.ndarray]:
    """The export's example input: ``feeds(name)``, which reads image shapes off the model
    file, before that file exists."""
    if name in ("bert_mini", "mlp"):
        return feeds(name)
    shape = IMAGE_SHAPES.get(name, (1, 3, 224, 224))
    return {"input": np.random.default_rng(0).standard_normal(shape, dtype=np.float32)}


def build_torch_model(name: str, path: Path) -> None:
    import torch

    module = torch_module(name)
    example = _example_feeds(name)
    args = tuple(torch.from_numpy(v) for v in example.values())
    tmp = path.with_suffix(".tmp.onnx")
    with torch.no_grad():
        torch.onnx.export(module, args, str(tmp), dynamo=False, opset_version=17,
                          input_names=list(example), output_names=["output"])
    os.replace(tmp, path)


def build(names=ALL_MODELS, force: bool = False, verbose: bool = True) -> list[Path]:
    """Build (or copy) each named model unless it is already there; return their paths."""
    MODELS_DIR.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        path = model_path(name)
        if force or not path.exists():
            if name in LIGHT_MODELS:
                shutil.copyfile(LIGHT_DIR / LIGHT_MODELS[name], path)
            else:
                build_torch_model(name, path)
            if verbose:
                print(f"built  {path}")
        elif verbose:
            print(f"exists {path}")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.models", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"models to build (default: {', '.join(ALL_MODELS)}; "
                        f"on demand: {', '.join(ON_DEMAND_MODELS)})")
    parser.add_argument("--force", action="store_true", help="rebuild models that exist")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in KNOWN_MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; choose from {', '.join(KNOWN_MODELS)}")
    build(tuple(args.names) or ALL_MODELS, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
