"""torchvision's swin_t (random weights, seed 0, no download) as ONNX, for the big-graph test.

    python -m tests.widgets._export_swin_t .cache/bigraph/swin_t.onnx
    cached_swin_t()    # the file under .cache/bigraph/, exported on first use (about 30 s);
                       # None without torchvision (pip install -e '.[torch]')

The TorchScript exporter (opset 17) names nodes by module path (``/features/features.3/...``),
which the graph widget folds into blocks; it writes 6,261 nodes (the dynamo exporter, after
its optimizations, 760).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def cached_swin_t(folder: Path = ROOT / ".cache" / "bigraph") -> Path | None:
    """The exported file (named by the torch and torchvision versions), or None when
    torchvision is not installed. The export runs in a child process: torch stays out of
    the caller."""
    if importlib.util.find_spec("torchvision") is None or importlib.util.find_spec("torch") is None:
        return None
    versions = "-".join(importlib.metadata.version(p) for p in ("torch", "torchvision"))
    path = folder / f"swin_t-{versions}.onnx"
    if not path.exists():
        part = path.with_name(f"{path.name}.{os.getpid()}.part")
        subprocess.run([sys.executable, "-m", "tests.widgets._export_swin_t", str(part)],
                       cwd=ROOT, check=True, capture_output=True)
        os.replace(part, path)  # whole or not at all, also beside a parallel test worker
    return path


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
