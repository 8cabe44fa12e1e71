"""``KernelContext``, kept at its old path: it lives in ``onnxkit.core.context``."""

from onnxkit.core.context import KernelContext

__all__ = ["KernelContext"]
