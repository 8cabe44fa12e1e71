"""Export helpers for PyTorch (optional: needs ``pip install onnxkit[torch]``)."""
