"""Real architectures against onnxruntime: torchvision's models, exported, run on onnxkit.

    pip install -e '.[torch]' torchvision==0.28.0    # not in CI: a few minutes of exports
    python -m benchmarks.zoo                          # every model below, ~10 min
    python -m benchmarks.zoo --models efficientnet_b0:224 r3d_18:32 --out /tmp/zoo

Each model (random weights from seed 0, eval mode) is exported with the TorchScript
exporter (opset 17) and run, in a process of its own, on onnxkit ``reference`` (level 0)
and ``cpu`` (levels 0-3) and on onnxruntime with its graph optimizations off (the
oracle): a model passes when every run's output is within 1e-3 of the oracle's, relative
to the output's largest value. Then the median of 10 runs of ``cpu`` level 3 against
onnxruntime ENABLE_ALL, both on 2 threads. Writes ``zoo.md`` to ``--out``.

torchvision's wheel is built against torch with CUDA; with the CPU torch its compiled
operators (``torchvision::nms`` ...) are missing and ``import torchvision`` fails while
registering their shapes. The classification, segmentation and video models need none
of them, so ``_torchvision_models`` skips that registration.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
MODELS = ("resnet18:64 squeezenet1_1:64 googlenet:64 inception_v3:96 mobilenet_v3_small:64 "
          "mobilenet_v3_large:224 mnasnet0_5:64 shufflenet_v2_x0_5:64 resnext50_32x4d:64 "
          "regnet_y_400mf:64 regnet_x_400mf:64 efficientnet_b0:224 efficientnet_v2_s:64 "
          "convnext_tiny:64 swin_t:64 maxvit_t:224 densenet121:64 vgg11_bn:224 alexnet:224 "
          "fcn_resnet50:64 deeplabv3_mobilenet_v3_large:64 lraspp_mobilenet_v3_large:64 "
          "r3d_18:32 mc3_18:32").split()
VIDEO = ("r3d_18", "mc3_18", "r2plus1d_18")
RUNS = [("reference", 0), ("cpu", 0), ("cpu", 1), ("cpu", 2), ("cpu", 3)]
TOLERANCE = 1e-3


def _torchvision_models():
    import torch.library

    register = torch.library.register_fake
    torch.library.register_fake = lambda *a, **k: (lambda fn: fn)  # see the docstring
    try:
        import torchvision.models as models
    finally:
        torch.library.register_fake = register
    return models


def _export(name: str, size: int, path: Path):
    import torch

    models = _torchvision_models()
    torch.manual_seed(0)
    for family in (models, models.segmentation, models.video):
        if hasattr(family, name):
            extra = {"weights_backbone": None} if family is models.segmentation else {}
            module = getattr(family, name)(weights=None, **extra).eval()
            break
    else:
        raise SystemExit(f"no torchvision model {name!r}")
    shape = (1, 3, 16, size, size) if name in VIDEO else (1, 3, size, size)
    x = torch.randn(*shape)
    with torch.no_grad():
        torch.onnx.export(module, (x,), str(path), dynamo=False, opset_version=17,
                          input_names=["x"])
    return x.numpy()


def _median_ms(run, repeat: int = 10) -> float:
    import numpy as np

    run()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1e3)


def check(spec: str, work: Path) -> dict:
    """One model (in this process): exported, checked, timed."""
    import numpy as np
    import onnxruntime as ort

    import onnxkit

    name, size = spec.split(":")
    path = work / f"{name}_{size}.onnx"
    x = _export(name, int(size), path)
    feeds = {"x": x}

    def ort_session(level):
        opts = ort.SessionOptions()
        opts.graph_optimization_level = level
        opts.intra_op_num_threads = 2
        opts.log_severity_level = 3
        return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])

    oracle = ort_session(ort.GraphOptimizationLevel.ORT_DISABLE_ALL).run(None, feeds)[0]
    scale = max(float(np.abs(oracle).max()), 1e-30)
    row = {"model": name, "input": list(x.shape), "nodes": len(onnxkit.load(str(path)).graph.node)}
    for executor, level in RUNS:
        got = onnxkit.Session(str(path), executor=executor, level=level).run(None, feeds)[0]
        row[f"{executor} L{level}"] = float(np.abs(got - oracle).max()) / scale
    fast = ort_session(ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    sess = onnxkit.Session(str(path), executor="cpu", level=3)
    row["ort ms"] = _median_ms(lambda: fast.run(None, feeds))
    row["cpu L3 ms"] = _median_ms(lambda: sess.run(None, feeds))
    return row


def _table(rows: list[dict]) -> str:
    runs = [f"{e} L{lv}" for e, lv in RUNS]
    lines = ["| model | input | nodes | " + " | ".join(runs) + " | ORT ENABLE_ALL ms | "
             "onnxkit cpu L3 ms | ratio |",
             "|---|---|---:|" + "---:|" * len(runs) + "---:|---:|---:|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['model']} | | | error: {r['error']} |")
            continue
        worst = [f"{r[k]:.1e}" + ("" if r[k] <= TOLERANCE else " **FAIL**") for k in runs]
        lines.append(f"| {r['model']} | {'x'.join(map(str, r['input']))} | {r['nodes']} | "
                     + " | ".join(worst) + f" | {r['ort ms']:.2f} | {r['cpu L3 ms']:.2f} | "
                     f"{r['cpu L3 ms'] / r['ort ms']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=MODELS, metavar="NAME:SIZE")
    parser.add_argument("--out", type=Path, default=ROOT / "results")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process: one model
    parser.add_argument("--work", type=Path, default=ROOT / "models" / "zoo")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    if args.one:
        print(json.dumps(check(args.one, args.work)))
        return 0
    rows = []
    for spec in args.models:
        print(f"{spec} ...", flush=True)
        done = subprocess.run([sys.executable, "-m", "benchmarks.zoo", "--one", spec, "--work",
                               str(args.work)], capture_output=True, text=True, timeout=1800,
                              env={**os.environ, "PYTHONWARNINGS": "ignore"})
        if done.returncode:
            tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
            rows.append({"model": spec, "error": tail[:200]})
        else:
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print("   ", rows[-1], flush=True)
    failed = [r["model"] for r in rows if "error" in r
              or any(r[f"{e} L{lv}"] > TOLERANCE for e, lv in RUNS)]
    text = (f"# torchvision models on onnxkit — {time.strftime('%Y-%m-%d %H:%M')}\n\n"
            f"`python -m benchmarks.zoo` (see its docstring). Largest |output - onnxruntime "
            f"DISABLE_ALL| / largest |output| per run (pass: <= {TOLERANCE:g}); then median "
            f"ms of 10 runs, 2 threads, {os.cpu_count()} cores.\n\n{_table(rows)}\n\n"
            f"{len(rows) - len(failed)} of {len(rows)} models pass"
            + (f"; failed: {', '.join(failed)}" if failed else "") + ".\n")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "zoo.md").write_text(text)
    print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
