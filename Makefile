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
export MPLBACKEND := Agg
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.PHONY: venv lab demo test test-unit test-spec test-notebooks test-cuda-sim warm clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[test,course,torch]"
	$(PY) -m onnxkit.kernels.cpu.warm
	touch $(STAMP)

venv: $(STAMP)

lab: venv
	$(VENV)/bin/jupyter lab notebooks/

demo: venv
	$(VENV)/bin/onnxkit info --example squeezenet
	$(VENV)/bin/onnxkit run --example squeezenet

# Everything: unit + integration tests (browser test included), the spec suite, the exercises
# (against their solutions), the cuda executor under numba's simulator, the notebooks.
# The test workers already use both cores: one BLAS thread each, or they fight over them.
test: venv browser
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -n $(JOBS) -p no:cacheprovider -q tests spec_tests exercises
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -n $(JOBS) -p no:cacheprovider -q spec_tests --executor cpu
	$(MAKE) --no-print-directory test-cuda-sim
	$(PY) -m pytest -p no:cacheprovider -q --nbval notebooks --nbval-sanitize-with notebooks/sanitize.cfg

test-unit: venv
	$(PY) -m pytest -n $(JOBS) -q tests exercises

test-spec: venv
	$(PY) -m pytest -n $(JOBS) -q spec_tests

test-notebooks: venv
	$(PY) -m pytest -q --nbval notebooks --nbval-sanitize-with notebooks/sanitize.cfg

# the cuda executor without a GPU: numba's simulator (a process of its own: the variable
# must be set before numba is imported), its kernel tests, then its spec subset
test-cuda-sim: venv
	NUMBA_ENABLE_CUDASIM=1 $(PY) -m pytest -n $(JOBS) -p no:cacheprovider -q tests/cuda
	NUMBA_ENABLE_CUDASIM=1 $(PY) -m pytest -n $(JOBS) -p no:cacheprovider -q --executor cuda \
		$$($(PY) -m tests.cuda.spec_ids)

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
