"""``onnxkit info model.onnx``: what a model is made of."""

from __future__ import annotations

from collections import Counter

import numpy as np
from onnx import ModelProto

from onnxkit.cli.common import ArgumentError, regular_file, say
from onnxkit.examples import EXAMPLES, example_path
from onnxkit.html import terminal_text
from onnxkit.loading import load
from onnxkit.runtime.feeds import NodeArg


def add_arguments(parser) -> None:
    parser.add_argument("model", nargs="?", help="path to an .onnx file")
    parser.add_argument("--example", choices=EXAMPLES, help="use a bundled example model")


def model_argument(args) -> str:
    """The model's path: ``--example NAME`` or the positional path, a regular file."""
    if args.example and args.model:
        raise ArgumentError("give a model path or --example NAME, not both")
    if args.example:
        return example_path(args.example)
    if not args.model:
        raise ArgumentError("give a model path or --example NAME")
    regular_file(args.model, "model")
    return args.model


def describe(model: ModelProto) -> str:
    """The summary ``onnxkit info`` prints; each model string through ``terminal_text`` (a
    newline in a name is shown as ``\\x0a``, so a name cannot fake a line)."""
    g = model.graph
    t = terminal_text
    lines = [f"IR version   {model.ir_version}",
             "opsets       " + ", ".join(f"{t(o.domain or 'ai.onnx')}:{o.version}" for o in model.opset_import),
             f"producer     {t(model.producer_name)} {t(model.producer_version)}".rstrip(),
             f"graph        {t(repr(g.name))}: {len(g.node)} nodes, {len(g.initializer)} initializers "
             f"({_parameter_count(model):,} parameters)"]
    initialized = {init.name for init in g.initializer}
    lines.append("inputs")
    lines += [f"  {_arg_line(vi)}" for vi in g.input if vi.name not in initialized]
    lines.append("outputs")
    lines += [f"  {_arg_line(vi)}" for vi in g.output]
    if model.functions:
        lines.append("functions    " + ", ".join(f"{t(f.domain)}::{t(f.name)}" for f in model.functions))
    lines.append("operators")
    counts = Counter(t((f"{n.domain}::" if n.domain not in ("", "ai.onnx") else "") + n.op_type)
                     for n in g.node)
    width = min(max((len(k) for k in counts), default=0), 60)
    lines += [f"  {op:<{width}}  {n}" for op, n in counts.most_common()]
    return "\n".join(lines)


def _arg_line(vi) -> str:
    arg = NodeArg.from_value_info(vi)
    shape = "?" if arg.shape is None else "[" + ", ".join("?" if d is None else str(d) for d in arg.shape) + "]"
    return terminal_text(f"{arg.name}: {arg.type} {shape}")


def _parameter_count(model: ModelProto) -> int:
    return int(sum(np.prod(t.dims, dtype=np.int64) for t in model.graph.initializer))


def main(args) -> int:
    say(describe(load(model_argument(args))))
    return 0
