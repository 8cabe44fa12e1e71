"""The timing rows of benchmarks/cuda_run.py: onnxkit-cuda at each level, torch eager (host
to host and resident), onnxruntime's CUDA provider, each compared with onnxruntime on the
CPU; the per-operator device profile; and the tiny model that ``--smoke`` times.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

LEVELS = (0, 2)
MAX_SECONDS = 20.0  # of timed calls per measurement (see _median_ms)


# --- timing ------------------------------------------------------------------------------

def _median_ms(fn, repeat: int, warmup: int) -> tuple[float, int]:
    """(median ms of ``repeat`` calls after ``warmup`` calls, the calls timed); a slow
    model stops early: warm-up after ``MAX_SECONDS / 4``, timing after ``MAX_SECONDS``
    with at least 3 calls timed, so one command fits its time."""
    start = time.perf_counter()
    for _ in range(warmup):
        fn()
        if time.perf_counter() - start > MAX_SECONDS / 4:
            break
    times: list[float] = []
    while len(times) < repeat and (len(times) < 3 or sum(times) < MAX_SECONDS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times), len(times)


def onnxkit_row(path: str, feeds: dict, level: int, repeat: int, warmup: int,
                graphs: bool = True) -> tuple[dict, list]:
    """One onnxkit row: ``graphs`` on (the default: the 2nd run is captured into a CUDA
    graph, later runs replay it) or off (every run eager, node by node)."""
    import onnxkit
    from onnxkit.kernels.cuda import DeviceProfile, make_executor

    start = time.perf_counter()
    sess = onnxkit.Session(path, executor=make_executor(synchronize_each_node=False, graphs=graphs),
                           level=level)
    first = sess.run(None, feeds)  # numba compiles each kernel specialization here
    first_ms = 1e3 * (time.perf_counter() - start)
    prof = DeviceProfile(sess)
    sess.executor.reset_stats()
    sess.run(None, feeds, trace=prof)  # traced: eager, node by node
    stats = sess.executor.stats()
    ms, runs = _median_ms(lambda: sess.run(None, feeds), repeat, warmup)
    host_ops = sorted({f"{r.op_type} ({r.reason})" for r in prof.host_rows()})
    nodes = stats["cuda_nodes"] + stats["host_nodes"]
    notes = sorted(set(sess.executor.graph_notes().values()))
    extra = {}
    for graph in sess.executor.graphs_made()[:1]:  # where the time of a replay goes
        graph.timed = True
        gpus = [_gpu_ms(sess, feeds, graph) for _ in range(5)]
        if None in gpus:  # the simulator
            continue
        gpu = statistics.median(gpus)
        extra = {"graph_gpu_ms": round(gpu, 3),
                 "graph_host_us_per_node": round(1e3 * (ms - gpu) / max(nodes, 1), 1),
                 "eager_host_us_per_node": round(1e3 * graph.capture_ms / max(nodes, 1), 1)}
    return {"ms": round(ms, 3), "runs": runs, "first_run_ms": round(first_ms, 1),
            "h2d": f"{stats['h2d_count']} / {stats['h2d_bytes']:,} B",
            "d2h": f"{stats['d2h_count']} / {stats['d2h_bytes']:,} B",
            "cuda_nodes": stats["cuda_nodes"], "host_nodes": stats["host_nodes"],
            "us_per_node": round(1e3 * ms / max(nodes, 1), 1), **extra,
            "leaves_gpu_at": host_ops + notes, "tiles_tuned": tuning_summary()}, first


def _gpu_ms(sess, feeds, graph) -> float:
    sess.run(None, feeds)
    return graph.gpu_ms


def tuning_summary() -> list[str]:
    """With ONNXKIT_CUDA_TUNE=1: each product timed so far, the tilings' ms, the one kept."""
    from onnxkit.kernels.cuda._tiles import TUNING_LOG

    return [f"{key}: " + ", ".join(f"{t.bm}x{t.bn} {ms:.3f} ms" for t, ms in timings.items())
            + f" -> {chosen.bm}x{chosen.bn}" for key, chosen, timings in TUNING_LOG]


def torch_rows(name: str, feeds: dict, repeat: int, warmup: int) -> dict[str, tuple[dict, list]]:
    """``torch-eager`` (numpy in, numpy out) and ``torch-eager-resident`` (input already on
    the GPU, output left there, synchronized): the exported module and weights, fp32, TF32
    off for matmul and cuDNN, eval, no_grad. Empty without torch, CUDA or a torch model."""
    try:
        import torch
    except ImportError:
        return {}
    from benchmarks.models import ON_DEMAND_MODELS, TORCH_MODELS, torch_module

    if name not in TORCH_MODELS + ON_DEMAND_MODELS or not torch.cuda.is_available():
        return {}
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    module = torch_module(name).cuda()
    host_args = [torch.from_numpy(v) for v in feeds.values()]
    device_args = [a.cuda() for a in host_args]

    @torch.no_grad()
    def host_to_host():
        return [module(*[a.cuda() for a in host_args]).cpu().numpy()]

    @torch.no_grad()
    def resident():
        module(*device_args)
        torch.cuda.synchronize()

    out = host_to_host()
    host_ms, host_runs = _median_ms(host_to_host, repeat, warmup)
    torch.cuda.synchronize()
    resident_ms, resident_runs = _median_ms(resident, repeat, warmup)
    del module, device_args
    torch.cuda.empty_cache()
    return {"torch-eager": ({"ms": round(host_ms, 3), "runs": host_runs,
                             "note": "fp32, TF32 off, eager, numpy in/out"}, out),
            "torch-eager-resident": ({"ms": round(resident_ms, 3), "runs": resident_runs,
                                      "note": "input on the GPU, output left there, synchronized"}, out)}


