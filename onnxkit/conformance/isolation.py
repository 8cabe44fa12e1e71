"""Run a foreign runtime in a worker process of its own, one case at a time, with a timeout.

A runtime under test may hang, abort or segfault; none of that may take the run down.
``Worker(runtime)`` starts a process (multiprocessing ``spawn``: nothing inherited from the
parent's threads) that resolves the runtime's run function once and then serves cases fed
through a pipe: (serialized model, feeds) in, outputs or the error message out.

    worker.run(model, feeds_list, timeout) -> ("ok", outputs) | ("error", message)
                                              | ("crash", message) | ("timeout", message)

A worker that dies is counted as a crash of that case and restarted for the next; one that
does not answer within ``timeout`` seconds is killed, counted as a timeout and restarted.
Each worker runs its BLAS single-threaded (OMP/MKL/OpenBLAS one thread; Numba keeps its own
setting, so the cpu executor finds its compiled kernels) and writes nothing to the
terminal: a case's messages belong in the report. Rust backtraces are off in the worker:
where ``RUST_BACKTRACE`` is set, tract captures one with every error it raises, which
costs more than the case itself and belongs in no report.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "TF_NUM_INTRAOP_THREADS", "TVM_NUM_THREADS")
_QUIET_VARS = {"RUST_BACKTRACE": "0", "RUST_LIB_BACKTRACE": "0"}


def _serve(runtime: str, conn) -> None:
    """The worker's loop: resolve the runtime once, then answer one request per case."""
    for var in _THREAD_VARS:
        os.environ[var] = "1"
    os.environ.update(_QUIET_VARS)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    import warnings

    import numpy as np
    import onnx

    warnings.simplefilter("ignore")
    try:
        from onnxkit.conformance.backends import resolve_backend

        run, setup_error = resolve_backend(runtime), None
    except Exception as exc:  # the runtime cannot even start: every case says why
        run, setup_error = None, f"{type(exc).__name__}: {exc}"
    conn.send(("ready", setup_error))
    while True:
        try:
            request = conn.recv()
        except EOFError:
            return
        if request is None:
            return
        model_bytes, feeds_list = request
        if setup_error:
            conn.send(("error", setup_error))
            continue
        try:
            model = onnx.ModelProto()
            model.ParseFromString(model_bytes)
            with np.errstate(all="ignore"):
                outputs = run(model, feeds_list)
            conn.send(("ok", outputs))
        except Exception as exc:  # a runtime may raise anything: that is the finding
            conn.send(("error", f"{type(exc).__name__}: {exc}"[:2000]))


class Worker:
    """One runtime's worker process; restarted after a crash or a timeout."""

    def __init__(self, runtime: str, startup_timeout: float = 300.0):
        self.runtime = runtime
        self.startup_timeout = startup_timeout
        self.restarts = 0
        self.startup_seconds = 0.0  # starting the process and importing the runtime, restarts included
        self.cpu_seconds = 0.0  # processor time of its processes, restarts included
        self._proc = None
        self._conn = None

    def _start(self) -> None:
        start = time.perf_counter()
        ctx = multiprocessing.get_context("spawn")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(self.runtime, child), daemon=True,
                                 name=f"onnxkit-conformance-{self.runtime}")
        self._proc.start()
        child.close()
        # importing a runtime (torch, openvino) takes seconds: not part of any case's time
        if not self._conn.poll(self.startup_timeout):
            self._kill()
            raise TimeoutError(f"the {self.runtime} worker did not start in {self.startup_timeout:g} s")
        self._conn.recv()
        self.startup_seconds += time.perf_counter() - start

    def _account(self) -> None:
        """Add the live process's processor time to ``cpu_seconds`` (before it goes)."""
        import psutil

        try:
            t = psutil.Process(self._proc.pid).cpu_times()
            self.cpu_seconds += t.user + t.system
        except (psutil.Error, AttributeError, ValueError):  # gone already, or never started
            pass

    def _kill(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._account()
            self._proc.kill()
        if self._proc is not None:
            self._proc.join(5)
        if self._conn is not None:
            self._conn.close()
        self._proc = self._conn = None

    def run(self, model, feeds_list, timeout: float):
        if self._proc is None or not self._proc.is_alive():
            self._kill()
            try:
                self._start()
            except (TimeoutError, EOFError, OSError) as exc:
                self._kill()
                return "crash", f"the {self.runtime} worker could not start: {exc}"
        try:
            self._conn.send((model.SerializeToString(), feeds_list))
            if not self._conn.poll(timeout):
                self._kill()
                self.restarts += 1
                return "timeout", f"no answer within {timeout:g} s: the worker was stopped"
            return self._conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            self._proc.join(5)
            code = self._proc.exitcode
            self._kill()
            self.restarts += 1
            how = (f"killed by signal {signal.Signals(-code).name}" if code is not None and code < 0
                   else f"exit status {code}")
            return "crash", f"the {self.runtime} worker process died ({how})"

    def close(self) -> None:
        if self._proc is not None and self._proc.is_alive():
            self._account()
        if self._conn is not None:
            try:
                self._conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        if self._proc is not None:
            self._proc.join(5)
        self._kill()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


__all__ = ["Worker"]
