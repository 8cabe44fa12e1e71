"""``onnxkit optimize -O2 in.onnx out.onnx``: optimize a model and explain every rewrite.

    onnxkit optimize -O1 model.onnx model.O1.onnx            # the report table
    onnxkit optimize -O2 model.onnx out.onnx --details       # and every rewrite
    onnxkit optimize -O2 model.onnx out.onnx --json rep.json # the report as data
    onnxkit optimize -O2 model.onnx out.onnx --verify        # random inputs, level 0 vs 2;
                                                             # bisects to the rewrite if they differ
"""

from __future__ import annotations

import json

import onnx

from onnxkit.cli.common import (MAX_SEED, ArgumentError, bounded_int, regular_file, say,
                                tolerance, writable_target, write_atomically)
from onnxkit.loading import load
from onnxkit.optimizer import bisect, optimize


def add_arguments(parser) -> None:
    parser.add_argument("input", help="the model to optimize (.onnx)")
    parser.add_argument("output", nargs="?",
                        help="where to write the optimized model (replaced if it exists)")
    parser.add_argument("-O", "--level", type=bounded_int(0, 3), default=1,
                        help="optimization level 0-3 (default 1)")
    parser.add_argument("--details", action="store_true",
                        help="list every rewrite and why candidates were turned down")
    parser.add_argument("--markdown", action="store_true", help="print the report as Markdown")
    parser.add_argument("--json", metavar="FILE",
                        help="write the report's data (to_dict) as JSON (replaced if it exists)")
    parser.add_argument("--verify", action="store_true",
                        help="compare outputs with the unoptimized model on random inputs")
    parser.add_argument("--rtol", type=tolerance, default=1e-4, help="relative tolerance of --verify")
    parser.add_argument("--atol", type=tolerance, default=1e-5, help="absolute tolerance of --verify")
    parser.add_argument("--seed", type=bounded_int(0, MAX_SEED), default=0,
                        help="seed of the --verify inputs")


def main(args) -> int:
    regular_file(args.input, "model")
    for path, what in ((args.output, "output"), (args.json, "--json")):
        if path:
            writable_target(path, what)  # before the work, not after it
    model = load(args.input)
    optimized, report = optimize(model, args.level)
    say(report.to_markdown() if args.markdown else str(report))
    if args.details:
        say(report.details(limit=None))
    if args.json:
        text = json.dumps(report.to_dict(), indent=1, default=str)
        write_atomically(args.json, text.encode("utf-8", "surrogatepass"), "--json")
    if args.output:
        try:
            data = optimized.SerializeToString()
        except ValueError as exc:  # over protobuf's 2 GiB
            raise ArgumentError(f"the optimized model cannot be serialized: {exc}") from None
        write_atomically(args.output, data, "output")
        say(f"wrote {args.output}")
    if args.verify:
        from onnxkit.inputs import random_feeds

        result = bisect(model, random_feeds(model, args.seed), level=args.level,
                        rtol=args.rtol, atol=args.atol)
        say(f"verify: {result}")
        return 0 if result.ok else 1
    return 0
