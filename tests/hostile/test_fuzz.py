"""Property: every hostile model or feed ends in a result or an OnnxkitError.

Each case runs in a worker process (``sandbox.py``) with a time bound, an address-space
cap and an audit hook, so a hang, a crash, a memory blow-up or a read outside the
model's folder is reported as a finding instead of killing pytest. The number of
cases per target comes from the profile in ``ONNXKIT_FUZZ`` (``ci`` by default,
``long`` for thousands); each test prints how many ran and how they ended.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

import onnxkit
from tests.hostile import fuzz
from tests.hostile.sandbox import Case, Sandbox
from tests.hostile.seeds import LIGHT_NETS, SEEDS, light_net_bytes

TALLIES: dict[str, fuzz.Tally] = {}


@pytest.fixture(scope="module")
def box():
    with Sandbox() as sandbox:
        yield sandbox


def _fuzz(target: str, box: Sandbox, record_property) -> None:

    if target == "cpu":  # Numba compiles each new signature on first use: allow for it
        with Sandbox(soft_timeout=120, hard_timeout=180) as slow_box:
            return _fuzz_in(target, slow_box, record_property)
    return _fuzz_in(target, box, record_property)


def _fuzz_in(target: str, box: Sandbox, record_property) -> None:
    import time

    tally = TALLIES.setdefault(target, fuzz.Tally(target))
    start = time.monotonic()

    @fuzz.fuzz_settings(target)
    @given(fuzz.TARGETS[target]())
    def check(case: Case):
        outcome = box.run(case)
        tally.add(case, outcome)
        assert outcome.acceptable or fuzz.known_finding(outcome), outcome.report(case)

    try:
        check()
    finally:
        tally.seconds += time.monotonic() - start
        record_property("fuzz_cases", tally.cases)
        record_property("fuzz_summary", tally.line())
        print(tally.line())


@pytest.mark.parametrize("target", ["bytes", "text", "fields", "feeds", "ops"])
def test_fuzz(target, box, record_property):
    _fuzz(target, box, record_property)


@pytest.mark.slow
@pytest.mark.skipif(fuzz.profile_name() != "long", reason="JIT compilation: long profile only")
def test_fuzz_cpu_executor(box, record_property):
    """The Numba kernels index without bounds checks: a crash would show here."""
    _fuzz("cpu", box, record_property)


def test_fuzz_through_the_optimizer(box, record_property):
    _fuzz("optimizer", box, record_property)


def test_every_seed_runs():
    """The seeds are valid: mutations start from models that work."""
    for seed in SEEDS.values():
        onnxkit.Session(seed.bytes()).run(None, seed.feeds())


@pytest.mark.parametrize("name", LIGHT_NETS)
def test_light_nets_plan_and_stop_at_the_limit(name):
    limits = onnxkit.Limits(max_tensor_bytes=1024**2)
    sess = onnxkit.Session(light_net_bytes(name), limits=limits)
    feeds = {i.name: np.zeros(i.shape, np.float32) for i in sess.get_inputs()}
    with pytest.raises(onnxkit.errors.LimitExceededError, match="max_tensor_bytes"):
        sess.run(None, feeds)


def test_sandbox_reports_findings():
    """The harness itself: a raw exception, a hang, a crash and an escape are all caught."""
    with Sandbox(soft_timeout=0.5, hard_timeout=2.5) as sandbox:
        ok = sandbox.run(Case(SEEDS["arith"].bytes(), SEEDS["arith"].feeds()))
        assert ok.kind == "ok", ok.report()
        error = sandbox.run(Case(b"\x08\x01garbage"))
        assert error.kind == "error" and error.error_type == "ModelLoadError", error.report()
        for probe, kind in [("raise", "raw"), ("hang", "hang"), ("crash", "crash"),
                            ("stuck", "stuck"), ("escape", "escape"), ("allocate", "memory")]:
            outcome = sandbox.run(Case(_probe_model(probe), {"x": np.zeros(2, np.float32)}))
            assert outcome.kind == kind, outcome.report()
        assert sandbox.run(Case(SEEDS["arith"].bytes(), SEEDS["arith"].feeds())).kind == "ok"


def _probe_model(probe: str) -> bytes:
    return onnxkit.load(f"""<ir_version: 8, opset_import: ["" : 18, "test.hostile" : 1]>
        g (float[2] x) => (float[2] y) {{ y = test.hostile.Probe <what = "{probe}"> (x) }}"""
                        ).SerializeToString()
