"""The Zero to JupyterHub values (exercises/classroom/z2jh/config.yaml), checked without
a cluster: the chart's keys it uses, hub.config against JupyterHub's own classes (each
key a configurable trait, the authenticator one JupyterHub knows), and the students'
postStart command run in a scratch home, as the pod would run it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
pytest.importorskip("jupyterhub", reason="the classroom extra: pip install -e '.[classroom]'")

CONFIG = Path(__file__).resolve().parents[2] / "exercises" / "classroom" / "z2jh" / "config.yaml"
#: the chart's values this file may set (jupyterhub chart 4.x, values.schema.yaml)
CHART_KEYS = {
    "hub.config", "singleuser.image.name", "singleuser.image.tag", "singleuser.defaultUrl",
    "singleuser.cpu.limit", "singleuser.cpu.guarantee", "singleuser.memory.limit",
    "singleuser.memory.guarantee", "singleuser.storage.capacity", "singleuser.storage.extraVolumes",
    "singleuser.storage.extraVolumeMounts", "singleuser.extraEnv", "singleuser.lifecycleHooks",
    "cull.enabled", "cull.timeout",
}
OPEN_ENDED = ("hub.config", "singleuser.extraEnv", "singleuser.lifecycleHooks",
              "singleuser.storage.extraVolumes", "singleuser.storage.extraVolumeMounts")


def values() -> dict:
    return yaml.safe_load(CONFIG.read_text())


def leaves(tree: dict, prefix: str = "") -> set[str]:
    found = set()
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and path not in OPEN_ENDED:
            found |= leaves(value, path + ".")
        else:
            found.add(path)
    return found


def test_only_the_charts_keys():
    assert leaves(values()) <= CHART_KEYS, leaves(values()) - CHART_KEYS


def test_hub_config_is_jupyterhubs_own():
    from jupyterhub.app import JupyterHub
    from jupyterhub.auth import Authenticator
    from jupyterhub.authenticators.shared import SharedPasswordAuthenticator
    from jupyterhub.spawner import Spawner

    classes = {"JupyterHub": JupyterHub, "Authenticator": Authenticator, "Spawner": Spawner,
               "SharedPasswordAuthenticator": SharedPasswordAuthenticator}
    config = values()["hub"]["config"]
    for section, settings in config.items():
        traits = classes[section].class_traits(config=True)
        for key in settings:
            assert key in traits, f"{section}.{key} is not a setting of {section}"
    hub = JupyterHub()
    hub.authenticator_class = config["JupyterHub"]["authenticator_class"]
    assert hub.authenticator_class is SharedPasswordAuthenticator
    assert len(config["SharedPasswordAuthenticator"]["user_password"]) >= 8   # the class's minimum


def test_the_post_start_command_gives_a_home_the_course(tmp_path):
    opt = tmp_path / "opt"
    (opt / "build" / "course" / "release" / "ex3_text").mkdir(parents=True)
    (opt / "build" / "course" / "release" / "ex3_text" / "ex3_text.ipynb").write_text("{}")
    (opt / "notebooks").mkdir()
    (opt / "notebooks" / "01-first-model.ipynb").write_text("{}")
    home = tmp_path / "home"
    home.mkdir()
    (home / "ex3_text").mkdir()
    (home / "ex3_text" / "ex3_text.ipynb").write_text("my work")           # kept as it is
    command = values()["singleuser"]["lifecycleHooks"]["postStart"]["exec"]["command"]
    command = [part.replace("/opt/onnxkit", str(opt)) for part in command]
    subprocess.run(command, env={"HOME": str(home), "PATH": "/usr/bin:/bin"}, check=True, timeout=30)
    assert (home / "ex3_text" / "ex3_text.ipynb").read_text() == "my work"
    assert (home / "notebooks" / "01-first-model.ipynb").exists()
    config = {}

    class C:
        def __getattr__(self, name):
            return config.setdefault(name, type("Section", (), {})())
    exec((home / ".jupyter" / "nbgrader_config.py").read_text(), {"get_config": C})
    assert config["Exchange"].root == "/srv/nbgrader/exchange"
    assert config["CourseDirectory"].course_id == "onnxkit"
    mounts = values()["singleuser"]["storage"]["extraVolumeMounts"]
    assert [m["mountPath"] for m in mounts] == ["/srv/nbgrader/exchange"]
