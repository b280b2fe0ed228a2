"""Students work in JupyterLab: start a real Jupyter server on localhost (the one `jupyter lab`
starts), check it serves the JupyterLab page, then run a lab's code cells through a kernel it
starts (the kernel a student gets: the default "python3"), over the same REST and WebSocket
API the browser uses."""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

pytest.importorskip("jupyterlab", reason="students' JupyterLab (requirements.txt)")
pytest.importorskip("tilelang", reason="the lab's TileLang cells need tilelang (requirements.txt)")
import nbformat  # noqa: E402
from tornado.httpclient import HTTPRequest  # noqa: E402
from tornado.websocket import websocket_connect  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "labs" / "01_copy.ipynb"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port, token = free_port(), secrets.token_hex(16)
    root = tmp_path_factory.mktemp("jupyter")
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
                             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                             "--ServerApp.allow_root=True"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while True:
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
            break
        except OSError:
            if proc.poll() is not None or time.time() > deadline:
                proc.kill()
                pytest.fail(f"jupyter lab did not start: {proc.stderr.read().decode()[-2000:]}")
            time.sleep(0.5)
    yield base, token
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def api(base: str, token: str, path: str, method: str = "GET", body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{base}{path}", data=data, method=method,
                                     headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        text = response.read().decode()
        return json.loads(text) if text.strip().startswith(("{", "[")) else {"html": text}


async def execute_all(base: str, token: str, kernel_id: str, cells: list[str]) -> list[dict]:
    """Sends each cell as an execute_request; returns each reply's content, with its stdout."""
    url = base.replace("http", "ws") + f"/api/kernels/{kernel_id}/channels"
    conn = await websocket_connect(HTTPRequest(url, headers={"Authorization": f"token {token}"}))
    session, replies = uuid.uuid4().hex, []
    for source in cells:
        msg_id = uuid.uuid4().hex
        await conn.write_message(json.dumps({
            "header": {"msg_id": msg_id, "username": "student", "session": session, "msg_type": "execute_request",
                       "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell",
            "content": {"code": source, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        # The reply comes on the shell channel, the output on iopub: the two are not ordered, so a
        # print can arrive after the reply (seen in CI). The kernel's "idle" status on iopub comes
        # after every output of the request: wait for both.
        stdout, reply, idle = "", None, False
        while reply is None or not idle:
            msg = json.loads(await asyncio.wait_for(conn.read_message(), timeout=600))
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
                stdout += msg["content"]["text"]
            if msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
                idle = True
            if msg["msg_type"] == "execute_reply":
                reply = dict(msg["content"])
        replies.append({**reply, "stdout": stdout})
    conn.close()
    return replies


def test_jupyterlab_serves_its_page(server):
    base, token = server
    page = api(base, token, "/lab")
    assert "JupyterLab" in page["html"] or "jupyter-config-data" in page["html"]


def test_a_lab_runs_through_the_server(server):
    base, token = server
    kernel = api(base, token, "/api/kernels", "POST", {})
    assert kernel["name"] == "python3"
    nb = nbformat.read(str(LAB), as_version=4)
    cells = [f"import os; os.chdir({str(ROOT / 'labs')!r})"] + [c.source for c in nb.cells if c.cell_type == "code"]
    try:
        replies = asyncio.run(execute_all(base, token, kernel["id"], cells))
    finally:
        api(base, token, f"/api/kernels/{kernel['id']}", "DELETE")
    failed = [(cells[i][:60], r.get("ename"), r.get("evalue")) for i, r in enumerate(replies) if r["status"] != "ok"]
    assert not failed
    assert any("copy (TileLang): passed" in r["stdout"] for r in replies)
