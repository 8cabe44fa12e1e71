"""``onnxkit conformance --backend NAME``: run the onnx backend test cases, write a report."""

from __future__ import annotations

import os
import re

from onnxkit.cli.common import MAX_JOBS, ArgumentError, bounded_int, say, short
from onnxkit.cli.outputs import file_stem
from onnxkit.conformance.cases import MODEL_KINDS
from onnxkit.conformance.exclusions import EXCLUDED
from onnxkit.conformance.suite import run_suite, select_cases
from onnxkit.html import terminal_text


def add_arguments(parser) -> None:
    parser.add_argument("--backend", "-b", default="reference",
                        help="an onnxkit executor (reference, cpu, cuda), 'onnxruntime', "
                             "'onnx.reference', or an importable onnx Backend module[:Name]")
    parser.add_argument("-k", "--filter", help="only cases whose name matches this regex")
    parser.add_argument("--kind", action="append", choices=("node",) + MODEL_KINDS,
                        help="only these kinds of case (repeatable)")
    parser.add_argument("--jobs", "-j", type=bounded_int(1, MAX_JOBS), default=None,
                        help=f"worker processes (default: all cores; at most {MAX_JOBS})")
    parser.add_argument("--out", default="conformance-report",
                        help="folder for the JSON/Markdown/PNG report (its files for this "
                             "backend are replaced)")
    parser.add_argument("--no-exclusions", action="store_true",
                        help="also run the cases onnxkit.conformance.exclusions excludes")


def _exclusions() -> dict[str, str]:
    return dict(EXCLUDED)


def _check_out(folder: str) -> None:
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise ArgumentError(f"--out {short(folder)!r} is not a folder")
    try:
        os.makedirs(folder, exist_ok=True)
    except (OSError, ValueError) as exc:
        raise ArgumentError(f"--out {short(folder)!r}: cannot make the folder "
                            f"({getattr(exc, 'strerror', None) or exc})") from None
    if not os.path.isdir(folder):
        raise ArgumentError(f"--out {short(folder)!r} is not a folder")


def main(args) -> int:
    if args.filter is not None:
        try:
            re.compile(args.filter)
        except (re.error, OverflowError, RecursionError) as exc:
            raise ArgumentError(f"-k {short(args.filter)!r} is not a valid regular expression "
                                f"({exc})") from None
    _check_out(args.out)
    from onnxkit.conformance.backends import resolve_backend

    resolve_backend(args.backend)  # an unknown backend fails before the cases are read
    cases = select_cases(args.filter, tuple(args.kind) if args.kind else None)
    if not cases:
        raise ArgumentError(f"no case matches -k {short(args.filter or '')!r}"
                            + (f" and --kind {', '.join(args.kind)}" if args.kind else ""))
    excluded = {} if args.no_exclusions else _exclusions()
    report = run_suite(args.backend, cases, args.jobs, excluded)
    paths = report.write(args.out, f"conformance-{file_stem(args.backend.replace(':', '_'))}")
    c = report.counts()
    print(f"{terminal_text(args.backend)}: {c['pass']} passed, {c['fail']} failed, "
          f"{c['error']} errors, {c['skip']} skipped of {len(report.results)} cases")
    say("report: " + ", ".join(terminal_text(p) for p in paths.values()))
    return 0
