"""Compile every kernel the cuda executor launches to PTX for a real GPU, with no GPU here.

The simulator runs kernels as Python, so it cannot see what only numba's CUDA compiler
rejects (types that do not unify, calls it cannot compile). This check, in a process
WITHOUT NUMBA_ENABLE_CUDASIM:

    1. points numba at the CUDA toolkit's NVVM and a fixed compute capability (no driver);
    2. keeps "device" buffers in host memory (numpy arrays type like device arrays);
    3. turns each launch into ``cuda.compile_ptx(kernel, argument types)``;
    4. runs the cases of tests/op_cases.py (and, optionally, spec cases) through
       Session(executor="cuda"): every kernel specialization they reach gets compiled.

Results are garbage (nothing runs); only compile errors count. With ``--resources`` and
the toolkit's ``ptxas`` on PATH, each PTX is also assembled for the GPU and what ptxas
reports is listed: registers per thread, stack frame and spills (a kernel whose
accumulators spill to local memory inside its main loop is slow however it is launched).

    python -m tests.cuda.ptx_check [--cc 9.0] [--spec] [--resources]   exit 1 on a failure
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings
from types import SimpleNamespace

import numpy as np


def nvvm_available() -> bool:
    """True when the CUDA toolkit's NVVM library can be found (no GPU or driver needed)."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return False
    try:
        from numba.cuda.cudadrv.nvvm import NVVM

        NVVM()
        return True
    except Exception:
        return False


class Compiler:
    """The stand-in for ``_device.launch``: compile, remember failures, run nothing."""

    def __init__(self, cc):
        self.cc = cc
        self.done: dict = {}
        self.ptx: dict = {}  # "module.kernel(signature)" -> PTX text
        self.failures: list[str] = []

    def launch(self, kernel, blocks, threads, *args, barriers=True):
        import numba
        from numba import cuda

        sig = tuple(numba.typeof(a) for a in args)
        key = (kernel.py_func, sig)
        if key in self.done:
            return
        where = f"{kernel.py_func.__module__}.{kernel.py_func.__qualname__}"
        try:
            name = f"{where}{sig}"  # one kernel factory makes several (e.g. per tiling)
            name += f" #{sum(k.startswith(name) for k in self.ptx) + 1}" if name in self.ptx else ""
            self.ptx[name], _ = cuda.compile_ptx(kernel.py_func, sig, cc=self.cc)
            self.done[key] = None
        except Exception as exc:
            self.done[key] = exc
            self.failures.append(f"{where}{sig}: {type(exc).__name__}: {str(exc)[:2000]}")

    def resources(self) -> dict[str, dict]:
        """What ``ptxas -v`` says of each compiled kernel (needs ptxas on PATH)."""
        arch = f"sm_{self.cc[0]}{self.cc[1]}"
        found = {}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "kernel.ptx")
            for name, ptx in self.ptx.items():
                with open(path, "w") as fh:
                    fh.write(ptx)
                report = subprocess.run(["ptxas", f"-arch={arch}", "-v", path, "-o", os.devnull],
                                        capture_output=True, text=True).stderr
                found[name] = parse_ptxas(report)
        return found


def parse_ptxas(report: str) -> dict:
    """registers, stack, spill_stores, spill_loads (bytes) from ``ptxas -v`` output."""
    def number(pattern):
        match = re.search(pattern, report)
        return int(match.group(1)) if match else 0

    return {"registers": number(r"Used (\d+) registers"),
            "stack": number(r"(\d+) bytes stack frame"),
            "spill_stores": number(r"(\d+) bytes spill stores"),
            "spill_loads": number(r"(\d+) bytes spill loads")}


def install(cc=(9, 0)) -> Compiler:
    """Patch numba and the cuda executor for offline compiling; call before any kernel loads."""
    if "onnxkit.kernels.cuda.matmul" in sys.modules:
        raise RuntimeError("install() must run before the cuda kernels are imported")
    import numba.cuda.cuda_paths as paths
    import numba.cuda.cudadrv.nvrtc as nvrtc
    import numba.cuda.dispatcher as dispatcher

    nvrtc.find_closest_arch = lambda wanted: wanted
    nvrtc.get_supported_ccs = lambda: [cc]
    paths._get_nvrtc_path = lambda: paths._env_path_tuple("not needed for PTX", None)
    dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)

    import onnxkit.kernels.cuda as package
    from onnxkit.kernels.cuda import _device

    compiler = Compiler(cc)
    _device._to_device = lambda array: np.array(array)
    _device._copy_in = lambda flat, array: np.copyto(flat, array)
    _device._device_array = lambda n, dtype: np.zeros(n, dtype)
    _device._to_host = lambda flat: np.array(flat)
    _device.launch = compiler.launch
    _device.synchronize = lambda: None
    package.unavailable_reason = lambda: None
    return compiler


