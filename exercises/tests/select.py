"""Which implementation the checks run against: the learner's or the reference solution."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

DEFAULT = "solutions"


def mode() -> str:
    chosen = os.environ.get("ONNXKIT_EXERCISES", DEFAULT).strip().lower() or DEFAULT
    if chosen not in ("learner", "solutions"):
        raise ValueError(f"ONNXKIT_EXERCISES must be 'learner' or 'solutions', not {chosen!r}")
    return chosen


def exercise(name: str, which: str | None = None) -> ModuleType:
    """``exercise("ex1_kernels")``: ``exercises.ex1_kernels`` or ``exercises.solutions.ex1_kernels``."""
    which = mode() if which is None else which
    package = "exercises" if which == "learner" else "exercises.solutions"
    return importlib.import_module(f"{package}.{name}")
