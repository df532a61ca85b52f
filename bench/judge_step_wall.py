"""Wall time of one step's judge partitioning: serial vs concurrent vs overlapped vs cached.

A loopback server answers every chat-completion after a fixed latency (a stand-in
for a served judge; no model runs).  For G groups the script measures, in one run:

* serial       -- max_concurrency=1, the baseline
* concurrent   -- max_concurrency=G: all groups of the step in flight at once
* overlapped   -- submit_groups() then `work` seconds of other work (the old-log-prob pass),
                  then result(): only the time result() blocks is charged to the step
* cached       -- the same groups again (a resumed run / repeated groups)

and prints each as a ratio to the serial baseline.

    PYTHONPATH=$PWD python bench/judge_step_wall.py --groups 32 --latency 0.2 --work 0.5
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from verl_focal.partition.judge import JudgePartitioner


def serve(latency: float) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            time.sleep(latency)
            content = json.dumps({"groups": [{"label": "a", "members": [1, 2]}, {"label": "b", "members": [3, 4]}]})
            body = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256  # socketserver's default backlog (5) refuses bursts of connections

    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--groups", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.2, help="server seconds per request")
    ap.add_argument("--work", type=float, default=0.5, help="seconds of other work overlapped with judging")
    args = ap.parse_args()
    server = serve(args.latency)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"

    def groups(tag: str):
        return [(f"{tag} problem {g}", [f"solution {g}.{k} " * 50 for k in range(4)]) for g in range(args.groups)]

    def judge(conc: int) -> JudgePartitioner:
        return JudgePartitioner(base_url=url, model="bench", max_concurrency=conc, fallback="single", max_retries=0,
                                timeout_s=30.0)

    rows = {}
    with judge(1) as p:
        t = time.perf_counter()
        p.partition_groups(groups("serial"))
        rows["serial"] = time.perf_counter() - t
        assert p.pop_metrics()["judge/fallback_rate"] == 0
    with judge(args.groups) as p:
        t = time.perf_counter()
        p.partition_groups(groups("concurrent"))
        rows["concurrent"] = time.perf_counter() - t
        assert p.pop_metrics()["judge/fallback_rate"] == 0
        h = p.submit_groups(groups("overlap"))
        time.sleep(args.work)  # the old-log-prob pass would run here
        t = time.perf_counter()
        h.result()
        rows["overlapped (blocked)"] = time.perf_counter() - t
        assert p.pop_metrics()["judge/fallback_rate"] == 0
        t = time.perf_counter()
        p.partition_groups(groups("concurrent"))
        rows["cached"] = time.perf_counter() - t
        m = p.pop_metrics()
    server.shutdown()
    base = rows["serial"]
    print(f"{args.groups} groups, {args.latency:.3f} s per request, {args.work:.2f} s overlapped work")
    for name, s in rows.items():
        print(f"  {name:<22} {s:8.3f} s   ratio to serial {s / base:7.4f}")
    print(f"  cached step metrics: requests={m['judge/requests']:.0f} cache_hit_rate={m['judge/cache_hit_rate']:.2f}")


if __name__ == "__main__":
    main()
