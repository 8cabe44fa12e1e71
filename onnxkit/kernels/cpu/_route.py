"""What the ``cpu`` kernel of the node just run took: a Conv's algorithm (``_conv_rules``),
or "reference" when the kernel handed the node to its reference kernel (a dtype, shape or
attribute the fast path does not take).

A kernel writes the note (``note``, ``fall_back``); the executor's ``trace_extra`` takes
it after each node of a traced run, and the profiler shows it beside the kernel:
``cpu:ai.onnx::Gemm-13 [reference]``. One note per thread (sessions may run from many);
writing it is one attribute store, and nothing reads it unless a trace is on.
"""

from __future__ import annotations

import threading

REFERENCE = "reference"
_NOTE = threading.local()


def note(name: str) -> None:
    """Record what this thread's current node ran (an algorithm's name)."""
    _NOTE.name = name


def taken() -> str | None:
    """What this thread's last noted node ran, once: then None until the next note."""
    name = getattr(_NOTE, "name", None)
    _NOTE.name = None
    return name


def fall_back(reference, *args, **kwargs):
    """``reference(*args, **kwargs)``, noted as "reference": the whole node's result is the
    reference kernel's."""
    _NOTE.name = REFERENCE
    return reference(*args, **kwargs)
