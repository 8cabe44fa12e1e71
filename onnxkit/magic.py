"""IPython magics: ``%load_ext onnxkit``, then

    y = %onnx_run model.onnx x=x_array          # run a model on notebook variables
    y = %onnx_run model x=x --executor cpu      # a ModelProto / Session variable works too

    %%onnx tiny --run x=x                       # the cell is ONNX text; stored as `tiny`,
    <ir_version: 10, opset_import: ["" : 21]>   # drawn as a graph widget, and run on `x`
    tiny (float[N] x) => (float[N] y) { y = Relu(x) }

``%onnx_run`` returns the output itself when the model has one, else a dict name -> value.
``%%onnx NAME [--run k=v ...] [--executor E] [--opset N] [--expand] [--no-show]``: the
``<ir_version, opset_import>`` header may be left out (default: the newest opset onnx knows,
or ``--opset``). A bad model, bad input or bad argument (``--opset`` 1..newest, ``--level``
0-3, a known ``--executor``, each option and input once) stops the cell with a one-line
onnxkit error, escaped like terminal output; a FIFO or device is never opened as a model.
"""

from __future__ import annotations

import os
import re
from typing import Any

import onnx

from onnxkit.errors import OnnxkitError, shown
from onnxkit.html import terminal_text

_SESSIONS: dict[tuple, Any] = {}


class MagicError(OnnxkitError):
    """Shown by IPython as one line (no traceback): what went wrong and what to do."""

    def __init__(self, message: str):
        # one line, cut when huge, with escape bytes and bidi overrides shown, not obeyed
        super().__init__(terminal_text(shown(one_line(message), 1000)))

    def _render_traceback_(self) -> list[str]:  # IPython calls this instead of a traceback
        return [f"onnxkit error: {self}"]


def one_line(message: str) -> str:
    message = re.sub(r"b'(\[ParseError.*?)'", r"\1", message)  # the parser's bytes message
    message = message.replace("\\n", " ")
    return re.sub(r"\s+", " ", message).strip()


def fail(exc: BaseException) -> MagicError:
    if isinstance(exc, MagicError):
        return exc
    if isinstance(exc, OnnxkitError):
        return MagicError(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, onnx.checker.ValidationError):
        return MagicError(f"the model is not valid ONNX: {exc}")
    if isinstance(exc, MemoryError):
        return MagicError("out of memory: the model or its inputs need more than this "
                          "machine can give")
    return MagicError(f"{type(exc).__name__}: {exc}")


def whole_number(options: dict, name: str, low: int, high: int, default: int | None) -> int | None:
    """``options[name]`` as an int in [low, high]; a MagicError naming the bounds if not."""
    if name not in options:
        return default
    text = options[name]
    try:
        value = int(str(text).strip(), 10)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        raise MagicError(f"--{name} {str(text)!r}: give a whole number from {low} to {high}")
    return value


def executor_option(options: dict) -> str:
    from onnxkit.runtime.executors import executor_names

    name = options.get("executor", "reference")
    if name not in executor_names():
        raise MagicError(f"--executor {name!r}: choose one of {', '.join(executor_names())}")
    return name


