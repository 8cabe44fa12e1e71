"""The ``onnxkit`` command. One module per subcommand; the table below lists them all.

    onnxkit info model.onnx
    onnxkit run model.onnx --input x=x.npy
    onnxkit optimize -O2 in.onnx out.onnx
    onnxkit conformance --backend reference
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from onnxkit.cli.common import ArgumentError, reconfigure_streams
from onnxkit.errors import OnnxkitError
from onnxkit.html import terminal_text

# subcommand -> module defining ``add_arguments(parser)`` and ``main(args) -> int``
COMMANDS = {
    "info": ("onnxkit.cli.info", "show a model's IR version, opsets, inputs/outputs and operators"),
    "run": ("onnxkit.cli.run", "run a model on given or random inputs"),
    "optimize": ("onnxkit.cli.optimize", "optimize a model at level 0-3 and explain each rewrite"),
    "conformance": ("onnxkit.cli.conformance", "run the onnx backend test cases against a runtime"),
    "scoreboard": ("onnxkit.cli.scoreboard", "run the cases on every installed runtime: HTML/JSON/PNG"),
}


class Parser(argparse.ArgumentParser):
    """argparse, with each usage error one line on stderr (exit status 2), never the usage
    block: ``onnxkit run: error: argument --repeat/-r: ... (see onnxkit run --help)``."""

    def error(self, message: str):
        self.exit(2, terminal_text(f"{self.prog}: error: {message} (see {self.prog} --help)") + "\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="onnxkit", description="Learn, run and check ONNX models.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        try:
            importlib.import_module(module).add_arguments(p)
        except ImportError:
            p.set_defaults(_unavailable=True)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand. Exit status: 0 done, 1 an onnxkit error (or --compare/--verify
    found a difference), 2 a bad argument, 130 interrupted. Errors are one line on stderr."""
    reconfigure_streams()
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # a bad argument (already reported, one line) or --help
        return exc.code if isinstance(exc.code, int) else 0
    prog = f"onnxkit {args.command}"
    if getattr(args, "_unavailable", False):
        return _error(prog, "not available in this build", 2)
    try:
        status = int(importlib.import_module(args._module).main(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, where it is caught, not at exit
        return status
    except ArgumentError as exc:
        return _error(prog, str(exc), 2)
    except OnnxkitError as exc:
        return _error(prog, str(exc), 1)
    except MemoryError:
        return _error(prog, "out of memory (the model or its inputs need more than this "
                            "machine can give; try smaller inputs or --dim values)", 1)
    except KeyboardInterrupt:
        return _error(prog, "interrupted", 130)
    except BrokenPipeError:  # ``onnxkit info m.onnx | head``: the reader left, nothing to say
        _silence_stdout()
        return 1
    except RecursionError:
        return _error(prog, "the model is nested too deeply to process", 1)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: still one line
        if os.environ.get("ONNXKIT_TRACEBACK"):
            raise
        return _error(prog, f"internal error, please report it: {type(exc).__name__}: {exc} "
                            f"(ONNXKIT_TRACEBACK=1 shows the traceback)", 1)


def _error(prog: str, message: str, status: int) -> int:
    print(terminal_text(f"{prog}: error: {message}"), file=sys.stderr)
    return status


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":
    sys.exit(main())
