"""Import torchvision with the CPU-only torch build, whose wheel lacks torchvision's ops.

torchvision's wheel is built against torch with CUDA; with the CPU torch its compiled
operators (``torchvision::nms`` ...) are missing, and ``import torchvision`` (which
``transformers`` and ``timm`` do too) fails while registering their shapes. When they are
missing, ``import_torchvision`` defines ``torchvision::nms`` (and ``qnms``) itself — a
plain greedy non-maximum suppression in torch — so that the import works and detection
models can be traced; torchvision's own ONNX symbolic still turns the op into
``NonMaxSuppression``. Where the real operators load, nothing is replaced.
"""

from __future__ import annotations

_LIBRARY = []  # keeps the torch.library.Library alive


def _nms(dets, scores, iou_threshold: float):
    import torch

    order = torch.argsort(scores, descending=True)
    x1, y1, x2, y2 = dets.unbind(1)
    area = (x2 - x1).clamp(min=0) * (y2 - y1).clamp(min=0)
    keep, dropped = [], torch.zeros(len(order), dtype=torch.bool)
    for rank, i in enumerate(order.tolist()):
        if dropped[rank]:
            continue
        keep.append(i)
        rest = order[rank + 1:]
        w = (torch.minimum(x2[i], x2[rest]) - torch.maximum(x1[i], x1[rest])).clamp(min=0)
        h = (torch.minimum(y2[i], y2[rest]) - torch.maximum(y1[i], y1[rest])).clamp(min=0)
        inter = w * h
        iou = inter / (area[i] + area[rest] - inter)
        dropped[rank + 1:] |= iou > iou_threshold
    return torch.tensor(keep, dtype=torch.int64)


def _ops_defined() -> None:
    """torchvision's ``_assert_has_ops``, once ``import_torchvision`` defined the ops
    (a plain function: TorchScript compiles it inside the scripted NMS helpers)."""
    return None


def import_torchvision():
    """``torchvision``, importable with the CPU torch (see the module docstring)."""
    import torch

    try:
        torch.ops.torchvision.nms  # noqa: B018 - the real extension is loaded
    except (AttributeError, RuntimeError):
        if not _LIBRARY:
            lib = torch.library.Library("torchvision", "DEF")
            for name in ("nms", "qnms"):
                lib.define(f"{name}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
                lib.impl(name, _nms, "CPU")
            _LIBRARY.append(lib)
    import torchvision
    import torchvision.ops.boxes as boxes

    if not torchvision.extension._has_ops():
        boxes._assert_has_ops = _ops_defined
    return torchvision
