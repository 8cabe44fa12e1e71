"""Run fuzz cases in a worker process that may crash, hang or leak without taking pytest along.

    with Sandbox() as box:
        outcome = box.run(Case(model_bytes, feeds))   # Outcome(kind=...)
        assert outcome.acceptable, outcome.report()

The worker (``python -m tests.hostile.sandbox``) loads the case, plans it with
``onnxkit.Session`` and runs it, then answers with one of these outcome kinds:

    ok       the model ran (or planned, when the case has no feeds)
    error    an ``OnnxkitError`` was raised: the clear error we want
    --- findings (a test fails on each) ---
    raw      any other exception escaped (numpy, protobuf, onnx, Python...)
    memory   a MemoryError under the worker's address-space cap: something allocated
             far more than ``max_tensor_bytes`` without ``check_allocation``
    hang     the per-case timer fired (a Python traceback shows where)
    stuck    no answer by the hard timeout (stuck in C code): the worker is killed
    crash    the worker died (a signal such as SIGSEGV, or an exit)
    escape   the case opened a file outside the model's folder, compiled a string
             into code, unpickled, started a process or opened a socket

Replay a saved failure:  ``python -m tests.hostile.sandbox --replay FILE.pkl``
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# max_tensor_bytes, max_loop_iterations, max_graph_depth: small, so legitimate runs stay fast
FUZZ_LIMITS = (4 * 1024**2, 2_000, 16)
SOFT_TIMEOUT_S = float(os.environ.get("ONNXKIT_FUZZ_TIMEOUT", "5"))
HARD_TIMEOUT_S = SOFT_TIMEOUT_S + 12
MEMORY_HEADROOM = 256 * 1024**2  # address space the worker may grow by per case

ACCEPTABLE = ("ok", "error")
FINDINGS = ("raw", "memory", "hang", "stuck", "crash", "escape")


@dataclass
class Case:
    """One fuzz input: a model (bytes or ONNX text), feeds (None: plan only), limits."""

    model: bytes | str
    feeds: dict | None = None
    limits: tuple = FUZZ_LIMITS
    via_path: bool = False  # write the model into a folder and load it from its path
    level: int = 0
    label: str = ""
    executor: str = "reference"

    def __repr__(self) -> str:
        size = len(self.model)
        feeds = None if self.feeds is None else {k: _short(v) for k, v in self.feeds.items()}
        return (f"Case({self.label or 'model'}, {size} {'bytes' if isinstance(self.model, bytes) else 'chars'}, "
                f"feeds={feeds}, limits={self.limits}, via_path={self.via_path}, level={self.level}"
                f"{'' if self.executor == 'reference' else ', executor=' + repr(self.executor)})")


def _short(value) -> str:
    import numpy as np

    if isinstance(value, np.ndarray):
        flat = value.reshape(-1)[:4].tolist() if value.size else []
        return f"{value.dtype}{list(value.shape)}{flat}"
    return repr(value)[:60]


@dataclass
class Outcome:
    kind: str
    error_type: str = ""
    message: str = ""
    detail: str = ""
    elapsed: float = 0.0
    events: list = field(default_factory=list)

    @property
    def acceptable(self) -> bool:
        return self.kind in ACCEPTABLE

    def report(self, case: Case | None = None) -> str:
        lines = [f"FINDING {self.kind}: {self.error_type}: {self.message[:2000]}"]
        if case is not None:
            lines.append(f"case: {case!r}")
            lines.append(f"saved for replay: {save_case(case)}")
        if self.events:
            lines.append(f"events: {self.events[:10]}")
        if self.detail:
            lines.append(self.detail[-6000:])
        return "\n".join(lines)


def save_case(case: Case) -> str:
    """Pickle a failing case (our own test data) for ``--replay``; returns the path."""
    folder = os.environ.get("ONNXKIT_FUZZ_FAILURES") or os.path.join(tempfile.gettempdir(),
                                                                      "onnxkit-fuzz-failures")
    os.makedirs(folder, exist_ok=True)
    fd, path = tempfile.mkstemp(suffix=".pkl", prefix="case-", dir=folder)
    with os.fdopen(fd, "wb") as f:
        pickle.dump(case, f)
    return path


# ---------------------------------------------------------------- parent side

def _send(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes | None:
    """n bytes from fd, or None at EOF; raises TimeoutError past the deadline."""
    chunks, got = [], 0
    while got < n:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


class Sandbox:
    """A worker process, restarted after every crash or hang."""

    def __init__(self, soft_timeout: float = SOFT_TIMEOUT_S, hard_timeout: float = HARD_TIMEOUT_S):
        self.soft_timeout = soft_timeout
        self.hard_timeout = hard_timeout
        self.proc: subprocess.Popen | None = None
        self.stderr_file = None
        self.root: str | None = None
        self.restarts = 0

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> None:
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   PYTHONFAULTHANDLER="1")
        self.stderr_file = tempfile.TemporaryFile()
        self.root = tempfile.mkdtemp(prefix="onnxkit-fuzz-")  # the worker's scratch folders
        env["ONNXKIT_FUZZ_ROOT"] = self.root
        self.proc = subprocess.Popen([sys.executable, "-m", "tests.hostile.sandbox", "--worker"],
                                     cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr_file)
        ready = _read_exact(self.proc.stdout.fileno(), 8, time.monotonic() + 120)
        if ready is None:
            raise RuntimeError(f"the fuzz worker did not start:\n{self._stderr_tail()}")
        _read_exact(self.proc.stdout.fileno(), struct.unpack("<Q", ready)[0], None)

    def _stderr_tail(self, n: int = 6000) -> str:
        if self.stderr_file is None:
            return ""
        self.stderr_file.seek(0, os.SEEK_END)
        size = self.stderr_file.tell()
        self.stderr_file.seek(max(0, size - n))
        return self.stderr_file.read().decode("utf-8", "replace")

    def close(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                try:  # end of input: the worker removes its folder and exits
                    self.proc.stdin.close()
                    self.proc.wait(timeout=10)
                except (OSError, subprocess.TimeoutExpired):
                    self.proc.kill()  # the worker this Sandbox started, by its handle
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                stream.close()
            self.proc = None
        if self.stderr_file is not None:
            self.stderr_file.close()
            self.stderr_file = None
        if self.root is not None:
            import shutil

            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def run(self, case: Case) -> Outcome:
        if self.proc is None:
            self._start()
        start = time.monotonic()
        try:
            _send(self.proc.stdin, (case, self.soft_timeout))
            fd = self.proc.stdout.fileno()
            deadline = start + self.hard_timeout
            header = _read_exact(fd, 8, deadline)
            payload = None if header is None else _read_exact(fd, struct.unpack("<Q", header)[0], deadline)
        except TimeoutError:
            outcome = Outcome("stuck", message=f"no answer within {self.hard_timeout:.0f} s; worker killed",
                              elapsed=time.monotonic() - start)
            self._restart(outcome)
            return outcome
        except (BrokenPipeError, OSError):
            payload = None
        if payload is None:
            self.proc.wait()
            code = self.proc.returncode
            why = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit code {code}"
            outcome = Outcome("crash", message=f"the worker died ({why})", elapsed=time.monotonic() - start)
            self._restart(outcome)
            return outcome
        return pickle.loads(payload)

    def _restart(self, outcome: Outcome) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
        outcome.detail = self._stderr_tail()
        self.close()
        self.restarts += 1


# ---------------------------------------------------------------- worker side

class Hang(BaseException):
    """Raised by the per-case timer; a BaseException so no ``except Exception`` swallows it."""


FORBIDDEN_EVENTS = frozenset({"pickle.find_class", "os.system", "subprocess.Popen", "os.posix_spawn",
                              "os.exec", "os.fork", "socket.connect", "socket.bind", "ctypes.dlopen"})


def _numba_cache_class(args) -> bool:
    module, name = (str(a) for a in args[:2])
    return module.startswith("numba.") or (module, name) in {("copyreg", "_reconstructor"),
                                                             ("builtins", "object")}


def _vetted(source: str) -> bool:
    from onnxkit.runtime.straight_line import vetted

    return vetted(source)


class _Watch:
    """An audit hook that records what a case must never do while ``armed``."""

    def __init__(self):
        self.armed = False
        self.folder: str | None = None
        self.events: list = []
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, REPO, "/usr/lib", "/usr/share",
                    "/usr/local/lib", "/proc/self", "/sys/devices/system/cpu"}
        self.allowed = tuple(os.path.realpath(p) for p in prefixes)
        self.sandbox_root: str | None = None

    def __call__(self, event: str, args) -> None:
        if not self.armed:
            return
        if event == "open":
            self._check_open(args[0])
        elif event == "compile":
            filename = args[1] if len(args) > 1 else None
            source = args[0].decode("utf-8", "replace") if isinstance(args[0], bytes) else args[0]
            if isinstance(filename, str) and filename.startswith("<onnxkit ") and \
                    isinstance(source, str) and _vetted(source):
                return  # a plan written out by onnxkit from its own fixed words
            if not (isinstance(filename, (str, bytes)) and os.path.isfile(filename)):
                self.events.append(("compile", str(filename), str(args[0])[:200]))
        elif event == "pickle.find_class" and _numba_cache_class(args):
            return  # numba reading its own compiled-kernel cache (NUMBA_CACHE_DIR), not model data
        elif event in FORBIDDEN_EVENTS:
            self.events.append((event, repr(args)[:200]))

    def _check_open(self, path) -> None:
        if isinstance(path, int):
            return
        path = os.fsdecode(path)
        real = os.path.realpath(path)
        inside = self.folder is not None and (real + os.sep).startswith(self.folder + os.sep)
        in_sandbox = self.sandbox_root is not None and real.startswith(self.sandbox_root + os.sep)
        if inside:
            return
        if in_sandbox or not real.startswith(self.allowed):
            self.events.append(("open", path, real))


def _classify(exc: BaseException, errors) -> tuple[str, str, str]:
    import traceback

    text = "".join(traceback.format_exception(exc))
    if isinstance(exc, Hang):
        return "hang", "Hang", text
    chain, seen = exc, set()
    while chain is not None and id(chain) not in seen:
        seen.add(id(chain))
        if isinstance(chain, MemoryError):
            return "memory", type(exc).__name__, text
        chain = chain.__cause__ or chain.__context__
    if isinstance(exc, errors.OnnxkitError):
        return "error", type(exc).__name__, text
    return "raw", type(exc).__name__, text


def _check_result(outputs) -> None:
    import numpy as np

    for value in outputs:
        if not (value is None or isinstance(value, (np.ndarray, list, dict))):
            raise TypeError(f"an output is a {type(value).__name__}, not a value onnxkit returns")


class _SizeWatch:
    """A trace callback noting the first node whose result is over ``max_tensor_bytes``
    and several times the largest feed: that kernel allocated data-sized memory without
    ``check_allocation``."""

    def __init__(self, limit: int, feeds: dict | None):
        import numpy as np

        biggest = max((v.nbytes for v in (feeds or {}).values() if isinstance(v, np.ndarray)), default=0)
        self.limit = max(limit, 4 * biggest)
        self.finding: str | None = None

    def __call__(self, event) -> None:
        import numpy as np

        if self.finding is not None:
            return
        for value in event.outputs:
            values = value if isinstance(value, list) else [value]
            for v in values:
                if isinstance(v, np.ndarray) and v.nbytes > self.limit:
                    self.finding = (f"node {event.node.name!r} ({event.node.op_type}) in "
                                    f"{event.path or 'main graph'!r} returned {v.dtype}"
                                    f"{list(v.shape)} = {v.nbytes:,} bytes, over {self.limit:,} (the "
                                    f"larger of max_tensor_bytes and 4x the largest feed; "
                                    f"kernel {event.kernel})")


def _prepare_folder(root: str, case: Case) -> str:
    """model.onnx plus bait: a data file inside, a secret outside, a symlink leaving."""
    folder = tempfile.mkdtemp(dir=root)
    with open(os.path.join(folder, "data.bin"), "wb") as f:
        f.write(bytes(range(256)) * 16)
    secret = os.path.join(root, "secret.bin")
    if not os.path.exists(secret):
        with open(secret, "wb") as f:
            f.write(b"\x7fSECRET" * 512)
    os.symlink(secret, os.path.join(folder, "link.bin"))
    os.symlink(os.path.join(folder, "loop.bin"), os.path.join(folder, "loop.bin"))
    path = os.path.join(folder, "model.onnx")
    with open(path, "wb") as f:
        f.write(case.model if isinstance(case.model, bytes) else case.model.encode())
    return path


def execute(case: Case, soft_timeout: float | None, watch: _Watch | None = None,
            root: str | None = None) -> Outcome:
    """Plan and run one case here, in this process."""
    import shutil

    import onnxkit
    from onnxkit import errors

    model: Any = case.model
    folder = None
    if case.via_path:
        path = _prepare_folder(root or tempfile.gettempdir(), case)
        folder = os.path.dirname(path)
        model = path
    if watch is not None:
        watch.folder = os.path.realpath(folder) if folder else None
        watch.events = []
    outcome = Outcome("ok")
    sizes = None
    if watch is not None:
        _limit_memory()
    start = time.monotonic()
    if soft_timeout:
        signal.setitimer(signal.ITIMER_REAL, soft_timeout)
    try:
        if watch is not None:
            watch.armed = True
        sizes = _SizeWatch(case.limits[0], case.feeds)
        sess = onnxkit.Session(model, case.executor, limits=onnxkit.Limits(*case.limits),
                               level=case.level, trace=sizes)
        if case.feeds is not None:
            _check_result(sess.run(None, case.feeds))
        if sizes.finding is not None:
            outcome = Outcome("memory", "oversized value", sizes.finding)
    except BaseException as exc:  # classify everything, including Hang
        if watch is not None:
            watch.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        kind, name, text = _classify(exc, errors)
        outcome = Outcome(kind, name, str(exc)[:4000], text if kind != "error" else "")
        if sizes is not None and sizes.finding is not None and kind == "error":
            outcome = Outcome("memory", "oversized value", sizes.finding, text)
    finally:
        if watch is not None:
            watch.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
    outcome.elapsed = time.monotonic() - start
    if watch is not None and watch.events:
        outcome = Outcome("escape", outcome.kind, f"forbidden actions while handling the model "
                          f"(outcome otherwise {outcome.kind}: {outcome.message[:300]})",
                          outcome.detail, outcome.elapsed, list(watch.events))
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
    return outcome


def _on_timer(signum, frame):
    raise Hang("the case ran past its time bound")


def _warm_up() -> None:
    """Import everything a run may import, so lazy imports don't look like escapes."""
    import numpy as np

    import onnxkit
    from onnxkit.ops import load_reference_kernels
    from tests.hostile import probe, seeds  # noqa: F401  (probe registers test.hostile::Probe)

    load_reference_kernels()
    for seed in seeds.SEEDS.values():
        for level in (0, 3):
            try:
                onnxkit.Session(seed.bytes(), level=level).run(None, seed.feeds())
            except Exception:  # noqa: BLE001  (warm-up only: the fuzzers judge outcomes)
                pass
    for name in ("arith", "conv_pool", "norms", "einsum_matmul"):  # numba's lazy imports
        try:
            onnxkit.Session(seeds.SEEDS[name].bytes(), "cpu").run(None, seeds.SEEDS[name].feeds())
        except Exception:  # noqa: BLE001  (warm-up only)
            pass
    image = seeds.SEEDS["image"]
    for garbage in (b"GIF89a" + bytes(20), b"\xff\xd8\xff" + bytes(20), bytes(range(64))):
        try:  # unknown formats make PIL import all its plugins (once)
            onnxkit.Session(image.bytes()).run(None, {"data": np.frombuffer(garbage, np.uint8)})
        except onnxkit.OnnxkitError:
            pass


