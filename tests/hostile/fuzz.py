"""Fuzz targets, settings profiles and counters shared by ``test_fuzz.py`` and the command line.

    python -m tests.hostile.fuzz field --examples 5000     # survey: collect every finding,
    python -m tests.hostile.fuzz all --examples 2000       # never stop at the first one

Profiles (environment variable ``ONNXKIT_FUZZ``): ``ci`` (default: a few hundred cases
per target, derandomized, no shrinking, well under a minute in all) and ``long``
(thousands per target, random, with shrinking).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time
from dataclasses import dataclass, field

from hypothesis import HealthCheck, Phase, given, settings

from tests.hostile import strategies
from tests.hostile.sandbox import Case, Outcome, Sandbox

TARGETS = {
    "bytes": strategies.byte_cases,
    "text": strategies.text_cases,
    "fields": strategies.field_cases,
    "feeds": strategies.feed_cases,
    "optimizer": strategies.optimizer_cases,
    "ops": strategies.op_cases,
    "cpu": strategies.cpu_op_cases,
}

# examples per target in each profile
PROFILES = {
    "ci": {"bytes": 500, "text": 300, "fields": 1500, "feeds": 1000, "optimizer": 200, "ops": 1500, "cpu": 300},
    "long": {"bytes": 3000, "text": 2000, "fields": 8000, "feeds": 5000, "optimizer": 2000, "ops": 10000, "cpu": 5000},
}

_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
           HealthCheck.large_base_example]


def profile_name() -> str:
    name = os.environ.get("ONNXKIT_FUZZ", "ci")
    if name not in PROFILES:
        raise ValueError(f"ONNXKIT_FUZZ={name!r}: choose one of {', '.join(PROFILES)}")
    return name


def fuzz_settings(target: str, examples: int | None = None) -> settings:
    name = profile_name()
    ci = name == "ci"
    return settings(
        max_examples=examples or PROFILES[name][target],
        deadline=None,
        derandomize=ci,
        database=None if ci else settings.default.database,
        phases=(Phase.explicit, Phase.reuse, Phase.generate) if ci else tuple(Phase),
        suppress_health_check=_HEALTH,
        print_blob=not ci,
    )


# Kernel folders others are still writing: a memory finding there is counted as
# "known:<folder>/<op>" (and reported to the lead with a reproduction) instead of failing.
# Findings anywhere else fail the test. Remove a folder once its kernels are hardened.
OTHERS_FOLDERS = frozenset({"cast", "reduce", "softmax", "loss", "ml", "training", "fused"})


def known_finding(outcome: Outcome) -> str | None:
    """``folder/op`` when a memory finding comes from a kernel in OTHERS_FOLDERS, else None."""
    from onnxkit.ops import load_reference_kernels

    if outcome.kind != "memory":
        return None
    found = re.search(r"kernel ([\w.]+)::(\w+)-(\d+)", outcome.message)
    if found is None:
        return None
    domain, op_type, version = found.groups()
    kernel = load_reference_kernels().get("" if domain == "ai.onnx" else domain, op_type, int(version))
    parts = kernel.fn.__module__.split(".") if kernel is not None else []
    if len(parts) > 2 and parts[:2] == ["onnxkit", "ops"] and parts[2] in OTHERS_FOLDERS:
        return f"{parts[2]}/{op_type}"
    return None


@dataclass
class Tally:
    """How many cases a target ran and how they ended."""

    target: str
    cases: int = 0
    outcomes: collections.Counter = field(default_factory=collections.Counter)
    seconds: float = 0.0

    def add(self, case: Case, outcome: Outcome) -> None:
        self.cases += 1
        known = known_finding(outcome)
        if known is not None:
            self.outcomes[f"known:{known}"] += 1
        else:
            self.outcomes[outcome.error_type if outcome.kind == "error" else outcome.kind] += 1

    def line(self) -> str:
        top = ", ".join(f"{k} {v}" for k, v in self.outcomes.most_common())
        return f"fuzz[{self.target}] ({profile_name()}): {self.cases} cases in {self.seconds:.1f} s: {top}"


def survey(target: str, examples: int) -> list[tuple[Case, Outcome]]:
    """Run ``examples`` cases of ``target``, collecting findings instead of failing."""
    tally, findings, seen = Tally(target), [], set()
    start = time.monotonic()
    with Sandbox() as box:
        @fuzz_settings(target, examples)
        @given(TARGETS[target]())
        def run(case):
            outcome = box.run(case)
            tally.add(case, outcome)
            if not outcome.acceptable and known_finding(outcome) is None:
                key = (outcome.kind, outcome.error_type, re.sub(r"\d+|'[^']*'", "_", outcome.message)[:80])
                if key not in seen:
                    seen.add(key)
                    findings.append((case, outcome))
                    print(outcome.report(case), "\n", "-" * 80, flush=True)

        run()
    tally.seconds = time.monotonic() - start
    print(tally.line(), flush=True)
    return findings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=[*TARGETS, "all"])
    parser.add_argument("--examples", type=int, default=500)
    args = parser.parse_args(argv)
    targets = list(TARGETS) if args.target == "all" else [args.target]
    total = 0
    for target in targets:
        total += len(survey(target, args.examples))
    print(f"{total} distinct finding(s)")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
