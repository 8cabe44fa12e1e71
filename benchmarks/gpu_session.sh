#!/usr/bin/env bash
# The commands a session with a lent GPU runs, in stages that each fit one device-tool call
# (at most 10 minutes a command; see docs/cuda.md, "Running on a real GPU"):
#
#   bash benchmarks/gpu_session.sh verdicts     both verdicts in one call, for a session with
#                                               15 device-minutes: versions, resnet50_b32 vs
#                                               torch (<= BENCH_LIMIT s), then the whole spec
#                                               suite in SPEC_JOBS processes until VERDICTS_LIMIT
#   bash benchmarks/gpu_session.sh check        GPU, versions, imports, a smoke run   (~1 min)
#   bash benchmarks/gpu_session.sh tests        pytest tests/cuda on the GPU
#   bash benchmarks/gpu_session.sh spec [K/N]   every spec case on reference and cuda (or the
#                                               K-th of N slices): the correctness verdict
#   bash benchmarks/gpu_session.sh spec-rest R  the cases report R.json lists as "not run"
#   bash benchmarks/gpu_session.sh bench        resnet50_b32 vs torch eager + per-op profile:
#                                               the speed verdict
#   bash benchmarks/gpu_session.sh bench-tuned  the same, ONNXKIT_CUDA_TUNE=1 (tilings timed, JSON lists them)
#   bash benchmarks/gpu_session.sh bench-more   the six other benchmark models
#   bash benchmarks/gpu_session.sh speed        one call for the speed issue: the five target
#                                               models (CUDA graphs, eager, torch), profiles,
#                                               resnet50_b32 with every tiling timed, then the
#                                               whole spec suite until VERDICTS_LIMIT
#   bash benchmarks/gpu_session.sh all          every stage in a row (where no 10-minute limit holds)
#
# Run it from anywhere; it works in the repository root. Each stage first installs the
# wheels carried in .whl/ (`make gpu-wheels`) into /tmp/site, then puts /tmp/site and the
# repository root on PYTHONPATH: onnxkit is imported from the source tree, not pip-installed.
# Each stage is stopped after STAGE_LIMIT seconds (SIGINT, then SIGKILL 15 s later) and
# prints its time. Logs (<stage>.log) and the result files go to $OUT when it is set (the
# device tool brings back what is there), else to /tmp/onnxkit-gpu; the result files are
# also written to benchmarks/results/ (on that machine: commit them from $OUT).

set -uo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
STAGE_LIMIT=${STAGE_LIMIT:-560}
PYTEST_JOBS=${PYTEST_JOBS:-4}
SPEC_JOBS=${SPEC_JOBS:-12}             # cuda spec children at once (16 CPU cores there)
VERDICTS_LIMIT=${VERDICTS_LIMIT:-480}  # the whole 'verdicts' stage, seconds
BENCH_LIMIT=${BENCH_LIMIT:-200}        # its benchmark part
TUNE_LIMIT=${TUNE_LIMIT:-90}           # the 'speed' stage's tuned ResNet-50
LOGDIR=${OUT:-/tmp/onnxkit-gpu}
mkdir -p "$LOGDIR"
export PYTHONUNBUFFERED=1 MPLBACKEND=Agg NUMBA_CACHE_DIR=/tmp/onnxkit-numba-cache
export OUT=$LOGDIR  # benchmarks.cuda_run copies its results here

