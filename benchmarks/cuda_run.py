"""The cuda executor on a real GPU: its spec subset, then timings against PyTorch and onnxruntime.

    python -m benchmarks.cuda_run                              # spec subset + every model
    python -m benchmarks.cuda_run --models resnet18 mlp        # some models
    python -m benchmarks.cuda_run --spec all                   # every spec case, not the subset
    python -m benchmarks.cuda_run --skip-spec --repeat 100
    NUMBA_ENABLE_CUDASIM=1 python -m benchmarks.cuda_run --smoke   # the script itself, no GPU

Needs an NVIDIA GPU that numba sees (``numba.cuda.is_available()``). For each model of
``benchmarks.models`` (built on demand; the torch ones need PyTorch):

| runtime           | what                                                              |
|-------------------|-------------------------------------------------------------------|
| onnxkit-cuda-L0   | ``Session(executor="cuda")``, optimizer level 0                   |
| onnxkit-cuda-L2   | the same at optimizer level 2 (fused onnxkit operators)           |
| torch-eager       | the model's PyTorch module on the GPU, fp32, TF32 off, no_grad    |
| ort-cuda          | onnxruntime's CUDAExecutionProvider (use_tf32=0), when installed  |

Every time is a whole call, host input to host output (copies included; ``torch`` too),
median of ``--repeat`` after warm-up runs (the first onnxkit run compiles the kernels with
numba: reported apart). onnxkit rows also give the copies of one run (count and bytes)
and the operators that ran on the host. Outputs are compared with onnxruntime on the CPU.
Results: ``benchmarks/results/cuda-<device>-<date>.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import re
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

RESULTS_DIR = Path(__file__).resolve().parent / "results"
TORCH_MODELS = ("resnet18", "mobilenetv2", "bert_mini", "mlp")


# --- where we are ------------------------------------------------------------------------

def environment() -> dict:
    from numba import config, cuda

    import numba

    env = {"date": dt.datetime.now().isoformat(timespec="seconds"), "python": platform.python_version(),
           "numba": numba.__version__, "simulator": bool(config.ENABLE_CUDASIM)}
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


# --- the spec suite ----------------------------------------------------------------------

def spec_suite(which: str) -> dict:
    """Run the spec subset (or every case) on executor="cuda"; counts and failures."""
    from onnxkit.conformance import all_cases, run_case
    from onnxkit.conformance.runner import onnxkit_runner
    from spec_tests.cuda_subset import CUDA_SUBSET, SLOW_UNDER_SIMULATOR
    from spec_tests.exclusions import EXCLUDED, EXCLUDED_BY_EXECUTOR

    wanted = CUDA_SUBSET | SLOW_UNDER_SIMULATOR
    cases = [c for c in all_cases() if which == "all" or (c.kind == "node" and c.name in wanted)]
    counts, failures = {"pass": 0, "fail": 0, "skip": 0}, []
    start = time.perf_counter()
    for case in cases:
        if EXCLUDED.get(case.name) or EXCLUDED_BY_EXECUTOR.get("cuda", {}).get(case.name):
            counts["skip"] += 1
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = run_case(case, onnxkit_runner("cuda"))
        if result.status == "pass":
            counts["pass"] += 1
        else:
            counts["fail"] += 1
            failures.append(f"{case.kind}:{case.name}: {str(getattr(result, 'message', result))[:300]}")
    return {"which": which, "cases": len(cases), **counts, "failures": failures,
            "seconds": round(time.perf_counter() - start, 1)}


# --- timing ------------------------------------------------------------------------------

def _median_ms(fn, repeat: int, warmup: int) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def onnxkit_row(path: str, feeds: dict, level: int, repeat: int, warmup: int) -> tuple[dict, list]:
    import onnxkit
    from onnxkit.kernels.cuda import DeviceProfile, make_executor

    start = time.perf_counter()
    sess = onnxkit.Session(path, executor=make_executor(synchronize_each_node=False), level=level)
    first = sess.run(None, feeds)  # numba compiles each kernel specialization here
    first_ms = 1e3 * (time.perf_counter() - start)
    prof = DeviceProfile(sess)
    sess.executor.reset_stats()
    sess.run(None, feeds, trace=prof)
    stats = sess.executor.stats()
    ms = _median_ms(lambda: sess.run(None, feeds), repeat, warmup)
    host_ops = sorted({f"{r.op_type} ({r.reason})" for r in prof.rows if r.placement == "host"
                       and (r.h2d_count or r.d2h_count)})
    return {"ms": round(ms, 3), "first_run_ms": round(first_ms, 1),
            "h2d": f"{stats['h2d_count']} / {stats['h2d_bytes']:,} B",
            "d2h": f"{stats['d2h_count']} / {stats['d2h_bytes']:,} B",
            "cuda_nodes": stats["cuda_nodes"], "host_nodes": stats["host_nodes"],
            "leaves_gpu_at": host_ops}, first


def torch_row(name: str, feeds: dict, repeat: int, warmup: int) -> tuple[dict, list] | None:
    try:
        import torch
    except ImportError:
        return None
    if name not in TORCH_MODELS or not torch.cuda.is_available():
        return None
    from benchmarks.models import _randomize_norms, _torch_modules  # the exported weights

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    module = _torch_modules()[name]()
    _randomize_norms(module)
    module = module.eval().cuda()

    def call():
        with torch.no_grad():
            args = [torch.from_numpy(v).cuda() for v in feeds.values()]
            out = module(*args)
            return [out.cpu().numpy()]

    out = call()
    ms = _median_ms(call, repeat, warmup)
    return {"ms": round(ms, 3), "note": "fp32, TF32 off, eager"}, out


def ort_row(path: str, feeds: dict, repeat: int, warmup: int) -> tuple[dict, list] | None:
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return None
    sess = ort.InferenceSession(path, providers=[("CUDAExecutionProvider", {"use_tf32": 0}),
                                                 "CPUExecutionProvider"])
    out = sess.run(None, feeds)
    ms = _median_ms(lambda: sess.run(None, feeds), repeat, warmup)
    return {"ms": round(ms, 3), "note": "use_tf32=0"}, out


def reference_outputs(path: str, feeds: dict) -> list:
    import onnxruntime as ort

    return ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)


def max_diff(got: list, want: list) -> float:
    return max(float(np.max(np.abs(np.asarray(g, np.float64) - np.asarray(w, np.float64))))
               for g, w in zip(got, want))


def benchmark(names, repeat: int, warmup: int) -> dict:
    from benchmarks.models import build, feeds as model_feeds, model_path

    build(names, verbose=False)
    results = {}
    for name in names:
        path, feeds = str(model_path(name)), model_feeds(name)
        want = reference_outputs(path, feeds)
        rows = {}
        for level in (0, 2):
            row, out = onnxkit_row(path, feeds, level, repeat, warmup)
            row["max_abs_diff_vs_ort_cpu"] = max_diff(out, want)
            rows[f"onnxkit-cuda-L{level}"] = row
        for label, made in (("torch-eager", torch_row(name, feeds, repeat, warmup)),
                            ("ort-cuda", ort_row(path, feeds, repeat, warmup))):
            if made is not None:
                row, out = made
                row["max_abs_diff_vs_ort_cpu"] = max_diff(out, want)
                rows[label] = row
        results[name] = rows
        print(f"{name}: " + ", ".join(f"{k} {v['ms']} ms" for k, v in rows.items()), flush=True)
    return results


# --- a tiny model for --smoke ----------------------------------------------------------------

def smoke_model(path: Path) -> dict:
    """A small conv net (Conv, BatchNorm, Relu, MaxPool, Softsign on the host, Gemm, Softmax)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n) for n, s in
             (("w", (4, 2, 3, 3)), ("scale", (4,)), ("bias", (4,)), ("mean", (4,)),
              ("fc", (16, 3)))]
    inits.append(numpy_helper.from_array(np.abs(rng.standard_normal(4)).astype(np.float32), "var"))
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["b"]),
             helper.make_node("Relu", ["b"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Softsign", ["p"], ["s"]),
             helper.make_node("Flatten", ["s"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"], ["g"]),
             helper.make_node("Softmax", ["g"], ["output"])]
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])
    y_info = helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 3])
    graph = helper.make_graph(nodes, "smoke", [x_info], [y_info], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, str(path))
    return {"x": rng.standard_normal((1, 2, 4, 4)).astype(np.float32)}