def parse_options(tokens: list[str], flags: set[str], valued: set[str]) -> tuple[list[str], dict, dict]:
    """Split tokens into positionals, ``name=expr`` feeds and ``--options``."""
    positional, feeds, options = [], {}, {}
    k = 0
    while k < len(tokens):
        tok = tokens[k]
        if tok.startswith("--"):
            opt = tok[2:]
            if opt.split("=", 1)[0] in options:
                raise MagicError(f"--{opt.split('=', 1)[0]} is given twice")
            if "=" in opt:
                opt, value = opt.split("=", 1)
                if opt in flags:
                    raise MagicError(f"--{opt} takes no value")
                options[opt] = unquote(value)
            elif opt in flags:
                options[opt] = True
            elif opt in valued:
                if k + 1 >= len(tokens):
                    raise MagicError(f"--{opt} needs a value")
                options[opt] = unquote(tokens[k + 1])
                k += 1
            else:
                known = ", ".join(f"--{o}" for o in sorted(flags | valued))
                raise MagicError(f"unknown option --{opt}; options: {known}")
            if opt not in flags | valued:
                raise MagicError(f"unknown option --{opt}")
        elif "=" in tok and not tok.startswith("="):
            name, expr = tok.split("=", 1)
            if name in feeds:
                raise MagicError(f"input {name!r} is given twice")
            if not expr:
                raise MagicError(f"input {name!r} has no value: write {name}=EXPRESSION")
            feeds[name] = expr
        else:
            positional.append(unquote(tok))
        k += 1
    return positional, feeds, options


def split_line(line: str) -> list[str]:
    """Split on spaces outside quotes and brackets, so ``x=a[0, 1]`` or ``x=f('a b')`` stay whole.

    Quotes are kept (an expression needs them); ``unquote`` strips them from paths.
    """
    tokens, current, depth, quote = [], [], 0, ""
    for ch in line:
        if quote:
            current.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch in "([{":
            depth += 1
            current.append(ch)
        elif ch in ")]}":
            depth = max(depth - 1, 0)
            current.append(ch)
        elif ch.isspace() and depth == 0:
            if current:
                tokens.append("".join(current))
                current = []
        else:
            current.append(ch)
    if quote:
        raise MagicError(f"unclosed quote {quote} in the magic's arguments")
    if current:
        tokens.append("".join(current))
    return tokens


def unquote(token: str) -> str:
    if len(token) >= 2 and token[0] == token[-1] and token[0] in "'\"":
        return token[1:-1]
    return token


def session_for(obj: Any, executor: str, level: int):
    from onnx import ModelProto

    from onnxkit.api import Session

    if isinstance(getattr(obj, "model", None), ModelProto) and hasattr(obj, "run"):
        return obj  # already a Session
    if isinstance(obj, (str, os.PathLike)) and os.path.exists(os.fspath(obj)) \
            and not os.path.isfile(os.fspath(obj)):  # a FIFO or device would hang or never end
        from onnxkit.cli.common import file_kind

        kind = file_kind(os.stat(os.fspath(obj)).st_mode)
        raise MagicError(f"{os.fspath(obj)!r} is {kind}, not a model file")
    if isinstance(obj, (str, os.PathLike)) and os.path.isfile(os.fspath(obj)):
        path = os.path.abspath(os.fspath(obj))
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size, executor, level)
        if key not in _SESSIONS:
            if len(_SESSIONS) > 16:
                _SESSIONS.clear()
            _SESSIONS[key] = Session(path, executor=executor, level=level)
        return _SESSIONS[key]
    return Session(obj, executor=executor, level=level)


def returned(names: list[str], outputs: list) -> Any:
    if len(outputs) == 1:
        return outputs[0]
    return dict(zip(names, outputs))


