"""``onnxkit conformance --backend NAME``: run the onnx backend test cases, write a report."""

from __future__ import annotations

from onnxkit.conformance.cases import MODEL_KINDS
from onnxkit.conformance.suite import run_suite, select_cases


def add_arguments(parser) -> None:
    parser.add_argument("--backend", "-b", default="reference",
                        help="an onnxkit executor (reference, cpu, cuda), 'onnxruntime', "
                             "'onnx.reference', or an importable onnx Backend module[:Name]")
    parser.add_argument("-k", "--filter", help="only cases whose name matches this regex")
    parser.add_argument("--kind", action="append", choices=("node",) + MODEL_KINDS,
                        help="only these kinds of case (repeatable)")
    parser.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: all cores)")
    parser.add_argument("--out", default="conformance-report", help="folder for the JSON/Markdown/PNG report")
    parser.add_argument("--no-exclusions", action="store_true",
                        help="also run the cases spec_tests/exclusions.py excludes")


def _exclusions() -> dict[str, str]:
    try:
        from spec_tests.exclusions import EXCLUDED
    except ImportError:
        return {}
    return dict(EXCLUDED)


def main(args) -> int:
    cases = select_cases(args.filter, tuple(args.kind) if args.kind else None)
    excluded = {} if args.no_exclusions else _exclusions()
    report = run_suite(args.backend, cases, args.jobs, excluded)
    paths = report.write(args.out)
    c = report.counts()
    print(f"{args.backend}: {c['pass']} passed, {c['fail']} failed, {c['error']} errors, "
          f"{c['skip']} skipped of {len(report.results)} cases")
    print("report: " + ", ".join(paths.values()))
    return 0
