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

from onnxkit.loading import load
from onnxkit.optimizer import bisect, optimize


def add_arguments(parser) -> None:
    parser.add_argument("input", help="the model to optimize (.onnx)")
    parser.add_argument("output", nargs="?", help="where to write the optimized model")
    parser.add_argument("-O", "--level", type=int, default=1, choices=(0, 1, 2, 3),
                        help="optimization level (default 1)")
    parser.add_argument("--details", action="store_true",
                        help="list every rewrite and why candidates were turned down")
    parser.add_argument("--markdown", action="store_true", help="print the report as Markdown")
    parser.add_argument("--json", metavar="FILE", help="write the report's data (to_dict) as JSON")
    parser.add_argument("--verify", action="store_true",
                        help="compare outputs with the unoptimized model on random inputs")
    parser.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance of --verify")
    parser.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance of --verify")
    parser.add_argument("--seed", type=int, default=0, help="seed of the --verify inputs")


def main(args) -> int:
    model = load(args.input)
    optimized, report = optimize(model, args.level)
    print(report.to_markdown() if args.markdown else report)
    if args.details:
        print(report.details(limit=None))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report.to_dict(), f, indent=1, default=str)
    if args.output:
        onnx.save(optimized, args.output)
        print(f"wrote {args.output}")
    if args.verify:
        from onnxkit.inputs import random_feeds

        result = bisect(model, random_feeds(model, args.seed), level=args.level,
                        rtol=args.rtol, atol=args.atol)
        print(f"verify: {result}")
        return 0 if result.ok else 1
    return 0