def ort_rows(path: str, feeds: dict, repeat: int, warmup: int) -> dict[str, tuple[dict, list]]:
    """``ort-cuda``: onnxruntime's CUDA provider, TF32 off; empty where it is not installed
    (the GPU image's onnxruntime is a CPU-only build)."""
    try:
        import onnxruntime as ort
    except ImportError:
        return {}
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return {}
    sess = ort.InferenceSession(path, providers=[("CUDAExecutionProvider", {"use_tf32": 0}),
                                                 "CPUExecutionProvider"])
    out = sess.run(None, feeds)
    ms, runs = _median_ms(lambda: sess.run(None, feeds), repeat, warmup)
    return {"ort-cuda": ({"ms": round(ms, 3), "runs": runs, "note": "use_tf32=0"}, out)}


def reference_outputs(path: str, feeds: dict) -> list:
    import onnxruntime as ort

    return ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)


def max_diff(got: list, want: list) -> float:
    return max(float(np.max(np.abs(np.asarray(g, np.float64) - np.asarray(w, np.float64))))
               for g, w in zip(got, want))


def _error(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc)[:300]}"


def _guarded(label: str, make) -> dict[str, tuple[dict, list | None]]:
    """``make()`` (-> {label: (row, outputs)}), or an error row under ``label`` if it
    raises: one runtime that breaks does not end the benchmark."""
    try:
        return make()
    except Exception as exc:
        return {label: ({"ms": None, "error": _error(exc)}, None)}


def model_rows(path: str, feeds: dict, name: str, repeat: int, warmup: int) -> dict:
    """Every runtime's row for one model, each with its difference from onnxruntime CPU."""
    want = reference_outputs(path, feeds)
    made: dict[str, tuple[dict, list | None]] = {}
    for level in LEVELS:
        label = f"onnxkit-cuda-L{level}"
        made |= _guarded(label, lambda: {label: onnxkit_row(path, feeds, level, repeat, warmup)})
    label = f"onnxkit-cuda-L{LEVELS[-1]}-eager"  # no CUDA graph: the per-node host cost shows
    made |= _guarded(label, lambda: {label: onnxkit_row(path, feeds, LEVELS[-1], repeat, warmup,
                                                        graphs=False)})
    made |= _guarded("torch-eager", lambda: torch_rows(name, feeds, repeat, warmup))
    made |= _guarded("ort-cuda", lambda: ort_rows(path, feeds, repeat, warmup))
    rows = {}
    for label, (row, out) in made.items():
        if out is not None:
            row["max_abs_diff_vs_ort_cpu"] = max_diff(out, want)
        rows[label] = row
    return rows


def benchmark(names, repeat: int, warmup: int, results: dict) -> dict:
    """Time each model into ``results`` (filled as it goes: an interrupted run keeps the
    models it finished)."""
    from benchmarks.models import build, feeds as model_feeds, model_path

    for name in names:
        start = time.perf_counter()
        build([name], verbose=False)
        path, feeds = str(model_path(name)), model_feeds(name)
        results[name] = model_rows(path, feeds, name, repeat, warmup)
        print(f"{name} ({time.perf_counter() - start:.0f} s): "
              + ", ".join(f"{k} {v['ms']} ms" for k, v in results[name].items()), flush=True)
    return results


# --- where the time goes ---------------------------------------------------------------------

def device_profile(path: str, feeds: dict, level: int, runs: int = 3, top: int = 15) -> dict:
    """Per op type and per node (the ``top`` slowest) time of ``runs`` runs at ``level``,
    every cuda node synchronized (``onnxkit.runtime.profile.Profiler`` as the trace)."""
    import onnxkit
    from onnxkit.kernels.cuda import make_executor
    from onnxkit.runtime.profile import Profiler

    sess = onnxkit.Session(path, executor=make_executor(synchronize_each_node=True), level=level)
    sess.run(None, feeds)  # compiles whatever this process has not compiled yet
    prof = Profiler(sess)
    for _ in range(runs):
        sess.run(None, feeds, trace=prof)
    return {"level": level, "runs": runs, "ms_per_run": round(1e3 * prof.seconds / runs, 3),
            "by_op": prof.rows("op"), "by_node": prof.rows("node")[:top],
            "op_table": prof.table("op"), "node_table": prof.table("node", top=top)}


def best_onnxkit(rows: dict) -> tuple[str, float] | None:
    """The fastest onnxkit row of a model: (label, ms)."""
    timed = [(label, row["ms"]) for label, row in rows.items()
             if label.startswith("onnxkit-") and row.get("ms") is not None]
    return min(timed, key=lambda t: t[1]) if timed else None


def profiles(results: dict, names, feeds_of) -> dict:
    """``device_profile`` of each named model that was timed, at its best onnxkit level."""
    out = {}
    for name in names:
        best = best_onnxkit(results.get(name, {}))
        if best is None:
            continue
        path, feeds = feeds_of(name)
        try:
            out[name] = device_profile(path, feeds, level=int(best[0].rsplit("L", 1)[1]))
        except Exception as exc:
            out[name] = {"error": _error(exc)}
        out[name]["label"] = best[0]
        print(f"profiled {name} at {best[0]}", flush=True)
    return out



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


def smoke(repeat: int) -> tuple[dict, dict]:
    """The benchmark and profile code paths on ``smoke_model``: (results, profiles)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "smoke.onnx"
        feeds = smoke_model(path)
        results = {"smoke": model_rows(str(path), feeds, "smoke", repeat, 1)}
        return results, profiles(results, ["smoke"], lambda _: (str(path), feeds))