def build_magics():
    """The Magics class, built on demand so that importing onnxkit never imports IPython."""
    from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

    @magics_class
    class OnnxMagics(Magics):
        def _feeds(self, feeds: dict[str, str]) -> dict[str, Any]:
            out = {}
            for name, expr in feeds.items():
                try:
                    out[name] = self.shell.ev(expr)
                except Exception as exc:
                    raise MagicError(f"input {name!r}: cannot evaluate {expr!r}: "
                                     f"{type(exc).__name__}: {exc}") from None
            return out

        @line_magic
        def onnx_run(self, line: str):
            """%onnx_run MODEL name=expr ... [--executor E] [--level N] [--outputs a,b]"""
            try:
                return self._onnx_run(line)
            except Exception as exc:  # noqa: BLE001 - every failure is one line, never a traceback
                raise fail(exc) from None

        @cell_magic
        def onnx(self, line: str, cell: str):
            """%%onnx [NAME] [--run name=expr ...] [--executor E] [--opset N] [--expand] [--no-show]"""
            try:
                return self._onnx(line, cell)
            except Exception as exc:  # noqa: BLE001 - every failure is one line, never a traceback
                raise fail(exc) from None

        def _onnx_run(self, line: str):
            positional, feeds, options = parse_options(
                split_line(line), set(), {"executor", "level", "outputs"})
            if len(positional) != 1:
                raise MagicError("usage: %onnx_run MODEL name=value ... (MODEL: a path or a "
                                 "variable holding a ModelProto or Session)")
            executor = executor_option(options)
            level = whole_number(options, "level", 0, 3, 0)
            names = None
            if "outputs" in options:
                names = [n.strip() for n in options["outputs"].split(",")]
                if not all(names):
                    raise MagicError(f"--outputs {options['outputs']!r}: give output names "
                                     f"separated by commas, e.g. --outputs y,z")
            target = positional[0]
            obj = self.shell.user_ns.get(target, target) if target.isidentifier() else target
            if isinstance(obj, str) and not os.path.exists(obj) and "\n" not in obj:
                raise MagicError(f"no model file and no variable named {target!r}")
            values = self._feeds(feeds)
            session = session_for(obj, executor, level)
            if names is None:
                names = [o.name for o in session.get_outputs()]
            return returned(names, session.run(names, values))

        def _onnx(self, line: str, cell: str):
            positional, feeds, options = parse_options(
                split_line(line), {"run", "expand", "no-show"}, {"executor", "opset"})
            if len(positional) > 1:
                raise MagicError("usage: %%onnx [NAME] [--run name=value ...]: one name only")
            if feeds and "run" not in options:
                raise MagicError("inputs given without --run: write %%onnx NAME --run x=x")
            name = positional[0] if positional else None
            if name is not None and not name.isidentifier():
                raise MagicError(f"{name!r} is not a valid Python variable name")
            executor = executor_option(options)
            opset = whole_number(options, "opset", 1, onnx.defs.onnx_opset_version(), None)
            model = parse_cell(cell, opset)
            from onnxkit.api import Session

            onnx.checker.check_model(model)
            session = Session(model, executor=executor)
            trace = None
            outputs = None
            if "run" in options:
                from onnxkit.widgets.recorder import TraceRecorder

                trace = TraceRecorder(keep_values=True)
                outputs = session.run(None, self._feeds(feeds), trace=trace)
            if name is not None:
                self.shell.user_ns[name] = model
            if "no-show" not in options:
                from onnxkit.widgets.graph import GraphWidget

                widget = GraphWidget(model, trace=trace, expand=bool(options.get("expand")))
                if outputs is None:
                    return widget
                from IPython.display import display

                display(widget)
            if outputs is not None:
                return returned([o.name for o in session.get_outputs()], outputs)
            return None

    return OnnxMagics


def parse_cell(cell: str, opset: int | None) -> onnx.ModelProto:
    from onnxkit.loading import parse_text

    text = cell.strip()
    if not text:
        raise MagicError("the %%onnx cell is empty: write a graph in ONNX text syntax")
    if not text.startswith("<"):
        version = opset if opset is not None else onnx.defs.onnx_opset_version()
        text = f'<ir_version: {onnx.IR_VERSION}, opset_import: ["" : {version}]> {text}'
    elif opset is not None:
        raise MagicError("--opset is only for cells without an <ir_version, opset_import> header")
    try:
        return parse_text(text)
    except OnnxkitError as exc:
        raise fail(exc) from None


def load_ipython_extension(ipython) -> None:
    """``%load_ext onnxkit``: register ``%onnx_run`` and ``%%onnx``."""
    ipython.register_magics(build_magics())


def unload_ipython_extension(ipython) -> None:  # magics stay until the kernel restarts
    return None
