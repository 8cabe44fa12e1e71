"""The ``onnxkit`` command. One module per subcommand; the table below lists them all.

    onnxkit info model.onnx
    onnxkit run model.onnx --input x=x.npy
    onnxkit optimize -O2 in.onnx out.onnx
    onnxkit conformance --backend reference
"""

from __future__ import annotations

import argparse
import importlib
import sys

from onnxkit.errors import OnnxkitError

# subcommand -> module defining ``add_arguments(parser)`` and ``main(args) -> int``
COMMANDS = {
    "info": ("onnxkit.cli.info", "show a model's IR version, opsets, inputs/outputs and operators"),
    "run": ("onnxkit.cli.run", "run a model on given or random inputs"),
    "optimize": ("onnxkit.cli.optimize", "optimize a model at level 0-3 and explain each rewrite"),
    "conformance": ("onnxkit.cli.conformance", "run the onnx backend test cases against a runtime"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="onnxkit", description="Learn, run and check ONNX models.")
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
    args = build_parser().parse_args(argv)
    if getattr(args, "_unavailable", False):
        print(f"onnxkit {args.command}: not available in this build", file=sys.stderr)
        return 2
    try:
        return int(importlib.import_module(args._module).main(args) or 0)
    except OnnxkitError as exc:
        print(f"onnxkit {args.command}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