setup() {
    # carried wheels -> /tmp/site (once per machine: skipped when the same wheels are there)
    local site=/tmp/site
    if compgen -G ".whl/*.whl" >/dev/null; then
        if [ "$(ls .whl)" != "$(cat "$site/.carried" 2>/dev/null)" ]; then
            "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
                --target "$site" .whl/*.whl || { echo "installing .whl/*.whl failed"; exit 1; }
            ls .whl >"$site/.carried"
        fi
        export PYTHONPATH=$site:$PWD${PYTHONPATH:+:$PYTHONPATH}
    else
        echo "no .whl/ carried: using the image's packages (see 'check' for version mismatches)"
        export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
    fi
}

limited() {  # a command stopped after STAGE_LIMIT seconds
    timeout -k 15 -s INT "$STAGE_LIMIT" "$@"
}

versions() {  # what is installed there against pyproject's pins; the GPU as torch and onnxkit see it
    "$PY" - <<'EOF'
import importlib, sys, tomllib
from importlib import metadata

from packaging.requirements import Requirement

print("python", sys.version.split()[0], sys.executable)
# what onnxkit, benchmarks/ and tests/cuda import (the widgets' modules are not needed here)
for name in ("numpy", "onnx", "google.protobuf", "ml_dtypes", "numba", "numba.cuda", "numba_cuda",
             "llvmlite", "tqdm", "threadpoolctl", "psutil", "matplotlib", "torch", "onnxruntime",
             "pytest", "xdist", "pytest_timeout", "onnxkit", "onnxkit.kernels.cuda", "benchmarks.cuda_run"):
    try:
        module = importlib.import_module(name)
        print(f"ok       {name:22} {getattr(module, '__version__', '')!s:14} {getattr(module, '__file__', '')}")
    except Exception as exc:
        print(f"MISSING  {name:22} {type(exc).__name__}: {exc}")

project = tomllib.load(open("pyproject.toml", "rb"))["project"]
wanted = project["dependencies"] + project["optional-dependencies"]["torch"] + ["onnxruntime==1.31.1"]
print("\npyproject's pins against what is installed:")
for text in wanted:
    req = Requirement(text)
    try:
        have = metadata.version(req.name)
    except metadata.PackageNotFoundError:
        have = None
    if req.name in ("ipywidgets", "anywidget"):
        verdict = "(widgets)"  # the notebooks' widgets: nothing here imports them
    elif have is None:
        verdict = "missing"
    elif req.specifier.contains(have.split("+")[0], prereleases=True):
        verdict = "ok"
    else:
        verdict = "DIFFERENT"
    print(f"  {verdict:9} {text:24} installed {have}")
print("  (onnx must be 1.23.2: the spec cases come from it; torch and onnxruntime may differ)")

import torch
print("\ntorch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(),
      torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
from onnxkit.kernels.cuda import unavailable_reason
print("onnxkit cuda executor:", unavailable_reason() or "available")
EOF
}

stage_check() {
    nvidia-smi || echo "nvidia-smi failed"
    versions
    # the whole chain once, small: 4 spec cases, a tiny model, its profile
    limited "$PY" -m benchmarks.cuda_run --smoke
}

stage_tests() {
    local extra=()
    "$PY" -c "import xdist" 2>/dev/null && extra+=(-n "$PYTEST_JOBS")
    "$PY" -c "import pytest_timeout" 2>/dev/null && extra+=(--timeout 240)
    limited "$PY" -m pytest -q -ra -p no:cacheprovider "${extra[@]}" \
        --junitxml "$LOGDIR/tests-junit.xml" tests/cuda
}

spec_run() {  # spec_run CASE_TIMEOUT MARGIN [ARGS]: the whole suite in SPEC_JOBS children,
    # no case started in the last MARGIN seconds of STAGE_LIMIT
    local case_timeout=$1 margin=$2
    shift 2
    limited "$PY" -m benchmarks.cuda_run --spec-only --spec all --jobs "$SPEC_JOBS" \
        --case-timeout "$case_timeout" --deadline $((STAGE_LIMIT - margin)) "$@"
}

bench_resnet50() {  # bench_resnet50 REPEAT: resnet50_b32 vs torch eager, and its profile
    limited "$PY" -m benchmarks.cuda_run --skip-spec --models resnet50_b32 --profile resnet50_b32 \
        --repeat "$1" --tag bench-resnet50
}

stage_spec() {  # optional K/N: one slice of the cases
    local shard=()
    [ $# -gt 0 ] && shard=(--shard "$1")
    spec_run 90 90 "${shard[@]}"
}

stage_spec_rest() {  # REPORT.json: the cases an earlier, incomplete spec run did not reach
    [ $# -eq 1 ] && [ -f "$1" ] || { echo "spec-rest needs the earlier run's .json (committed)"; return 2; }
    spec_run 90 90 --rest-of "$1"
}

stage_verdicts() {  # both verdicts in one call; the benchmark first, while it has the GPU alone
    local start=$SECONDS left
    nvidia-smi -L || echo "nvidia-smi failed"
    versions
    echo "--- resnet50_b32 against torch eager (at most ${BENCH_LIMIT} s)"
    STAGE_LIMIT=$BENCH_LIMIT bench_resnet50 10
    left=$((VERDICTS_LIMIT - (SECONDS - start)))
    echo "--- the whole spec suite, ${SPEC_JOBS} processes at once, ${left} s left"
    STAGE_LIMIT=$left spec_run 60 45
}

stage_speed() {  # graphs vs eager vs torch on the target models, tuned tilings, spec suite
    local start=$SECONDS left
    nvidia-smi -L || echo "nvidia-smi failed"
    echo "--- the target models (at most ${BENCH_LIMIT} s)"
    STAGE_LIMIT=$BENCH_LIMIT limited "$PY" -m benchmarks.cuda_run --skip-spec \
        --models mlp resnet18 bert_mini mobilenetv2 resnet50_b32 --profile resnet18 resnet50_b32 \
        --repeat 20 --tag speed
    echo "--- resnet50_b32, every tiling timed per layer (at most ${TUNE_LIMIT} s)"
    ONNXKIT_CUDA_TUNE=1 STAGE_LIMIT=$TUNE_LIMIT limited "$PY" -m benchmarks.cuda_run --skip-spec \
        --models resnet50_b32 --profile --repeat 10 --tag speed-tuned
    left=$((VERDICTS_LIMIT - (SECONDS - start)))
    echo "--- the whole spec suite, ${SPEC_JOBS} processes at once, ${left} s left"
    STAGE_LIMIT=$left spec_run 60 45
}

stage_bench() {
    bench_resnet50 20
}

stage_bench_tuned() {  # the same with every product's tiling timed on the GPU first
    export ONNXKIT_CUDA_TUNE=1  # (the stage runs in its own subshell)
    limited "$PY" -m benchmarks.cuda_run --skip-spec --models resnet50_b32 \
        --repeat 20 --tag bench-resnet50-tuned
}

stage_bench_more() {
    limited "$PY" -m benchmarks.cuda_run --skip-spec \
        --models resnet18 mobilenetv2 bert_mini mlp resnet50 densenet121 --profile \
        --repeat 30 --tag bench-models
}

run_stage() {  # run_stage NAME [ARGS]: one stage, logged to $LOGDIR/NAME.log, timed
    local name=$1 start=$SECONDS rc
    shift
    echo "=== $name $* (start $(date -u +%H:%M:%S) UTC, limit ${STAGE_LIMIT} s)"
    "stage_${name//-/_}" "$@" 2>&1 | tee "$LOGDIR/$name.log"
    rc=${PIPESTATUS[0]}
    echo "=== $name: exit code $rc, $((SECONDS - start)) s" | tee -a "$LOGDIR/$name.log"
    return "$rc"
}

main() {
    local stage=${1:-}
    [ $# -gt 0 ] && shift
    case $stage in
        verdicts | speed | check | tests | spec | spec-rest | bench | bench-tuned | bench-more)
            setup
            run_stage "$stage" "$@" ;;
        all)
            setup
            local rc=0
            for s in check tests spec bench bench-more; do run_stage "$s" || rc=1; done
            return "$rc" ;;
        *)
            sed -n '2,22p' "$0"
            return 2 ;;
    esac
}

main "$@"
