"""The per-node trace callback: what widgets, profiles and debuggers are built on."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from onnx import NodeProto


@dataclass(frozen=True)
class TraceEvent:
    """One node execution.

    ``path`` locates nested nodes: ``""`` for the main graph, ``"loop1/body"`` inside
    the body of the node named ``loop1``; ``elapsed`` is in seconds; ``extra`` is what the
    executor adds (the ``cuda`` executor: where the node ran and the copies it made).
    """

    node: NodeProto
    path: str
    kernel: str
    inputs: tuple[Any, ...]
    outputs: tuple[Any, ...]
    elapsed: float
    extra: Any = None


TraceCallback = Callable[[TraceEvent], None]
