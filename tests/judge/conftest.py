"""A real HTTP server on loopback that speaks the OpenAI chat-completions protocol.

It plays scripted judges.  A test tags each group's problem text with ``[[tag]]``;
the server looks the tag up in its scripts and plays the next action for it
(the last action repeats).  Actions:

* ``("json", obj)``                 -- 200, the completion text is ``json.dumps(obj)``
* ``("text", s)``                   -- 200, the completion text is ``s``
* ``("status", code, headers, body)`` -- that status, headers and raw body
* ``("sleep", seconds, action)``    -- wait, then play ``action``
* ``("gate", name, action)``        -- hold the request until the test opens gate ``name``
  (:meth:`ScriptedJudge.open_gate`), then play ``action``: tests wait on events, not on time
* ``("drop",)``                     -- close the connection without answering
* ``("raw", bytes)``                -- 200 with a raw (non chat-completion) body

Only 127.0.0.1 with an ephemeral port is ever used.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

_TAG = re.compile(r"\[\[(\w+)\]\]")


class ScriptedJudge:
    def __init__(self) -> None:
        self.scripts: dict[str, list[tuple]] = {}
        self.calls: dict[str, int] = {}
        self.log: list[dict] = []  # one entry per request: tag, t, body, headers
        self.models = ["judge-model"]
        self.required_key: str | None = None
        self.reject_response_format = False
        self.reject_params: set[str] = set()  # request keys answered with a 400 naming them
        self.inflight = 0
        self.max_inflight = 0
        self.lock = threading.Lock()
        self.changed = threading.Condition(self.lock)  # notified on every arrival and departure
        self.gates: dict[str, threading.Event] = {}
        self.server: ThreadingHTTPServer | None = None
        self.base_url = ""

    def script(self, tag: str, *actions: tuple) -> None:
        self.scripts[tag] = list(actions)

    def gate(self, name: str) -> threading.Event:
        with self.lock:
            return self.gates.setdefault(name, threading.Event())

    def open_gate(self, name: str) -> None:
        self.gate(name).set()

    def wait_until(self, predicate, timeout: float = 60.0) -> bool:
        """Block until ``predicate(self)`` holds (re-checked on every arrival/departure), or ``timeout``."""
        with self.changed:
            return self.changed.wait_for(lambda: predicate(self), timeout=timeout)

    def requests_for(self, tag: str) -> list[dict]:
        return [e for e in self.log if e["tag"] == tag]

    def next_action(self, tag: str) -> tuple:
        with self.lock:
            k = self.calls.get(tag, 0)
            self.calls[tag] = k + 1
            acts = self.scripts.get(tag) or [("status", 404, {}, b'{"error": "no script"}')]
            return acts[min(k, len(acts) - 1)]


def _handler(judge: ScriptedJudge):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _send(self, code: int, body: bytes, headers: dict | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _auth_ok(self) -> bool:
            if judge.required_key is None:
                return True
            return self.headers.get("Authorization") == f"Bearer {judge.required_key}"

        def do_GET(self) -> None:
            if not self._auth_ok():
                return self._send(401, b'{"error": "bad key"}')
            if self.path == "/v1/models":
                data = {"object": "list", "data": [{"id": m, "object": "model"} for m in judge.models]}
                return self._send(200, json.dumps(data).encode())
            self._send(404, b'{"error": "not found"}')

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            user = " ".join(m.get("content", "") for m in body.get("messages", []))
            m = _TAG.search(user)
            tag = m.group(1) if m else ""
            with judge.lock:
                judge.log.append({"tag": tag, "t": time.perf_counter(), "body": body, "headers": dict(self.headers)})
                judge.inflight += 1
                judge.max_inflight = max(judge.max_inflight, judge.inflight)
                judge.changed.notify_all()
            try:
                if self.path != "/v1/chat/completions":
                    return self._send(404, b'{"error": "not found"}')
                if not self._auth_ok():
                    return self._send(401, b'{"error": "bad key"}')
                if judge.reject_response_format and "response_format" in body:
                    return self._send(400, b'{"error": "response_format is not supported"}')
                for param in sorted(judge.reject_params & set(body)):
                    msg = f"Unsupported parameter: '{param}' is not supported with this model."
                    return self._send(400, json.dumps({"error": {"message": msg}}).encode())
                self._play(judge.next_action(tag), body)
            finally:
                with judge.lock:
                    judge.inflight -= 1
                    judge.changed.notify_all()

        def _play(self, act: tuple, body: dict) -> None:
            kind = act[0]
            if kind == "sleep":
                time.sleep(act[1])
                return self._play(act[2], body)
            if kind == "gate":
                if not judge.gate(act[1]).wait(timeout=120):
                    raise TimeoutError(f"gate {act[1]!r} was never opened")
                return self._play(act[2], body)
            if kind == "drop":
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if kind == "status":
                return self._send(act[1], act[3] if len(act) > 3 else b"{}", act[2])
            if kind == "raw":
                return self._send(200, act[1])
            content = json.dumps(act[1]) if kind == "json" else act[1]
            reply = {
                "id": "cmpl-1",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}],
            }
            self._send(200, json.dumps(reply).encode())

    return Handler


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # the default backlog of 5 would refuse bursts of concurrent connections

    def handle_error(self, request, client_address) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)  # a client that gave up is expected here


@pytest.fixture
def judge_server():
    judge = ScriptedJudge()
    server = _QuietServer(("127.0.0.1", 0), _handler(judge))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    judge.server = server
    judge.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield judge
    server.shutdown()
    server.server_close()


@pytest.fixture
def closed_port_url():
    """A loopback URL where nothing listens (the port was bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/v1"
