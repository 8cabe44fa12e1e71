# onnxkit — two commands do all set-up on a fresh machine:
#   make lab    create .venv, install everything, open the course in JupyterLab
#   make test   create .venv, install everything, run every test (unit, spec, exercises, cuda simulator, notebooks)
# Headless: `make demo` runs a bundled model (SqueezeNet) from the command line.

VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-onnxkit
JOBS   ?= 2
export ONNX_HOME := $(CURDIR)/.cache/onnx
export NUMBA_CACHE_DIR := $(CURDIR)/.cache/numba
export ONNXKIT_CACHE_DIR := $(CURDIR)/.cache/onnxkit
export MPLBACKEND := Agg
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: venv lab demo test test-unit test-spec test-notebooks test-nbconvert test-threads test-cuda-sim warm clean

EXTRAS := test,course,torch,classroom,conformance
UV     := uv==0.13.9

# The install runs on uv (5x less CPU than pip's, no bytecode compiled up front), reading
# the indexes, links and constraints pip is configured with (UV_WITH_PIP_SOURCES); where
# uv cannot be had, pip installs the same.
define UV_WITH_PIP_SOURCES
import os, subprocess, sys
venv_python, *request = sys.argv[1:]
listed = subprocess.run([venv_python, "-m", "pip", "config", "list"], capture_output=True,
                        text=True).stdout.splitlines()
conf = {}
for line in sorted(listed, key=lambda line: line.startswith(":env:")):  # env over files
    key, _, value = line.partition("=")
    conf[key.split(".", 1)[-1]] = value.strip().strip("'\"")
args = ["--index-strategy", "unsafe-best-match"]
for key in ("index-url", "extra-index-url", "find-links", "constraint"):
    for value in conf.get(key, "").split():
        if key != "find-links" or os.path.exists(value.removeprefix("file://")):
            args += ["--" + key, value]
env = dict(os.environ, VIRTUAL_ENV=os.path.dirname(os.path.dirname(venv_python)))
if conf.get("cert"):
    env.setdefault("SSL_CERT_FILE", conf["cert"])
uv = os.path.join(os.path.dirname(venv_python), "uv")
sys.exit(subprocess.run([uv, "pip", "install", "-q", "--python", venv_python, *args, *request],
                        env=env).returncode)
endef
export UV_WITH_PIP_SOURCES

