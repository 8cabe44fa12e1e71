"""A student of the classroom, over HTTP only: log in to JupyterHub with the form, get a
token, start their server, then use the Jupyter server's REST and kernel APIs (a
notebook's cells run one by one over the kernel's websocket) and nbgrader's
assignment API (submit). Every wait is bounded."""

from __future__ import annotations

import json
import time
import uuid

import requests
import websocket


class Student:
    def __init__(self, hub_url: str, name: str, password: str):
        self.hub_url, self.name, self.password = hub_url, name, password
        self.token: str | None = None
        self.http = requests.Session()

    # --- the hub -------------------------------------------------------------------------
    def log_in(self) -> None:
        self.http.get(f"{self.hub_url}/hub/login", timeout=30).raise_for_status()
        xsrf = self.http.cookies.get("_xsrf")
        answer = self.http.post(f"{self.hub_url}/hub/login", timeout=30, allow_redirects=False,
                                data={"username": self.name, "password": self.password, "_xsrf": xsrf})
        assert answer.status_code == 302, f"{self.name}: login answered {answer.status_code}"
        xsrf = self.http.cookies.get("_xsrf")  # a new one, for the logged-in session
        made = self.http.post(f"{self.hub_url}/hub/api/users/{self.name}/tokens", timeout=30,
                              headers={"X-XSRFToken": xsrf}, json={"note": "classroom test", "expires_in": 3600})
        assert made.status_code == 201, f"{self.name}: token answered {made.status_code}: {made.text}"
        self.token = made.json()["token"]

    @property
    def auth(self) -> dict:
        return {"Authorization": f"token {self.token}"}

    def start_server(self) -> None:
        answer = requests.post(f"{self.hub_url}/hub/api/users/{self.name}/server", headers=self.auth, timeout=60)
        assert answer.status_code in (201, 202), f"{self.name}: spawn answered {answer.status_code}: {answer.text}"

    def wait_for_server(self, timeout: float = 240) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            user = requests.get(f"{self.hub_url}/hub/api/users/{self.name}", headers=self.auth, timeout=30).json()
            server = user.get("servers", {}).get("")
            if server and server.get("ready"):
                return
            time.sleep(1)
        raise AssertionError(f"{self.name}'s server was not ready in {timeout} s")

    # --- the student's Jupyter server ------------------------------------------------------
    def api(self, method: str, path: str, **kwargs) -> requests.Response:
        return requests.request(method, f"{self.hub_url}/user/{self.name}/{path}", headers=self.auth,
                                timeout=kwargs.pop("timeout", 60), **kwargs)

    def run_notebook(self, path: str, timeout: float = 300) -> list[dict]:
        """Run every code cell of the notebook at ``path`` (in the server's files) in a new
        kernel; per cell, its reply's status, and the error's name if it raised."""
        content = self.api("GET", f"api/contents/{path}").json()["content"]
        kernel = self.api("POST", "api/kernels", json={"name": "python3"}).json()["id"]
        ws_url = self.hub_url.replace("http://", "ws://") + f"/user/{self.name}/api/kernels/{kernel}/channels"
        sock = websocket.create_connection(ws_url, header=[f"Authorization: token {self.token}"], timeout=timeout)
        replies = []
        try:
            deadline = time.monotonic() + timeout
            for cell in content["cells"]:
                if cell["cell_type"] != "code":
                    continue
                source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
                replies.append(self._execute(sock, source, deadline))
        finally:
            sock.close()
            self.api("DELETE", f"api/kernels/{kernel}")
        return replies

    def _execute(self, sock, code: str, deadline: float) -> dict:
        msg_id = uuid.uuid4().hex
        sock.send(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": self.name,
                       "session": uuid.uuid4().hex, "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        while time.monotonic() < deadline:
            msg = json.loads(sock.recv())
            if msg.get("parent_header", {}).get("msg_id") == msg_id and msg["msg_type"] == "execute_reply":
                return {"code": code, "status": msg["content"]["status"], "ename": msg["content"].get("ename")}
        raise AssertionError(f"{self.name}: a cell did not finish in time:\n{code[:200]}")

    def submit(self, assignment: str, course: str = "onnxkit") -> list:
        """nbgrader's Assignments tab: submit ``assignment`` from the server's home."""
        answer = self.api("POST", "assignments/submit", data={"course_id": course, "assignment_id": assignment},
                          timeout=120)
        assert answer.status_code == 200, f"{self.name}: submit answered {answer.status_code}: {answer.text[:500]}"
        return answer.json()
