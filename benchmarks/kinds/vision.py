"""Vision models from timm and torchvision at small inputs (random weights, eval mode),
and a detector whose graph holds NonMaxSuppression and If (torchvision's SSDlite)."""

from __future__ import annotations

from benchmarks.kinds.tvshim import import_torchvision


def _image(size: int, batch: int = 1):
    import torch

    torch.manual_seed(0)
    return {"x": torch.randn(batch, 3, size, size)}


def timm_model(name: str, size: int, **kwargs):
    def build():
        import_torchvision()
        import timm
        import torch

        torch.manual_seed(0)
        module = timm.create_model(name, pretrained=False, **kwargs).eval()
        return module, _image(size), ["y"]
    return build


def torchvision_model(name: str, size: int):
    def build():
        import torch

        models = import_torchvision().models
        torch.manual_seed(0)
        module = getattr(models, name)(weights=None).eval()
        return module, _image(size), ["y"]
    return build


def ssdlite():
    """SSDlite320 (MobileNetV3-large backbone, 5 classes) on one 320x320 image: boxes,
    scores and labels after per-class NMS."""
    import torch

    detection = import_torchvision().models.detection
    torch.manual_seed(0)
    model = detection.ssdlite320_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=5, detections_per_img=50,
        topk_candidates=100).eval()

    class Detector(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, x):
            out = self.model([x[0]])[0]
            return out["boxes"], out["scores"], out["labels"]

    return Detector().eval(), _image(320), ["boxes", "scores", "labels"]


MODELS = {
    "timm_vit_tiny": timm_model("vit_tiny_patch16_224", 64, img_size=64),
    "timm_convnext_atto": timm_model("convnext_atto", 64),
    "timm_efficientnet_b0": timm_model("efficientnet_b0", 64),
    "tv_mobilenet_v3_small": torchvision_model("mobilenet_v3_small", 64),
    "tv_resnet18": torchvision_model("resnet18", 64),
}
