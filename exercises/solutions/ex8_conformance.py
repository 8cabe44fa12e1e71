"""Reference solutions of exercise 8 (see exercises/ex8_conformance.py for the task)."""

from __future__ import annotations

import numpy as np


def _why(expected, got, rtol, atol) -> str | None:
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        e, g = np.asarray(e), np.asarray(g)
        if g.shape != e.shape or g.dtype != e.dtype:
            return f"output {i} is {g.dtype}{list(g.shape)}, expected {e.dtype}{list(e.shape)}"
        if e.dtype.kind in "fc":
            nan = np.isnan(e)
            if (np.isnan(g) != nan).any():
                return f"output {i}: NaN in other places"
            e, g = e[~nan], g[~nan]
        if e.dtype.kind in "fciu":
            e, g = e.astype(np.float64), g.astype(np.float64)
            if not np.all(np.abs(g - e) <= atol + rtol * np.abs(e)):
                return f"output {i}: values off by more than rtol={rtol}, atol={atol}"
        if e.dtype.kind not in "fciu" and not np.array_equal(g, e):
            return f"output {i}: values differ"
    return None


def conformance(run, cases) -> dict[str, str]:
    failed = {}
    for case in cases:
        for inputs, expected in case.data_sets:
            try:
                got = run(case.model, case.feeds(inputs))
            except Exception as exc:  # any runtime, any error: a failed case, not a crash
                failed[case.name] = f"raised {type(exc).__name__}: {exc}"
                break
            why = _why(expected, got, case.rtol, case.atol)
            if why is not None:
                failed[case.name] = why
                break
    return failed
