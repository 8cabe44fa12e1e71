"""Coverage-guided fuzzing of loading, planning and running with atheris (libFuzzer).

    python tests/hostile/atheris_fuzz.py -max_total_time=300 -timeout=10 -rss_limit_mb=3000 CORPUS_DIR
    python tests/hostile/atheris_fuzz.py -atheris_runs=2000          # a fixed number of inputs

Each input is either a whole model (protobuf bytes or ONNX text) or, more often, a seed
model from ``seeds.py`` with bytes overwritten at positions the input chooses, so the
fuzzer starts from models that plan and run. Anything but a result or an OnnxkitError
is a crash that libFuzzer saves (``crash-<sha1>``); ``-timeout`` catches hangs and
``-rss_limit_mb`` memory blow-ups. The seeds are always added as a read-only corpus.
Install: ``pip install atheris`` (Linux wheels for CPython 3.8-3.11+).
"""

from __future__ import annotations

import os
import sys
import tempfile

import atheris

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

with atheris.instrument_imports(include=["onnxkit"]):
    import onnxkit
    from onnxkit.ops import load_reference_kernels

    load_reference_kernels()  # imports (and so instruments) every kernel module

import numpy as np  # noqa: E402

from tests.hostile.seeds import SEEDS  # noqa: E402

LIMITS = onnxkit.Limits(max_tensor_bytes=4 * 1024**2, max_loop_iterations=2_000, max_graph_depth=16)
SEED_LIST = sorted(SEEDS)
SEED_BYTES = {name: SEEDS[name].bytes() for name in SEED_LIST}
SEED_FEEDS = {name: SEEDS[name].feeds() for name in SEED_LIST}


def _model_and_feeds(data: bytes):
    """data[0]: mode, data[1]: which seed, the rest: the model or where to overwrite."""
    mode = data[0] % 4 if data else 0
    name = SEED_LIST[data[1] % len(SEED_LIST)] if len(data) > 1 else SEED_LIST[0]
    fdp = atheris.FuzzedDataProvider(data[2:])
    feeds = SEED_FEEDS[name]
    if mode == 0:  # the input is the model
        return fdp.ConsumeBytes(fdp.remaining_bytes()), feeds
    if mode == 1:  # ONNX text syntax
        return "\n" + fdp.ConsumeUnicodeNoSurrogates(fdp.remaining_bytes()), feeds
    buf = bytearray(SEED_BYTES[name])  # a seed, with chosen bytes overwritten
    for _ in range(fdp.ConsumeIntInRange(1, 8)):
        if not buf or fdp.remaining_bytes() < 2:
            break
        pos = fdp.ConsumeIntInRange(0, len(buf) - 1)
        buf[pos] = fdp.ConsumeInt(1) & 0xFF
    if mode == 3 and fdp.remaining_bytes() > 0:  # and a feed value replaced
        key = sorted(feeds)[fdp.ConsumeIntInRange(0, len(feeds) - 1)]
        value = feeds[key]
        if isinstance(value, np.ndarray) and value.dtype != object and value.size:
            raw = fdp.ConsumeBytes(value.nbytes).ljust(value.nbytes, b"\0")
            feeds = dict(feeds, **{key: np.frombuffer(raw, value.dtype).reshape(value.shape).copy()})
    return bytes(buf), feeds


def test_one_input(data: bytes) -> None:
    model, feeds = _model_and_feeds(data)
    try:
        with np.errstate(all="ignore"):
            onnxkit.Session(model, limits=LIMITS).run(None, feeds)
    except onnxkit.OnnxkitError:
        pass  # a clear error is a fine outcome; anything else propagates: a finding


def _seed_corpus() -> str:
    folder = tempfile.mkdtemp(prefix="onnxkit-atheris-")
    for i, name in enumerate(SEED_LIST):
        # mode 2 (overwrite bytes of seed i) with nothing to overwrite: the seed itself;
        # mode 0 (the input is the model): the seed's bytes, for byte-level mutation
        for stem, data in (("seed", bytes([2, i])), ("bytes", bytes([0, i]) + SEED_BYTES[name])):
            with open(os.path.join(folder, f"{stem}-{name}"), "wb") as f:
                f.write(data)
    return folder


def main(argv: list[str]) -> None:
    # libFuzzer writes new inputs to the first corpus folder and only reads the others:
    # the seeds always come last
    argv = argv + [_seed_corpus()]
    atheris.Setup(argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
