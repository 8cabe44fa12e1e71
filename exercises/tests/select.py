"""Which implementation the checks run against: the learner's, the reference solution, or
the code of a notebook (``use``).

The checks hold ``ex = exercise("ex1_kernels")``, a stand-in that looks each name up when
the check reads it, so one set of checks serves all three.
"""

from __future__ import annotations

import importlib
import os
from contextlib import contextmanager
from types import ModuleType

DEFAULT = "solutions"
#: exercise name -> the namespace that stands in for its module (a notebook's globals)
_USED: dict[str, object] = {}


def mode() -> str:
    chosen = os.environ.get("ONNXKIT_EXERCISES", DEFAULT).strip().lower() or DEFAULT
    if chosen not in ("learner", "solutions"):
        raise ValueError(f"ONNXKIT_EXERCISES must be 'learner' or 'solutions', not {chosen!r}")
    return chosen


def module(name: str, which: str | None = None) -> ModuleType:
    """``exercises.<name>`` or ``exercises.solutions.<name>``."""
    which = mode() if which is None else which
    package = "exercises" if which == "learner" else "exercises.solutions"
    return importlib.import_module(f"{package}.{name}")


def used(name: str) -> object | None:
    """The namespace that ``use`` put in place of exercise ``name``, if any."""
    return _USED.get(name)


def notebook() -> bool:
    """Whether a notebook's code is being checked (``use``)."""
    return bool(_USED)


@contextmanager
def use(name: str, namespace: dict):
    """Check the names of ``namespace`` (a notebook's ``globals()``) as exercise ``name``."""
    _USED[name] = Namespace(namespace)
    try:
        yield
    finally:
        _USED.pop(name, None)


class Namespace:
    """A dict's names as attributes: ``Namespace(globals()).KERNELS``."""

    def __init__(self, names: dict):
        self._names = names

    def __getattr__(self, attr: str):
        try:
            return self._names[attr]
        except KeyError:
            raise AttributeError(f"{attr} is not defined: run the cell that defines it") from None


class Exercise:
    """Exercise ``name`` as the checks see it; each name is looked up when it is read."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attr: str):
        target = used(self._name)
        return getattr(module(self._name) if target is None else target, attr)


def exercise(name: str) -> Exercise:
    """``exercise("ex1_kernels")``: the learner's code, the solution, or a notebook's."""
    return Exercise(name)
