"""JupyterHub's configuration of the onnxkit classroom on one machine (make classroom).

exercises/classroom/hub.py starts the hub with this file and says where things are in
CLASSROOM_* variables. Every address is 127.0.0.1. Students log in with a shared
password (SharedPasswordAuthenticator); each gets a server of their own, run as a local
process in their own home folder (SimpleLocalProcessSpawner: no system users needed, and
no isolation between students: for one machine, not for a real class, see
docs/teaching.md for Kubernetes). Before a server starts, its home gets a copy of the
student release and of the course notebooks, and nbgrader's settings for the exchange.
"""

import os
import shutil
from pathlib import Path

c = get_config()  # noqa: F821 (JupyterHub's config loader defines it)

env = os.environ
state = Path(env["CLASSROOM_STATE"])
release = Path(env["CLASSROOM_RELEASE"])
notebooks = Path(env["CLASSROOM_NOTEBOOKS"])
exchange = Path(env["CLASSROOM_EXCHANGE"])
venv_bin = Path(env["CLASSROOM_VENV_BIN"])

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = int(env["CLASSROOM_PORT"])
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(env["CLASSROOM_HUB_PORT"])
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env['CLASSROOM_PROXY_API_PORT']}"
c.ConfigurableHTTPProxy.command = [env["CLASSROOM_PROXY"]]
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True  # the students' servers stop with the hub
c.JupyterHub.cleanup_proxy = True

c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = env["CLASSROOM_PASSWORD"]
c.Authenticator.allowed_users = set(env["CLASSROOM_USERS"].split(","))

c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(state / "home" / "{username}")
c.Spawner.ip = "127.0.0.1"
c.Spawner.cmd = [str(venv_bin / "jupyterhub-singleuser")]
c.Spawner.args = ["--ServerApp.allow_root=True"]  # the machine's only user may be root
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 180
c.Spawner.http_timeout = 180
c.Spawner.environment = {
    "PATH": os.pathsep.join((str(venv_bin), env.get("PATH", ""))),
    "PYTHONPATH": env["CLASSROOM_PYTHONPATH"],      # the checks: exercises/
    "ONNX_HOME": env["ONNX_HOME"],
    "NUMBA_CACHE_DIR": env["NUMBA_CACHE_DIR"],
    "MPLBACKEND": "Agg",
}

NBGRADER_CONFIG = """c = get_config()
c.Exchange.root = {exchange!r}
c.CourseDirectory.course_id = "onnxkit"
c.CourseDirectory.student_id = {student!r}   # not the process's user (all one user here)
"""


def give_the_course(spawner):
    """A new home gets the student release (each assignment a folder), the course
    notebooks, and nbgrader's exchange settings; a home in use is left as it is."""
    home = Path(spawner.home_dir)
    home.mkdir(parents=True, exist_ok=True)
    for assignment in sorted(p for p in release.iterdir() if p.is_dir()):
        if not (home / assignment.name).exists():
            shutil.copytree(assignment, home / assignment.name)
    if not (home / "notebooks").exists():
        shutil.copytree(notebooks, home / "notebooks", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    config = home / ".jupyter" / "nbgrader_config.py"
    config.parent.mkdir(exist_ok=True)
    config.write_text(NBGRADER_CONFIG.format(exchange=str(exchange), student=spawner.user.name))


c.Spawner.pre_spawn_hook = give_the_course
