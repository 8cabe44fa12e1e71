"""``onnxkit run model.onnx --input x=x.npy``: run a model, save or summarize its outputs.

``--repeat N`` runs the model N more times after the first and prints the median and
fastest time per run; ``--profile`` adds where those runs' time went: per op type, and
the ``--top`` slowest nodes (``onnxkit.runtime.profile.Profiler``, as in notebook 04);
the kernels column names the algorithm each convolution runs (``cpu:...Conv-11 [im2col]``),
as the session's plan reports it (``Step.algorithm``).

``--tune`` (the cpu executor) times the algorithms a layer may run on its first run and
keeps the fastest (``Session(..., tune=True)``); without it a written rule chooses, the
same in every process (``docs/cpu.md``, "Which one runs").

``--compare RUNTIME`` runs the same inputs on another runtime (``onnxruntime``,
``onnx.reference``, another onnxkit executor, an onnx Backend module) and reports each
output's largest difference; the exit status is 1 when one is beyond ``--rtol`` /
``--atol`` (numpy's ``allclose``: |got - expected| <= atol + rtol * |expected|).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from onnxkit.cli.common import (MAX_DIM, MAX_REPEAT, MAX_SEED, ArgumentError, bounded_int,
                                pairs, regular_file, say, short, tolerance)
from onnxkit.cli.info import add_arguments as add_model_arguments, model_argument
from onnxkit.cli.npy import read_npy
from onnxkit.cli.outputs import file_stems, prepare_folder, save_outputs
from onnxkit.conformance.compare import assert_outputs_close
from onnxkit.html import terminal_text
from onnxkit.inputs import random_feeds, symbolic_dims
from onnxkit.runtime.executors import executor_names
from onnxkit.api import Session


def add_arguments(parser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--input", "-i", action="append", default=[], metavar="NAME=FILE.npy",
                        help="an input from a .npy file (repeatable); others are random")
    parser.add_argument("--dim", action="append", default=[], metavar="SYMBOL=N",
                        help="value of a symbolic dimension for random inputs (default 1)")
    parser.add_argument("--executor", "-e", default="reference", choices=executor_names())
    parser.add_argument("--level", "-O", type=bounded_int(0, 3), default=0,
                        help="optimization level 0-3")
    parser.add_argument("--seed", type=bounded_int(0, MAX_SEED), default=0,
                        help="seed of the random inputs")
    parser.add_argument("--output-dir", "-o",
                        help="save each output in this folder (NAME.npy, or a safe unique name) "
                             "with a manifest, outputs.json, mapping output names to files")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace files already in --output-dir (refused otherwise)")
    parser.add_argument("--compare", metavar="RUNTIME",
                        help="also run on RUNTIME (onnxruntime, onnx.reference, an onnxkit "
                             "executor, an onnx Backend module) and compare the outputs")
    parser.add_argument("--repeat", "-r", type=bounded_int(0, MAX_REPEAT), default=0, metavar="N",
                        help=f"time N more runs after the first (median and fastest; at most "
                             f"{MAX_REPEAT:,})")
    parser.add_argument("--profile", action="store_true",
                        help="time per op type and the slowest nodes over the --repeat runs "
                             "(10 when --repeat is not given)")
    parser.add_argument("--tune", action="store_true",
                        help="cpu executor: time each layer's algorithms on the first run and "
                             "keep the fastest (default: the static rule, no timing)")
    parser.add_argument("--top", type=bounded_int(1), default=10,
                        help="nodes shown by --profile (default 10)")
    parser.add_argument("--rtol", type=tolerance, default=1e-4, help="with --compare (default 1e-4)")
    parser.add_argument("--atol", type=tolerance, default=1e-5, help="with --compare (default 1e-5)")


def summarize(name: str, value) -> str:
    if isinstance(value, np.ndarray):
        head = f"{name}: {value.dtype}{list(value.shape)}"
        if value.size and value.dtype.kind in "biuf":
            v = value.astype(np.float64)
            return f"{head}  min {v.min():.6g}  max {v.max():.6g}  mean {v.mean():.6g}"
        return f"{head}  {np.array2string(value.reshape(-1)[:5])}"
    if isinstance(value, list):
        return f"{name}: sequence of {len(value)}"
    return f"{name}: {value!r}"


def _dims(items: list[str], known: set[str]) -> dict[str, int]:
    parse = bounded_int(0, MAX_DIM)
    dims = {}
    for symbol, text in pairs(items, "--dim").items():
        if symbol not in known:
            have = ", ".join(sorted(known)) if known else "none"
            raise ArgumentError(f"--dim {short(symbol)!r}: the model's inputs have no such symbolic "
                                f"dimension (they have: {have})")
        try:
            dims[symbol] = parse(text)
        except argparse.ArgumentTypeError as exc:
            raise ArgumentError(f"--dim {short(symbol)}={short(text)}: {exc}") from None
    return dims


def _read_inputs(files: dict[str, str], declared: list[str], max_bytes: int) -> dict:
    unknown = [name for name in files if name not in declared]
    if unknown:
        raise ArgumentError(f"--input {short(unknown[0])!r}: the model has no such input (its inputs: "
                            f"{', '.join(map(repr, declared)) or 'none'})")
    return {name: read_npy(file, f"--input {short(name)}={short(file)}", max_bytes)
            for name, file in files.items()}


def main(args) -> int:
    path = model_argument(args)
    files = pairs(args.input, "--input")
    for name, file in files.items():  # before the model is loaded: a typo fails at once
        regular_file(file, f"--input {short(name)}")
    pairs(args.dim, "--dim")
    if args.compare:  # an unknown runtime fails before the model runs
        from onnxkit.conformance.backends import resolve_backend

        resolve_backend(args.compare)
    start = time.perf_counter()
    if args.tune and args.executor != "cpu":
        raise ArgumentError(f"--tune times the cpu executor's algorithms; executor "
                            f"{args.executor!r} has none to time")
    sess = Session(path, executor=args.executor, level=args.level,
                   tune=True if args.tune else None)
    planned = time.perf_counter() - start
    model = sess.model
    declared = [vi.name for vi in model.graph.input]
    feeds = _read_inputs(files, declared, sess.limits.max_tensor_bytes)
    feeds.update(random_feeds(model, args.seed, _dims(args.dim, symbolic_dims(model)),
                              given=feeds, max_bytes=sess.limits.max_tensor_bytes))
    names = [o.name for o in sess.get_outputs()]
    if args.output_dir:  # refuse files in the way before the model runs
        prepare_folder(args.output_dir, file_stems(names), args.overwrite)
    start = time.perf_counter()
    outputs = sess.run(None, feeds)
    ran = time.perf_counter() - start
    show = terminal_text
    tuned = "tuned  " if args.tune else ""
    print(f"model {show(os.path.basename(path))}  executor {args.executor}  level {args.level}  "
          f"{tuned}session {planned * 1e3:.1f} ms  run {ran * 1e3:.1f} ms")
    for name, value in feeds.items():
        print("in  " + show(summarize(name, value)))
    for name, value in zip(names, outputs):
        print("out " + show(summarize(name, value)))
    if args.output_dir:
        manifest = save_outputs(args.output_dir, names, outputs, os.path.basename(path),
                                overwrite=args.overwrite)
        print(f"saved {len(names)} outputs; their files: {show(manifest)}")
    repeat = args.repeat or (10 if args.profile else 0)
    if repeat:
        timed(sess, feeds, repeat, args.profile, args.top)
    if args.compare:
        return compare(path, feeds, names, outputs, args.compare, args.rtol, args.atol)
    return 0


def timed(sess, feeds, repeat: int, profile: bool, top: int) -> None:
    """``repeat`` more runs: their median and fastest time, and with ``profile`` the time
    per op type and the ``top`` slowest nodes (kernel time, from the trace callback)."""
    from onnxkit.runtime.profile import Profiler

    prof = Profiler(sess) if profile else None
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        sess.run(None, feeds, trace=prof)
        times.append(time.perf_counter() - start)
    print(f"{repeat} more runs: median {np.median(times) * 1e3:.2f} ms  fastest "
          f"{min(times) * 1e3:.2f} ms" + ("  (profiled: each node timed)" if profile else ""))
    if prof is not None:
        say(f"\nkernel time per op type over the {repeat} runs:\n{prof.table(markdown=False)}")
        say(f"\nthe {top} slowest nodes:\n{prof.table(by='node', top=top, markdown=False)}")


def _difference(expected, got, rtol: float, atol: float) -> tuple[bool, str]:
    """(within tolerance, what differs) for one output."""
    if not (isinstance(expected, np.ndarray) and isinstance(got, np.ndarray)
            and expected.dtype.kind in "biuf" and got.dtype.kind in "biuf"):
        try:
            assert_outputs_close([expected], [got], rtol, atol)
        except AssertionError as exc:
            return False, str(exc).strip().splitlines()[0]
        return True, "equal"
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return False, (f"{got.dtype}{list(got.shape)} where {expected.dtype}"
                       f"{list(expected.shape)} was expected")
    e, g = expected.astype(np.float64), got.astype(np.float64)
    with np.errstate(invalid="ignore"):
        delta = np.abs(g - e)
        same_nan = np.isnan(e) & np.isnan(g)
        delta[same_nan] = 0.0
    worst = float(np.nanmax(delta)) if delta.size else 0.0
    scale = float(np.nanmax(np.abs(e))) if e.size else 0.0
    ok = bool(np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True))
    return ok, f"max |diff| {worst:.3g}  max |diff| / max |expected| {worst / (scale or 1.0):.3g}"


def compare(path, feeds, names, outputs, runtime: str, rtol: float, atol: float) -> int:
    """Run ``feeds`` on ``runtime`` too; print each output's difference; 1 if one is off."""
    import onnx

    from onnxkit.conformance.backends import resolve_backend

    run = resolve_backend(runtime)
    start = time.perf_counter()
    expected = run(onnx.load(path), [feeds])[0]
    took = time.perf_counter() - start
    print(f"compare with {terminal_text(runtime)} (session + run {took * 1e3:.1f} ms)  "
          f"rtol {rtol:g}  atol {atol:g}")
    if len(expected) != len(outputs):
        print(f"  {terminal_text(runtime)} gave {len(expected)} outputs, onnxkit {len(outputs)}")
        return 1
    bad = 0
    for name, want, got in zip(names, expected, outputs):
        ok, detail = _difference(want, got, rtol, atol)
        bad += not ok
        print(f"  {'ok  ' if ok else 'DIFF'} {terminal_text(name)}: {terminal_text(detail)}")
    if bad:
        print(f"{bad} of {len(names)} outputs differ from {terminal_text(runtime)} beyond the "
              "tolerance")
    return 1 if bad else 0
