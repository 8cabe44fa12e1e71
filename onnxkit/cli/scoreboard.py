"""``onnxkit scoreboard --runtimes onnxruntime,openvino --out DIR``: every case on every runtime.

Writes ``DIR/scoreboard.html`` (totals, a cell per operator version and runtime, each
failure one click from its case and message), ``scoreboard.json`` and ``scoreboard.png``.
Each runtime runs in a worker process of its own, with a per-case timeout.
"""

from __future__ import annotations

from onnxkit.conformance.cases import MODEL_KINDS
from onnxkit.conformance.exclusions import EXCLUDED
from onnxkit.conformance.runtimes import ALIASES, RUNTIMES
from onnxkit.errors import OnnxkitError
from onnxkit.html import terminal_text

# every runtime but onnxkit's cpu executor: its Numba kernels compile on first use, minutes
# each while the cache is cold, which a per-case timeout counts as timeouts; make test runs
# the spec suite on it (`pytest spec_tests --executor cpu`) and `-r cpu` adds it here
DEFAULT_RUNTIMES = tuple(n for n in RUNTIMES if n != "cpu")


def add_arguments(parser) -> None:
    parser.add_argument("--runtimes", "-r", default=",".join(DEFAULT_RUNTIMES),
                        help=f"comma-separated runtimes (default: {', '.join(DEFAULT_RUNTIMES)}; "
                             "those not installed are listed as such)")
    parser.add_argument("--out", default="scoreboard", help="folder for scoreboard.html/.json/.png")
    parser.add_argument("-k", "--filter", help="only cases whose name matches this regex")
    parser.add_argument("--kind", action="append", choices=("node", "version") + MODEL_KINDS,
                        help="only these kinds of case (repeatable); 'version': the cases of "
                             "older operator versions (onnxkit/conformance/versions.py)")
    parser.add_argument("--every", type=int, default=1, metavar="N",
                        help="a quick subset: every N-th case only")
    parser.add_argument("--every-runtime", action="append", default=[], metavar="NAME=N",
                        help="run every N-th case on runtime NAME only (repeatable; default: "
                             "the adapter's, e.g. tinygrad=20; NAME=1 runs all)")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="runtimes run at once (default 2)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one case may take (default 60)")
    parser.add_argument("--no-exclusions", action="store_true",
                        help="also run the cases spec_tests/exclusions.py excludes")


def _cases(args):
    import re

    from onnxkit.conformance.suite import select_cases
    from onnxkit.conformance.versions import version_cases

    kinds = tuple(args.kind) if args.kind else None
    cases = select_cases(args.filter, kinds) if kinds != ("version",) else []
    if kinds is None or "version" in kinds:
        rx = re.compile(args.filter) if args.filter else None
        cases += [c for c in version_cases() if rx is None or rx.search(c.name)]
    if args.every < 1:
        raise OnnxkitError("--every must be at least 1")
    return cases[::args.every]


def _every_runtime(specs: list[str]) -> dict[str, int]:
    out = {}
    for spec in specs:
        name, _, n = spec.partition("=")
        name = ALIASES.get(name.strip(), name.strip())
        if name not in RUNTIMES or not n.strip().isdigit() or int(n) < 1:
            raise OnnxkitError(f"--every-runtime {spec!r}: expected NAME=N with NAME one of "
                               f"{', '.join(RUNTIMES)} and N at least 1")
        out[name] = int(n)
    return out


def main(args) -> int:
    from onnxkit.conformance import scoreboard_page
    from onnxkit.conformance.scoreboard import LABELS, run_scoreboard

    names = [ALIASES.get(n.strip(), n.strip()) for n in args.runtimes.split(",") if n.strip()]
    unknown = [n for n in names if n not in RUNTIMES]
    if unknown:
        raise OnnxkitError(f"unknown runtime(s) {', '.join(unknown)}: known are {', '.join(RUNTIMES)}")
    cases = _cases(args)
    if not cases:
        raise OnnxkitError("no case matches the selection")
    excluded = {} if args.no_exclusions else dict(EXCLUDED)
    every = _every_runtime(args.every_runtime)
    board = run_scoreboard(names, cases, args.jobs, args.timeout, excluded, every=every)
    paths = scoreboard_page.write(board, args.out)
    for name, rt in board["runtimes"].items():
        if not rt.get("installed"):
            print(f"{terminal_text(name)}: not installed")
            continue
        t = rt["totals"]
        print(f"{terminal_text(name)} {terminal_text(rt['version'])}: "
              + ", ".join(f"{t[s]} {LABELS[s]}" for s in t if t[s])
              + f" ({rt['seconds']} s, {rt['startup_seconds']} s of it starting workers; "
              f"{rt['cpu_seconds']} s of processor time)")
    print("scoreboard: " + ", ".join(terminal_text(p) for p in paths.values()))
    return 0
