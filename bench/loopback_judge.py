"""A loopback OpenAI-compatible judge for the benchmarks: answers every chat completion after a
fixed latency with a valid partition of the solutions it was sent (odd- and even-numbered
solutions in two groups).  No model runs.

Run in its own process so that its CPU time is not charged to the process being measured::

    python bench/loopback_judge.py --latency 0.5     # prints "PORT <n>" then serves until killed
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_COUNT = re.compile(r"Below are (\d+) correct solutions")


def answer_for(n: int) -> dict:
    """The judge's reply for ``n`` solutions: odd-numbered ones in one group, even-numbered in another."""
    groups = [{"label": "odd", "members": list(range(1, n + 1, 2))}]
    if n > 1:
        groups.append({"label": "even", "members": list(range(2, n + 1, 2))})
    return {"groups": groups}


def serve(latency: float, port: int = 0) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def _send(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path.rstrip("/").endswith("/models"):
                return self._send(
                    200, json.dumps({"object": "list", "data": [{"id": "bench", "object": "model"}]}).encode()
                )
            self._send(404, b"{}")

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            user = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
            m = _COUNT.search(user)
            time.sleep(latency)
            content = json.dumps(answer_for(int(m.group(1)) if m else 1))
            reply = {"id": "bench", "object": "chat.completion", "model": body.get("model"),
                     "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                  "finish_reason": "stop"}]}
            self._send(200, json.dumps(reply).encode())

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 512  # the default backlog (5) refuses bursts of concurrent connections

    server = Server(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=0.5, help="seconds before each answer")
    args = ap.parse_args()
    server = serve(args.latency)
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        sys.stdin.read()  # serve until the parent closes our stdin (or kills us)
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