def _limit_memory() -> None:
    import resource

    with open("/proc/self/statm") as f:
        vm = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = vm + MEMORY_HEADROOM
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def worker() -> None:
    proto_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints go to stderr, never into the protocol
    proto_in = os.fdopen(os.dup(0), "rb")
    _warm_up()
    signal.signal(signal.SIGALRM, _on_timer)
    watch = _Watch()
    sys.addaudithook(watch)
    root = os.path.realpath(os.environ.get("ONNXKIT_FUZZ_ROOT") or tempfile.mkdtemp(prefix="onnxkit-fuzz-"))
    watch.sandbox_root = root
    _send(proto_out, "ready")
    fd = proto_in.fileno()
    while True:
        header = _read_exact(fd, 8, None)
        if header is None:
            break
        case, soft_timeout = pickle.loads(_read_exact(fd, struct.unpack("<Q", header)[0], None))
        _send(proto_out, execute(case, soft_timeout, watch, root))
    import shutil

    shutil.rmtree(root, ignore_errors=True)


def replay(path: str) -> None:
    with open(path, "rb") as f:
        case = pickle.load(f)
    print(repr(case))
    outcome = execute(case, None, None, tempfile.mkdtemp())
    print(outcome.kind, outcome.error_type, outcome.message)
    print(outcome.detail)


if __name__ == "__main__":
    # run from the imported module, so pickled Case/Outcome name tests.hostile.sandbox
    from tests.hostile import sandbox as _module

    if sys.argv[1:2] == ["--worker"]:
        _module.worker()
    elif sys.argv[1:2] == ["--replay"]:
        _module.replay(sys.argv[2])
    else:
        print(__doc__)
