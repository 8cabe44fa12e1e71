"""The cuda executor on a real GPU: the spec suite against the reference, timings against PyTorch.

    python -m benchmarks.cuda_run                          # spec subset + every GPU model
    python -m benchmarks.cuda_run --spec-only --spec all --deadline 480   # the spec verdict
    python -m benchmarks.cuda_run --spec-only --spec all --jobs 12        # 12 children at once
    python -m benchmarks.cuda_run --spec-only --spec all --shard 1/2      # half of it
    python -m benchmarks.cuda_run --spec-only --spec all --rest-of R.json # what R did not reach
    python -m benchmarks.cuda_run --skip-spec --models resnet50_b32       # the speed verdict
    python -m benchmarks.cuda_run --merge a.json b.json    # one report of several runs
    NUMBA_ENABLE_CUDASIM=1 python -m benchmarks.cuda_run --smoke   # the script itself, no GPU

``benchmarks/gpu_session.sh`` stages these commands for a lent GPU machine (docs/cuda.md).

**Spec suite.** Every selected case (``--spec subset``: spec_tests/cuda_subset.py; ``all``:
every node and model case of the installed onnx) runs on the ``reference`` executor (in this
process: numpy, a few seconds for all) and on ``cuda`` in a child process that this one
watches: a case that hangs past ``--case-timeout`` or kills the child is recorded
("timeout", "crash") and a fresh child goes on with the next case; a sticky CUDA error
(illegal address, launch failure) also gets a fresh child. ``--jobs N`` runs N such
children at once, each on consecutive chunks of the sorted cases (numba's compiling, on
the CPU, is most of a case's time). The verdict is the list of cases
the reference passes and cuda does not; cases not reached before ``--deadline`` are listed
as "not run" (an incomplete verdict: run the rest with ``--shard``).

**Benchmark.** For each model of ``benchmarks.models`` (built on demand; the torch ones
need PyTorch), median of ``--repeat`` runs after warm-up (fewer for a slow model: each
measurement stops after ``cuda_timing.MAX_SECONDS`` of timed runs, at least 3):

| runtime              | what                                                              |
|----------------------|-------------------------------------------------------------------|
| onnxkit-cuda-L0      | ``Session(executor="cuda")``, optimizer level 0, host to host     |
| onnxkit-cuda-L2      | the same at optimizer level 2 (fused onnxkit operators)           |
| torch-eager          | the model's PyTorch module on the GPU, fp32, TF32 off (matmul and |
|                      | cuDNN), eval, no_grad; numpy input to numpy output (copies in)    |
| torch-eager-resident | the same with the input already on the GPU and the output left    |
|                      | there, ``torch.cuda.synchronize()`` ending each timed call        |
| ort-cuda             | onnxruntime's CUDAExecutionProvider (use_tf32=0), when installed  |

onnxkit's ``Session.run`` takes numpy feeds and returns numpy outputs, so host to host is
its honest time; compare it with ``torch-eager``, and read ``torch-eager-resident`` as
what copies cost torch. The first onnxkit run compiles the kernels with numba (reported
apart). onnxkit rows also give the copies of one run and the operators that ran on the
host. Outputs are compared with onnxruntime on the CPU. Then a per-operator profile of
the ``--profile`` models (default: resnet50_b32) at the best onnxkit level, every node
synchronized, and the verdict for the issue's target: ResNet-50 at batch 32 within
``cuda_report.TARGET_RATIO`` times torch eager's time.

Results: ``benchmarks/results/cuda-<device>-<date>[-<tag>].md`` and ``.json``, copied into
``$OUT`` too when that variable is set (the device tool brings back what is there).

This module is the command line; the parts are ``benchmarks/cuda_spec.py`` (the spec suite
and its verdict), ``cuda_timing.py`` (the timing rows and the profile) and ``cuda_report.py``
(verdict lines, markdown, merge, writing the files).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
from pathlib import Path

from benchmarks.cuda_report import (TARGET_MODEL, merge_reports, report_stem, target_verdict_line,
                                    verdict_lines, write_report)
from benchmarks.cuda_spec import not_run_keys, spec_suite, spec_verdict, spec_verdict_line, spec_worker
from benchmarks.cuda_timing import benchmark, profiles, smoke

SMOKE_CASES = r"^node:test_(relu|add_bcast|softmax_axis_1|conv_with_strides_padding)$"


# --- where we are ------------------------------------------------------------------------

def environment() -> dict:
    from numba import config, cuda

    import numba
    import onnx

    env = {"date": dt.datetime.now().isoformat(timespec="seconds"), "python": platform.python_version(),
           "numba": numba.__version__, "onnx": onnx.__version__, "simulator": bool(config.ENABLE_CUDASIM)}
    try:
        import numba_cuda

        env["numba_cuda"] = numba_cuda.__version__
    except ImportError:
        pass
    if config.ENABLE_CUDASIM:
        env["device"] = "CUDA simulator"
        return env
    device = cuda.get_current_device()
    name = device.name
    env["device"] = name.decode() if isinstance(name, bytes) else str(name)
    env["compute_capability"] = ".".join(map(str, device.compute_capability))
    try:
        env["driver"] = ".".join(map(str, cuda.cudadrv.driver.driver.get_version()))
    except Exception:  # older numba spells it differently; not essential
        pass
    try:
        import torch

        env["torch"] = torch.__version__
        env["torch_cuda"] = bool(torch.cuda.is_available())
    except ImportError:
        env["torch"] = None
    try:
        import onnxruntime as ort

        env["onnxruntime"] = ort.__version__
        env["ort_providers"] = ort.get_available_providers()
    except ImportError:
        env["onnxruntime"] = None
    return env


# --- the command line ----------------------------------------------------------------------------

def _shard(text: str) -> tuple[int, int]:
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N, got {text!r}")
    return int(k), int(n)


def parse_args(argv=None) -> argparse.Namespace:
    from benchmarks.models import ALL_MODELS, KNOWN_MODELS, ON_DEMAND_MODELS

    parser = argparse.ArgumentParser(prog="python -m benchmarks.cuda_run",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(ON_DEMAND_MODELS + ALL_MODELS),
                        choices=KNOWN_MODELS)
    parser.add_argument("--profile", nargs="*", default=[TARGET_MODEL], metavar="MODEL",
                        help="models to profile per op, if timed (default: %(default)s; "
                        "--profile alone: every timed model)")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--spec", choices=("subset", "all"), default="subset")
    parser.add_argument("--cases", metavar="REGEX", help="only the spec cases whose kind:name matches")
    parser.add_argument("--shard", type=_shard, metavar="K/N", help="the K-th of N slices of the cases")
    parser.add_argument("--case-timeout", type=float, default=90.0, metavar="S",
                        help="a cuda case with no result after S seconds is a timeout")
    parser.add_argument("--rest-of", metavar="JSON",
                        help="only the cases that this earlier report lists as 'not run' "
                        "(then --merge the two reports)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="run the cuda cases in N child processes at once (default 1)")
    parser.add_argument("--deadline", type=float, default=None, metavar="S",
                        help="start no spec case after S seconds (the rest: 'not run')")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--skip-spec", action="store_true", help="the benchmark only")
    which.add_argument("--spec-only", action="store_true", help="the spec suite only")
    parser.add_argument("--tag", help="appended to the result files' name "
                        "(default: spec / spec-KofN / bench / smoke for a partial run)")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny model and a few spec cases only (works simulated)")
    parser.add_argument("--merge", nargs="+", metavar="JSON", help="write one report of these results")
    parser.add_argument("--spec-worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.profile == []:  # a bare --profile: every model timed
        args.profile = list(args.models)
    return args


def default_tag(args) -> str | None:
    if args.tag:
        return args.tag
    if args.smoke:
        return "smoke"
    if args.spec_only:
        return "spec" + (f"-{args.shard[0]}of{args.shard[1]}" if args.shard else "") + (
            "-rest" if args.rest_of else "")
    return "bench" if args.skip_spec else None


def run_everything(args, env: dict) -> dict:
    """The spec part and the benchmark part that ``args`` ask for, as one report."""
    from benchmarks.models import feeds as model_feeds, model_path

    report = {"environment": env, "spec": None, "results": {}, "profiles": {}}
    if not args.skip_spec:
        report["spec"] = spec_suite(args.spec, args.cases or (SMOKE_CASES if args.smoke else None),
                                    args.shard, args.case_timeout, args.deadline, args.jobs,
                                    not_run_keys(json.loads(Path(args.rest_of).read_text()))
                                    if args.rest_of else None)
        print(spec_verdict_line(report["spec"]), flush=True)
    if args.spec_only:
        return report
    if args.smoke:
        report["results"], report["profiles"] = smoke(args.repeat)
    else:
        try:
            benchmark(args.models, args.repeat, args.warmup, report["results"])
            report["profiles"] = profiles(report["results"], args.profile,
                                          lambda name: (str(model_path(name)), model_feeds(name)))
        except KeyboardInterrupt:  # e.g. `timeout -s INT`: keep what was measured
            print("interrupted: reporting what was measured", file=sys.stderr, flush=True)
        print(target_verdict_line(report["results"]), flush=True)
    return report


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.spec_worker:
        return spec_worker(args.spec_worker)
    if args.merge:
        report = merge_reports([json.loads(Path(p).read_text()) for p in args.merge])
        paths = write_report(report, report_stem(report["environment"], args.tag or "merged"))
        print("\n".join(verdict_lines(report)))
        print(f"wrote {paths[1]} and .json")
        return 0

    from onnxkit.kernels.cuda import unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        print(f"no GPU: {reason}", file=sys.stderr)
        return 2
    env = environment()
    if env["simulator"] and not (args.smoke or args.spec_only):
        print("the simulator is far too slow for the benchmark: use --smoke", file=sys.stderr)
        return 2
    print(f"device: {env['device']}", flush=True)
    report = run_everything(args, env)
    paths = write_report(report, report_stem(env, default_tag(args)))
    copied = f" (copied into {os.environ['OUT']})" if os.environ.get("OUT") else ""
    print(f"wrote {paths[1]} and .json{copied}")
    spec = report["spec"]
    return 1 if spec is not None and spec_verdict(spec["cases"])["regressions"] else 0


if __name__ == "__main__":
    sys.exit(main())
