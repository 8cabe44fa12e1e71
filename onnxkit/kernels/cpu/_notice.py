"""A one-line notice when a cpu kernel compiles, so that a notebook cell waiting on Numba
says why:

    compiling the cpu kernel for Conv (first use, cached afterwards)...

Nothing is compiled ahead of use: Numba compiles a kernel on its first call with new
argument types and keeps the machine code in its cache (``cache=True``), from which a
later process loads it in milliseconds. Numba's ``numba:compile`` event fires for a real
compilation only, not for a load from the cache. The notice names the operator whose
registered cpu kernel is on the calling thread's stack (else the Numba function), once
per operator per process, on stderr. ``ONNXKIT_CPU_NOTICE=0`` silences it (the notebook
checks set it: whether a kernel was cached must not change a cell's output).
"""

from __future__ import annotations

import os
import sys
import threading

PACKAGE = "onnxkit.kernels.cpu"
_SHOWN: set[str] = set()
_LOCK = threading.Lock()
_INSTALLED: list = []


def _operator(kernels) -> str | None:
    """The operator of the innermost registered cpu kernel on this thread's stack, or of
    a kernel prepared for a plan's step (a call of an object of this package with an
    ``op_type``)."""
    codes = {k.fn.__code__: k.op_type for k in kernels if hasattr(k.fn, "__code__")}
    frame = sys._getframe(1)
    while frame is not None:
        op_type = codes.get(frame.f_code)
        if op_type is not None:
            return op_type
        if frame.f_code.co_name == "__call__":
            owner = frame.f_locals.get("self")
            if type(owner).__module__.startswith(PACKAGE) and hasattr(owner, "op_type"):
                return owner.op_type
        frame = frame.f_back
    return None


def notice(dispatcher, kernels) -> str | None:
    """The line to print for ``dispatcher`` starting to compile, or None (not one of this
    package's kernels, silenced, or said already for its operator)."""
    py_func = getattr(dispatcher, "py_func", None)
    if not (getattr(py_func, "__module__", "") or "").startswith(PACKAGE):
        return None
    if os.environ.get("ONNXKIT_CPU_NOTICE") == "0":
        return None
    op_type = _operator(kernels)
    name = f"for {op_type}" if op_type else py_func.__name__
    with _LOCK:
        if name in _SHOWN:
            return None
        _SHOWN.add(name)
    return f"compiling the cpu kernel {name} (first use, cached afterwards)\u2026"


def install(kernels) -> None:
    """Listen for compilations of this package's kernels (once per process)."""
    from numba.core import event  # here: a module importing numba is hashed with the kernels

    class Notice(event.Listener):
        def on_start(self, ev) -> None:
            data = ev.data if isinstance(ev.data, dict) else {}
            line = notice(data.get("dispatcher"), kernels)
            if line is not None:
                print(line, file=sys.stderr, flush=True)

        def on_end(self, ev) -> None:
            pass

    with _LOCK:
        if not _INSTALLED:
            _INSTALLED.append(Notice())
            event.register("numba:compile", _INSTALLED[0])
