"""Which rewrite changed the outputs? Binary search over the optimizer's rewrites.

    result = bisect(model, feeds, level=2, rtol=1e-4, atol=1e-5)
    print(result)        # "rewrite #17 [conv_fold/BatchNormalization] bn3 ... -> ..."

    reference = run the model as given (level 0)
    if the level's full run matches: done
    lo, hi = 0, number of rewrites               # budget lo matches, budget hi does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        optimize with a budget of mid rewrites and run it
        matches -> lo = mid, else hi = mid
    the culprit is rewrite number hi - 1 (the passes apply their rewrites in a fixed order)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from onnxkit.loading import ModelLike, load
from onnxkit.optimizer.manager import optimize
from onnxkit.optimizer.report import Rewrite
from onnxkit.runtime.session import Session  # the runtime, a layer below: unoptimized


@dataclass
class BisectResult:
    ok: bool  # the level keeps the outputs within tolerance
    level: int
    rewrites: int  # how many rewrites the full run makes
    culprit: Rewrite | None = None
    worst: str = ""  # the output that moved most, and by how much
    trials: list[tuple[int, bool]] = field(default_factory=list)  # (budget, outputs matched)

    @property
    def pass_name(self) -> str | None:
        return None if self.culprit is None else self.culprit.pass_name

    def __str__(self) -> str:
        if self.ok:
            return f"level {self.level}: {self.rewrites} rewrites, outputs unchanged within tolerance"
        head = f"level {self.level}: outputs change ({self.worst})"
        if self.culprit is None:
            return head + "; no single rewrite found responsible"
        return (f"{head}; first bad rewrite #{self.culprit.index} of {self.rewrites}, "
                f"pass {self.culprit.pass_name!r}: {self.culprit}")


def compare(expected: list, actual: list, rtol: float, atol: float,
            names: list[str] | None = None) -> str | None:
    """None when every output is within tolerance, else a description of the worst one."""
    names = names or [f"output {i}" for i in range(len(expected))]
    for name, e, a in zip(names, expected, actual):
        e, a = np.asarray(e), np.asarray(a)
        if e.shape != a.shape:
            return f"{name}: shape {list(e.shape)} became {list(a.shape)}"
        if e.dtype.kind in "fc":
            bad = ~np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
            if bad.any():
                err = np.abs(a.astype(np.float64) - e.astype(np.float64))
                return (f"{name}: {int(bad.sum())} of {e.size} values off, largest difference "
                        f"{float(np.nanmax(err)):.3g}")
        elif not np.array_equal(e, a):
            return f"{name}: values differ"
    return None


def bisect(model: ModelLike, feeds: Mapping[str, Any], level: int = 2, rtol: float = 1e-4,
           atol: float = 1e-5, *, executor: str = "reference", passes=None) -> BisectResult:
    """Find the first rewrite of ``level`` after which the outputs leave tolerance."""
    proto = load(model)
    expected = Session(proto, executor=executor).run(None, feeds)
    names = [o.name for o in proto.graph.output]

    def matches(budget: int | None) -> tuple[bool, str | None, list]:
        optimized, report = optimize(proto, level, passes=passes, budget=budget)
        actual = Session(optimized, executor=executor).run(None, feeds)
        worst = compare(expected, actual, rtol, atol, names)
        return worst is None, worst, report.rewrites

    ok, worst, rewrites = matches(None)
    result = BisectResult(ok, level, len(rewrites), worst=worst or "")
    if ok:
        return result
    lo, hi = 0, len(rewrites)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        good, _, _ = matches(mid)
        result.trials.append((mid, good))
        lo, hi = (mid, hi) if good else (lo, mid)
    if hi >= 1:
        result.culprit = rewrites[hi - 1]
    return result
