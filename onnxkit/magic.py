"""IPython magics: ``%load_ext onnxkit``, then

    y = %onnx_run model.onnx x=x_array          # run a model on notebook variables
    y = %onnx_run model x=x --executor cpu      # a ModelProto / Session variable works too

    %%onnx tiny --run x=x                       # the cell is ONNX text; stored as `tiny`,
    <ir_version: 10, opset_import: ["" : 21]>   # drawn as a graph widget, and run on `x`
    tiny (float[N] x) => (float[N] y) { y = Relu(x) }

``%onnx_run`` returns the output itself when the model has one, else a dict name -> value.
``%%onnx NAME [--run k=v ...] [--executor E] [--opset N] [--expand] [--no-show]``: the
``<ir_version, opset_import>`` header may be left out (default: the newest opset onnx knows,
or ``--opset``). A bad model or bad input stops the cell with a one-line onnxkit error.
"""

from __future__ import annotations

import os
import re
from typing import Any

import onnx

from onnxkit.errors import OnnxkitError

_SESSIONS: dict[tuple, Any] = {}


class MagicError(Exception):
    """Shown by IPython as one line (no traceback): what went wrong and what to do."""

    def __init__(self, message: str):
        super().__init__(one_line(message))

    def _render_traceback_(self) -> list[str]:  # IPython calls this instead of a traceback
        return [f"onnxkit error: {self}"]


def one_line(message: str) -> str:
    message = re.sub(r"b'(\[ParseError.*?)'", r"\1", message)  # the parser's bytes message
    message = message.replace("\\n", " ")
    return re.sub(r"\s+", " ", message).strip()


def fail(exc: BaseException) -> MagicError:
    if isinstance(exc, OnnxkitError):
        return MagicError(f"{type(exc).__name__}: {exc}")
    if isinstance(exc, onnx.checker.ValidationError):
        return MagicError(f"the model is not valid ONNX: {exc}")
    return MagicError(f"{type(exc).__name__}: {exc}")


def parse_options(tokens: list[str], flags: set[str], valued: set[str]) -> tuple[list[str], dict, dict]:
    """Split tokens into positionals, ``name=expr`` feeds and ``--options``."""
    positional, feeds, options = [], {}, {}
    k = 0
    while k < len(tokens):
        tok = tokens[k]
        if tok.startswith("--"):
            opt = tok[2:]
            if "=" in opt:
                opt, value = opt.split("=", 1)
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

    from onnxkit.runtime.session import Session

    if isinstance(getattr(obj, "model", None), ModelProto) and hasattr(obj, "run"):
        return obj  # already a Session
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
            positional, feeds, options = parse_options(
                split_line(line), set(), {"executor", "level", "outputs"})
            if len(positional) != 1:
                raise MagicError("usage: %onnx_run MODEL name=value ... (MODEL: a path or a "
                                 "variable holding a ModelProto or Session)")
            target = positional[0]
            obj = self.shell.user_ns.get(target, target) if target.isidentifier() else target
            if isinstance(obj, str) and not os.path.exists(obj) and "\n" not in obj:
                raise MagicError(f"no model file and no variable named {target!r}")
            values = self._feeds(feeds)
            try:
                session = session_for(obj, options.get("executor", "reference"),
                                      int(options.get("level", 0)))
                names = (options["outputs"].split(",") if "outputs" in options
                         else [o.name for o in session.get_outputs()])
                outputs = session.run(names, values)
            except ValueError as exc:
                raise fail(exc) from None
            except OnnxkitError as exc:
                raise fail(exc) from None
            return returned(names, outputs)

        @cell_magic
        def onnx(self, line: str, cell: str):
            """%%onnx [NAME] [--run name=expr ...] [--executor E] [--opset N] [--expand] [--no-show]"""
            positional, feeds, options = parse_options(
                split_line(line), {"run", "expand", "no-show"}, {"executor", "opset"})
            if len(positional) > 1:
                raise MagicError("usage: %%onnx [NAME] [--run name=value ...]: one name only")
            if feeds and "run" not in options:
                raise MagicError("inputs given without --run: write %%onnx NAME --run x=x")
            name = positional[0] if positional else None
            if name is not None and not name.isidentifier():
                raise MagicError(f"{name!r} is not a valid Python variable name")
            model = parse_cell(cell, options.get("opset"))
            executor = options.get("executor", "reference")
            from onnxkit.runtime.session import Session

            try:
                onnx.checker.check_model(model)
                session = Session(model, executor=executor)
                trace = None
                outputs = None
                if "run" in options:
                    from onnxkit.widgets.recorder import TraceRecorder

                    trace = TraceRecorder(keep_values=True)
                    outputs = session.run(None, self._feeds(feeds), trace=trace)
            except (OnnxkitError, onnx.checker.ValidationError) as exc:
                raise fail(exc) from None
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


def parse_cell(cell: str, opset: str | None) -> onnx.ModelProto:
    from onnxkit.loading import parse_text

    text = cell.strip()
    if not text:
        raise MagicError("the %%onnx cell is empty: write a graph in ONNX text syntax")
    if not text.startswith("<"):
        version = int(opset) if opset is not None else onnx.defs.onnx_opset_version()
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