def smoke(repeat: int) -> dict:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "smoke.onnx"
        feeds = smoke_model(path)
        row, out = onnxkit_row(str(path), feeds, 0, repeat, 1)
        row["max_abs_diff_vs_ort_cpu"] = max_diff(out, reference_outputs(str(path), feeds))
    return {"smoke": {"onnxkit-cuda-L0": row}}


# --- the report ----------------------------------------------------------------------------

def markdown(env: dict, spec: dict | None, results: dict) -> str:
    lines = [f"# onnxkit `cuda` executor on {env['device']}", "",
             f"{env['date']}; " + ", ".join(f"{k} {v}" for k, v in env.items()
                                           if k not in ("date", "device", "ort_providers")), ""]
    if spec is not None:
        lines += [f"## Spec suite ({spec['which']})", "",
                  f"{spec['pass']} passed, {spec['fail']} failed, {spec['skip']} skipped of "
                  f"{spec['cases']} cases in {spec['seconds']} s.", ""]
        lines += [f"- {f}" for f in spec["failures"][:50]] + [""]
    lines += ["## Latency (median ms, host input to host output)", "",
              "| model | runtime | ms | first run ms | max abs diff vs ORT CPU | copies h2d | "
              "copies d2h | leaves the GPU at |",
              "|---|---|---|---|---|---|---|---|"]
    for name, rows in results.items():
        for label, row in rows.items():
            where = "; ".join(row.get("leaves_gpu_at", [])) or row.get("note", "")
            diff = row.get("max_abs_diff_vs_ort_cpu", float("nan"))
            lines.append(f"| {name} | {label} | {row['ms']} | {row.get('first_run_ms', '')} | "
                         f"{diff:.2e} | {row.get('h2d', '')} | {row.get('d2h', '')} | {where} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    from benchmarks.models import ALL_MODELS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(ALL_MODELS), choices=ALL_MODELS)
    parser.add_argument("--spec", choices=("subset", "all"), default="subset")
    parser.add_argument("--skip-spec", action="store_true")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="a tiny model only (works simulated)")
    args = parser.parse_args(argv)

    from onnxkit.kernels.cuda import unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        print(f"no GPU: {reason}", file=sys.stderr)
        return 2
    env = environment()
    if env["simulator"] and not args.smoke:
        print("the simulator is far too slow for the benchmark: use --smoke", file=sys.stderr)
        return 2
    print(f"device: {env['device']}", flush=True)
    spec = None if args.skip_spec or args.smoke else spec_suite(args.spec)
    if spec is not None:
        print(f"spec {spec['which']}: {spec['pass']} passed, {spec['fail']} failed", flush=True)
    results = smoke(args.repeat) if args.smoke else benchmark(args.models, args.repeat, args.warmup)
    slug = re.sub(r"[^a-z0-9]+", "-", env["device"].lower()).strip("-")
    stem = RESULTS_DIR / f"cuda-{slug}-{env['date'][:10]}{'-smoke' if args.smoke else ''}"
    RESULTS_DIR.mkdir(exist_ok=True)
    stem.with_suffix(".json").write_text(json.dumps(
        {"environment": env, "spec": spec, "results": results}, indent=2))
    stem.with_suffix(".md").write_text(markdown(env, spec, results))
    print(f"wrote {stem}.md and .json")
    return 1 if spec is not None and spec["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
