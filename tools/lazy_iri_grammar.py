"""Build rfc3987_syntax's IRI grammar on first use instead of at import.

jsonschema imports ``rfc3987_syntax`` (its "iri" format check) whenever it is installed,
and that module compiles an Earley parser for RFC 3987 at import: about 3 s of CPU in
every process that imports jsonschema (each Jupyter server, nbconvert, nbgrader, papermill,
pytest with nbval), for a check that almost never runs. ``make venv`` copies this file
into .venv's site-packages as ``_onnxkit_lazy_iri.py``, with a ``.pth`` line importing it
at start-up; while ``rfc3987_syntax.syntax_helpers`` runs its module code, ``lark.Lark``
makes a stand-in that builds the same parser, with the same arguments, the first time it
is used. Nothing else changes: if the module is not the one expected, or anything here
fails, the import goes on as it would have.
"""

from __future__ import annotations

import sys
import threading

TARGET = "rfc3987_syntax.syntax_helpers"


class LazyLark:
    """``Lark(*args, **kwargs)`` built on first attribute access, once, under a lock."""

    def __init__(self, real, *args, **kwargs):
        self._real, self._args, self._kwargs = real, args, kwargs
        self._parser = None
        self._lock = threading.Lock()

    def __getattr__(self, name):
        if self._parser is None:
            with self._lock:
                if self._parser is None:
                    self._parser = self._real(*self._args, **self._kwargs)
        return getattr(self._parser, name)


class _Loader:
    """Runs the real loader with ``lark.Lark`` lazy for the module-level parser only."""

    def __init__(self, loader):
        self.loader = loader

    def __getattr__(self, name):  # get_source, get_data, is_package...: the real loader's
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        import lark

        real = lark.Lark
        lark.Lark = lambda *args, **kwargs: LazyLark(real, *args, **kwargs)
        try:
            self.loader.exec_module(module)
        finally:
            lark.Lark = real
        if getattr(module, "Lark", None) is not real:
            module.Lark = real  # what its functions build later is the real parser


class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name != TARGET:
            return None
        try:
            sys.meta_path.remove(self)  # once, and not for the lookup below
            from importlib.machinery import PathFinder

            spec = PathFinder.find_spec(name, path)
            if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
                spec.loader = _Loader(spec.loader)
            return spec
        except Exception:
            return None


def install() -> None:
    if TARGET not in sys.modules and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


try:
    install()
except Exception:  # never in the way of a start-up
    pass
