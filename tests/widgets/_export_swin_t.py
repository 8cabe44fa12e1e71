"""Export torchvision's swin_t (random weights, seed 0) for the big-graph browser test.

    pip install torchvision==0.28.0     # the version built for torch 2.13.0
    python -m tests.widgets._export_swin_t .cache/bigraph/swin_t.onnx

The TorchScript exporter (opset 17) names nodes by module path (``/features/features.3/...``),
which the graph widget folds into blocks; it writes 6,261 nodes (the dynamo exporter, after
its optimizations, 760).
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(path: str) -> None:
    import torch

    from benchmarks.zoo import _torchvision_models  # torchvision without its C++ operators

    models = _torchvision_models()
    torch.manual_seed(0)
    module = models.swin_t(weights=None).eval()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(module, (torch.randn(1, 3, 224, 224),), path, dynamo=False,
                          opset_version=17, input_names=["x"])


if __name__ == "__main__":
    main(sys.argv[1])