$(STAMP): pyproject.toml exercises/classroom/package-lock.json
	python3 -m venv $(VENV)
	($(PY) -m pip install -q "$(UV)" && $(PY) -c "$$UV_WITH_PIP_SOURCES" $(PY) -e ".[$(EXTRAS)]") \
		|| ($(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q -e ".[$(EXTRAS)]")
	cd exercises/classroom && npm ci --no-audit --no-fund --loglevel=error  # JupyterHub's proxy
	touch $(STAMP)

venv: $(STAMP)

# nothing is compiled first: a cpu kernel compiles on its first use (a one-line notice
# says so) and is cached in .cache/numba from then on
lab: venv
	$(VENV)/bin/jupyter lab notebooks/

demo: venv
	$(VENV)/bin/onnxkit info --example squeezenet
	$(VENV)/bin/onnxkit run --example squeezenet

# Everything: unit + integration tests (browser test included), the spec suite on the
# reference and cpu executors, the exercises (against their solutions), the cuda executor under
# numba's simulator, the cpu kernels split on three threads, the notebooks. docs/testing.md
# says which step covers what, and how long each takes.
# - warm compiles the cpu kernels on one core while the steps that need no cpu kernel use
#   the other: the cuda simulator tests, the PTX compile check, the spec notebooks; the
#   test workers then find every kernel in the cache.
# - The test workers already use both cores: one BLAS thread each, or they fight over them.
# - One pytest session per environment: each pays start-up and the spec suite's collection
#   (the onnx cases, ~15 s of CPU per worker) once. pytest's exit status 5 (nothing
#   collected) fails make as any other does.
# - A session loads only the pytest plugins its tests use: nbval (nbformat, jsonschema and
#   its IRI grammar), anyio and hypothesis take ~7 s of CPU to load in every pytest process
#   and xdist worker. No test uses anyio; NO_NBVAL is for sessions without --nbval,
#   NO_HYPOTHESIS for those without a hypothesis test (the fuzzers are in the main session).
PYTEST := $(PY) -m pytest -p no:cacheprovider -p no:anyio -q
NO_NBVAL := -p no:nbval
NO_HYPOTHESIS := -p no:hypothesispytest
ONE_BLAS := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
test: venv browser
	$(MAKE) --no-print-directory -j2 --output-sync=line warm test-cuda-sim test-ptx test-spec-notebooks
	$(ONE_BLAS) $(PYTEST) $(NO_NBVAL) -n $(JOBS) --executor reference,cpu \
		--ignore=tests/cuda/test_ptx.py tests spec_tests exercises
	$(MAKE) --no-print-directory -j2 --output-sync=target threads-step course-notebooks-step

# the last two steps side by side: the course notebooks alone keep about one core busy (a
# few long notebooks, one kernel each); neither step compiles, both read warm's cache
.PHONY: threads-step course-notebooks-step
threads-step:
	$(run-threads)
course-notebooks-step:
	$(run-course-notebooks)

test-unit: venv warm
	$(PYTEST) $(NO_NBVAL) -n $(JOBS) tests exercises

test-spec: venv warm
	$(PYTEST) $(NO_NBVAL) $(NO_HYPOTHESIS) -n $(JOBS) --executor reference,cpu spec_tests

# the course notebooks and the spec notebooks under nbval, one notebook per worker (cells
# share a kernel); every cell runs top to bottom as Jupyter runs it and its output must
# match the saved one (sanitize.cfg, for the course notebooks: addresses, timings)
define run-course-notebooks
ONNXKIT_CPU_NOTICE=0 $(PYTEST) $(NO_HYPOTHESIS) -n $(JOBS) --dist loadfile --nbval \
	--nbval-sanitize-with notebooks/sanitize.cfg notebooks
endef
test-notebooks: venv warm test-spec-notebooks
	$(run-course-notebooks)

# every cuda kernel template compiled to PTX for a real GPU (NVVM, no device needed; skipped
# without NVVM): the longest single test, and it needs no cpu kernel, so make test runs it
# while warm compiles (the main session leaves it out)
.PHONY: test-ptx
test-ptx: venv
	$(PYTEST) $(NO_NBVAL) $(NO_HYPOTHESIS) tests/cuda/test_ptx.py

# the spec notebooks run on the reference executor: no cpu kernel, so make test runs them
# while warm compiles
.PHONY: test-spec-notebooks
test-spec-notebooks: venv
	$(PYTEST) $(NO_HYPOTHESIS) -n $(JOBS) --dist loadfile --nbval spec_tests/notebooks

# every course notebook run by nbconvert (what nbval runs, less the output comparison; not in
# make test), two at a time; the executed copies go to .cache/nbconvert, the notebooks in
# git stay untouched
test-nbconvert: venv
	printf '%s\n' notebooks/*.ipynb | xargs -P $(JOBS) -I{} $(VENV)/bin/jupyter nbconvert \
		--to notebook --execute --ExecutePreprocessor.timeout=600 --output-dir .cache/nbconvert {}

# every notebook under papermill, one after another (make test runs two of them, in
# tests/test_course_notebooks.py: all take minutes); executed copies in .cache/papermill
.PHONY: test-papermill
test-papermill: venv
	mkdir -p .cache/papermill
	for nb in notebooks/*.ipynb; do \
	  ONNXKIT_CPU_NOTICE=0 $(VENV)/bin/papermill --no-progress-bar --cwd notebooks \
	    "$$nb" ".cache/papermill/$$(basename $$nb)" || exit 1; done

# the cpu kernels with every work split taken, on three threads (uneven parts): small
# inputs split too (ONNXKIT_CPU_MIN_PARALLEL=1), the products on numpy's OpenBLAS rather
# than oneMKL (ONNXKIT_BLAS=openblas: the fallback, tested); all read at run time, so the
# kernels come from the one cache warm fills. The cpu tests and the spec suite, one session.
SPLIT := NUMBA_NUM_THREADS=3 ONNXKIT_CPU_MIN_PARALLEL=1 ONNXKIT_BLAS=openblas OPENBLAS_NUM_THREADS=1
define run-threads
$(SPLIT) $(PYTEST) $(NO_NBVAL) $(NO_HYPOTHESIS) -n $(JOBS) --executor cpu tests/test_cpu_executor.py \
	tests/test_cpu_blas.py tests/test_cpu_banded.py tests/test_cpu_pixel_dots.py spec_tests
endef
test-threads: warm
	$(run-threads)

# the cuda executor without a GPU: numba's simulator (a process of its own: the variable
# must be set before numba is imported), its kernel tests and its spec subset (the cases of
# spec_tests/cuda_subset.py; spec_tests/conftest.py deselects the others), one session
test-cuda-sim: venv
	NUMBA_ENABLE_CUDASIM=1 $(PYTEST) $(NO_NBVAL) $(NO_HYPOTHESIS) -n $(JOBS) --executor cuda \
		tests/cuda spec_tests

warm: venv  ## compile the cpu executor's Numba kernels into .cache/numba
	$(PY) -m onnxkit.kernels.cpu.warm

clean:
	rm -rf $(VENV) .cache

# the JupyterLab browser test (tests/widgets/test_browser.py) drives Debian's Chromium
.PHONY: browser test-browser
browser: venv
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; \
	  else echo "Chromium is missing: run 'sudo apt-get install -y chromium' (or make browser as root)"; exit 1; fi; \
	fi
	@/usr/bin/chromium --version

test-browser: browser
	$(PY) -m pytest -p no:cacheprovider -q -rs tests/widgets/test_browser.py

# --- a session with a lent GPU (docs/cuda.md, "Running on a real GPU") ---------------------
# Wheels the GPU image lacks, or has at another version than we need, for the device tool's
# `carry` (cp312, manylinux x86_64, no dependencies: the image has them; .whl/ is git-ignored).
# The image has onnx 1.23.1; we pin 1.23.2, and the spec cases are generated by it. Every
# other module that onnxkit, benchmarks/ and tests/cuda import is in the image (its
# onnxruntime, 1.30 and CPU-only, serves as the CPU reference). If `gpu_session.sh check`
# finds the image's numba-cuda unusable, add the one tested here:
#   make gpu-wheels GPU_WHEELS="onnx==1.23.2 numba-cuda==0.30.4"
GPU_WHEELS ?= onnx==1.23.2
GPU_PLATFORMS := manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 \
	manylinux2014_x86_64 manylinux1_x86_64
PIP_PY := $(if $(wildcard $(PY)),$(PY),python3)

.PHONY: gpu-wheels gpu-preflight
gpu-wheels:
	rm -rf .whl && mkdir -p .whl
	$(PIP_PY) -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
		--implementation cp $(addprefix --platform ,$(GPU_PLATFORMS)) -d .whl $(GPU_WHEELS)
	@du -b .whl/*.whl | awk '{n += $$1; printf "%7.1f MiB  %s\n", $$1 / 1048576, $$2} \
		END {printf "%7.1f MiB  in all (a call carries at most 64 MiB, working tree included)\n", \
		n / 1048576; if (n > 48 * 1048576) {print "too big: keep it under 48 MiB"; exit 1}}'

# what can be checked here before spending device time: the script's syntax, the runner's
# tests, and the runner end to end under numba's CUDA simulator
gpu-preflight:
	bash -n benchmarks/gpu_session.sh
	$(PY) -m pytest -q -p no:cacheprovider tests/test_cuda_run.py
	NUMBA_ENABLE_CUDASIM=1 $(PY) -m benchmarks.cuda_run --smoke --jobs 2

# --- a teacher's classroom (docs/teaching.md) ------------------------------------------------
# nbgrader's course folder in build/course: source notebooks made from exercises/, the
# student release; then JupyterHub on http://127.0.0.1:8000 serving it (Ctrl-C stops it)
.PHONY: assignments classroom
assignments: venv
	$(PY) -m exercises.nbgrader_course release build/course

classroom: venv
	$(PY) -m exercises.classroom.hub --course build/course
