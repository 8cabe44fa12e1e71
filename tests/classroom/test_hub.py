"""The classroom end to end: JupyterHub on a free 127.0.0.1 port, five students log in
over HTTP, their servers start, each runs notebook 01 through the Jupyter server's REST
and kernel APIs, one submits an assignment that the teacher collects and grades; then
everything is stopped and no process the hub started is left."""

from __future__ import annotations

import re
import socket
from concurrent.futures import ThreadPoolExecutor

import nbformat
import pytest

pytest.importorskip("jupyterhub", reason="the classroom extra: pip install -e '.[classroom]'")
pytest.importorskip("nbgrader", reason="the classroom extra: pip install -e '.[classroom]'")

from exercises.classroom.hub import PROXY, Classroom  # noqa: E402
from exercises.nbgrader_course import ROOT, grade, nbgrader, scores  # noqa: E402
from tests.classroom.hub_client import Student  # noqa: E402

if not PROXY.exists():
    pytest.skip(f"no {PROXY}: `make test` installs it (npm install in exercises/classroom)",
                allow_module_level=True)

USERS = [f"student{i}" for i in range(1, 6)]
PASSWORD = "a-shared-classroom-secret"
ASSIGNMENT = "ex3_text"
NOTEBOOK_01 = "notebooks/01-first-model.ipynb"


def _solved(release_nb: dict, source: nbformat.NotebookNode) -> dict:
    (code,) = [c.source for c in source.cells if c.metadata.get("nbgrader", {}).get("solution")]
    for cell in release_nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("solution"):
            cell["source"] = re.sub(r"^\s*### (BEGIN|END) SOLUTION\n", "", code, flags=re.M)
    return release_nb


def _answers(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    room = Classroom(tmp_path_factory.mktemp("hub"), tmp_path_factory.mktemp("course"), USERS, PASSWORD,
                     assignments=[ASSIGNMENT])
    assert room.prepare() == [ASSIGNMENT]
    room.start()
    try:
        yield room
    finally:
        room.stop()


def _a_students_session(room: Classroom, name: str) -> tuple[Student, list[dict]]:
    student = Student(room.url, name, PASSWORD)
    student.log_in()
    student.start_server()
    student.wait_for_server()
    home = {item["name"] for item in student.api("GET", "api/contents").json()["content"]}
    assert {ASSIGNMENT, "notebooks"} <= home, f"{name}'s home: {home}"
    return student, student.run_notebook(NOTEBOOK_01)


def test_five_students_a_submission_and_a_clean_stop(classroom):
    room = classroom
    with ThreadPoolExecutor(len(USERS)) as pool:
        sessions = list(pool.map(lambda name: _a_students_session(room, name), USERS))

    source = nbformat.read(room.course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    cells = [c for c in nbformat.read(ROOT / NOTEBOOK_01, as_version=4).cells if c.cell_type == "code"]
    raises = ["NBVAL_RAISES_EXCEPTION" in c.source for c in cells]   # as nbval runs it in CI
    for student, replies in sessions:
        assert len(replies) == len(cells), student.name
        assert [r["status"] for r in replies] == ["error" if r else "ok" for r in raises], \
            f"{student.name}: {[(r['status'], r['ename']) for r in replies]}"

    first, _ = sessions[0]
    path = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
    mine = first.api("GET", f"api/contents/{path}").json()["content"]
    saved = first.api("PUT", f"api/contents/{path}", json={"type": "notebook", "format": "json",
                                                           "content": _solved(mine, source)})
    assert saved.status_code == 200, saved.text
    submitted = first.submit(ASSIGNMENT)
    assert any(a.get("status") == "submitted" and a.get("student_id") == first.name
               for a in submitted["value"]), submitted

    nbgrader(room.course, "collect", ASSIGNMENT)
    assert [p.name for p in (room.course / "submitted").iterdir()] == [first.name]
    assert grade(room.course, ASSIGNMENT) == {}
    assert scores(room.course, ASSIGNMENT) == {first.name: {"task3_1": 1.0, "task3_2": 2.0, "total": 3.0}}

    started = room.processes()
    names = sorted(p.name() for p in started)
    assert names.count("jupyterhub-sing") + names.count("python") >= len(USERS), names
    assert room.stop() == [], "processes that had to be ended by force"
    assert [p.pid for p in started if p.is_running() and p.status() != "zombie"] == []
    assert not _answers(room.port)
