"""Start the classroom: JupyterHub on this machine, serving the course to a class.

    python -m exercises.classroom.hub --users alice,bob,carol --password a-shared-secret

(``make classroom`` does it, after ``make assignments``.) Students open
http://127.0.0.1:8000, log in with their name and the shared password, and get their
own server with the student release and the course notebooks. The hub's state (its
database, the students' homes, nbgrader's exchange) lives in ``.cache/classroom``.

Teacher's side, with the hub running: ``nbgrader collect <assignment>`` in the course
folder (build/course) brings the submissions in, then
``python -m exercises.nbgrader_course grade build/course <assignment>``.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import requests

from exercises.nbgrader_course import ROOT, environment, nbgrader, release, write_course

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "jupyterhub_config.py"
PROXY = HERE / "node_modules" / ".bin" / "configurable-http-proxy"
VENV_BIN = Path(sys.executable).parent


class ClassroomError(RuntimeError):
    """The hub could not start or stop as asked; the message says why."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Classroom:
    """A JupyterHub for ``users`` (all on 127.0.0.1), its state in ``state``, the course
    (nbgrader's folder) in ``course``. ``start()``, then ``stop()``, which ends every
    process the hub started and says if one would not end."""

    def __init__(self, state: Path, course: Path, users: list[str], password: str,
                 port: int | None = None, assignments: list[str] | None = None):
        if len(password) < 8:
            raise ClassroomError("the shared password needs at least 8 characters")
        self.state, self.course, self.users, self.password = state.resolve(), course.resolve(), users, password
        self.port = port or free_port()
        self.assignments = assignments
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        self.log_path = self.state / "jupyterhub.log"

    @property
    def exchange(self) -> Path:
        return self.state / "exchange"

    def prepare(self) -> list[str]:
        """The student release of the assignments that have none yet (nbgrader
        generate_assignment; `make assignments` remakes them all), put in the exchange
        where students fetch and submit (nbgrader release_assignment); the assignments."""
        if not PROXY.exists():
            raise ClassroomError(f"no {PROXY}: run `npm ci` in {HERE} (make venv does)")
        self.exchange.mkdir(parents=True, exist_ok=True)
        self.exchange.chmod(0o777)  # nbgrader's exchange: every student writes there
        names = write_course(self.course, self.exchange)
        chosen = self.assignments or names
        missing = [n for n in chosen if not (self.course / "release" / n / f"{n}.ipynb").exists()]
        if missing:
            release(self.course, missing, exchange=self.exchange)
        for name in chosen:
            nbgrader(self.course, "release_assignment", name, "--force")
        return chosen

    def start(self, timeout: float = 120) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        env = environment()
        env.update({
            "CLASSROOM_STATE": str(self.state), "CLASSROOM_RELEASE": str(self.course / "release"),
            "CLASSROOM_NOTEBOOKS": str(ROOT / "notebooks"), "CLASSROOM_EXCHANGE": str(self.exchange),
            "CLASSROOM_VENV_BIN": str(VENV_BIN), "CLASSROOM_PYTHONPATH": str(ROOT),
            "CLASSROOM_PORT": str(self.port), "CLASSROOM_HUB_PORT": str(free_port()),
            "CLASSROOM_PROXY_API_PORT": str(free_port()), "CLASSROOM_PROXY": str(PROXY),
            "CLASSROOM_PASSWORD": self.password, "CLASSROOM_USERS": ",".join(self.users),
        })
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([str(VENV_BIN / "jupyterhub"), "-f", str(CONFIG)],
                                            cwd=self.state, env=env, stdout=log, stderr=log,
                                            start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ClassroomError(f"JupyterHub ended (exit status {self.process.returncode}):\n{self.log()}")
            try:
                if requests.get(f"{self.url}/hub/api", timeout=5).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.5)
        self.stop()
        raise ClassroomError(f"JupyterHub did not answer at {self.url} in {timeout} s:\n{self.log()}")

    def log(self, tail: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-tail:] if self.log_path.exists() else ""

    def processes(self) -> list[psutil.Process]:
        """The hub and every process under it (the proxy, the servers, their kernels)."""
        if self.process is None:
            return []
        try:
            hub = psutil.Process(self.process.pid)
            return [hub, *hub.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def stop(self, timeout: float = 60) -> list[str]:
        """Stop the hub (it stops the servers and the proxy), then end any of its processes
        still running, by their ids; those that had to be ended, as ``"pid name"``."""
        started = self.processes()
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        _, alive = psutil.wait_procs(started, timeout=10)
        forced = [f"{p.pid} {p.name()}" for p in alive if p.is_running()]
        for proc in alive:
            proc.kill()
        psutil.wait_procs(alive, timeout=10)
        return forced


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m exercises.classroom.hub", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", default="student1,student2,student3,student4,student5",
                        help="the class, comma-separated (default: student1..student5)")
    parser.add_argument("--password", default=os.environ.get("CLASSROOM_PASSWORD", "onnxkit-classroom"),
                        help="the shared password (or CLASSROOM_PASSWORD)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--course", type=Path, default=ROOT / "build" / "course")
    parser.add_argument("--state", type=Path, default=ROOT / ".cache" / "classroom")
    args = parser.parse_args(argv)
    room = Classroom(args.state, args.course, args.users.split(","), args.password, args.port)
    try:
        names = room.prepare()
        room.start()
    except (ClassroomError, RuntimeError) as err:
        print(err, file=sys.stderr)
        return 1
    print(f"the classroom is at {room.url}: users {args.users}, assignments {', '.join(names)}; "
          f"Ctrl-C stops it (log: {room.log_path})")
    try:
        room.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        room.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