def run_cases(cases) -> list[str]:
    """Run each case through the cuda executor; errors other than compiling are ignored."""
    import onnxkit

    problems = []
    for case in cases:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                onnxkit.Session(case.model(), executor="cuda").run(None, case.feeds())
        except Exception as exc:  # garbage data can trip shape checks: not our concern here
            problems.append(f"{case.name}: {type(exc).__name__}: {str(exc)[:200]}")
    return problems


def compile_tilings() -> None:
    """Launch the tiled GEMM and convolution once per real tiling (the cases' small shapes
    reach only some), float32 with and without an activation, and float64 (MEDIUM); and
    the product over (batch, kv head, group) that Attention launches."""
    from onnxkit.kernels.cuda._tiles import CHOICES, MEDIUM
    from onnxkit.kernels.cuda.conv import conv_nd
    from onnxkit.kernels.cuda.matmul import _gemm, _matmul, _operands

    for dtype, tilings in ((np.float32, CHOICES), (np.float64, (MEDIUM,))):
        a, x, w = np.ones((4, 4), dtype), np.ones((1, 8, 5, 5), dtype), np.ones((8, 8, 3, 3), dtype)
        heads = np.ones((2, 2, 2, 4, 4), dtype)
        for i, tiles in enumerate(tilings):
            _matmul(*_operands(heads, heads), tiles=tiles)
            for formula, splits in _epilogues(i, len(tilings)):
                extra = {} if formula is None else {"formula": formula}
                _gemm(a, a, a, 1.0, 1.0, 0, 1, tiles=tiles, splits=splits, **extra)
                conv_nd(x, w, w[:, 0, 0, 0], method="gemm", tiles=tiles, pads=[1, 1, 1, 1],
                        splits=splits, **extra)


def _epilogues(i: int, tilings: int) -> list:
    """(formula, splits) to launch the i-th of ``tilings`` tilings with: no activation and
    relu, whole (splits 1) and split-K (2: the partial products, then their sum).

    A split-K part leaves the epilogue to the sum kernel (``split_sum_kernel``), so its
    PTX is the same for every formula (only the shared arrays' numbering differs): each
    tiling compiles it once, the formulas taking turns, and both sum kernels still compile.
    With a single tiling (float64's) every pair runs.
    """
    from onnxkit.kernels.cuda._scalar import relu

    whole = [(None, 1), (relu, 1)]
    if tilings == 1:
        return whole + [(None, 2), (relu, 2)]
    return whole + [((None, relu)[i % 2], 2)]


def spec_cases():
    """The onnx node cases of the spec subset, as objects with .name/.model()/.feeds()."""
    from onnxkit.conformance import all_cases
    from spec_tests.cuda_subset import CUDA_SUBSET

    for case in all_cases():
        if case.kind == "node" and case.name in CUDA_SUBSET:
            inputs = case.data_sets[0][0]
            yield SimpleNamespace(name=case.name, model=lambda c=case: c.model,
                                  feeds=lambda c=case, i=inputs: c.feeds(i))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cc", default="9.0", help="compute capability, e.g. 8.0, 9.0")
    parser.add_argument("--spec", action="store_true", help="also run the spec subset's cases")
    parser.add_argument("--resources", action="store_true",
                        help="assemble each kernel with ptxas and list registers and spills")
    args = parser.parse_args(argv)
    cc = tuple(int(p) for p in args.cc.split("."))
    compiler = install(cc)
    from tests.op_cases import CASES

    cases = list(CASES) + (list(spec_cases()) if args.spec else [])
    run_cases(cases)
    compile_tilings()
    print(f"compiled {len(compiler.done)} kernel specializations for sm_{cc[0]}{cc[1]}, "
          f"{len(compiler.failures)} failed")
    for failure in compiler.failures:
        print("FAILED", failure)
    if args.resources:
        if shutil.which("ptxas") is None:
            print("no ptxas on PATH: resources not checked")
        else:
            for name, used in sorted(compiler.resources().items()):
                print(f"{used['registers']:4d} registers {used['stack']:5d} B stack "
                      f"{used['spill_stores']:4d} B spill stores  {name[:160]}")
    return 1 if compiler.failures else 0


if __name__ == "__main__":
    sys.exit(main())
