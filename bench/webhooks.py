#!/usr/bin/env python3
"""Webhooks benchmark: commit → first attempt received, at a steady rate of deliveries, against the app as in
production (gunicorn 2 workers x 4 threads, RQ workers on the webhooks queue) on PostgreSQL and Redis, with a
local receiver that verifies every delivery's signature with the `standardwebhooks` package.

    python bench/webhooks.py [--rate 50] [--seconds 30] [--workers 2] [--worker-class fork|simple]

Deliveries are made by POST /webhook-endpoints/{uuid}/test, paced at --rate per second from 16 client threads:
each writes its delivery in its request's transaction (the outbox) like any event does. The latency is the
receiver's clock at arrival minus the delivery's `created_at` (the same machine's clock, written just before the
commit). It creates and drops its own database and runs a private redis-server; CPU is counted for the bench's own
processes (bench/checks.py's CpuMeter). Prints the figures; writes nothing into the repository.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import statistics
import subprocess
import threading
import time

from _venv import ROOT  # noqa: E402 (first: re-runs with .venv/bin/python)

import httpx  # noqa: E402
import psycopg  # noqa: E402

import _seed  # noqa: E402
from api_latency import free_port, stop, wait_ready  # noqa: E402
from checks import CpuMeter, pct, private_redis  # noqa: E402

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/"


def _serve(secret_conn, out_queue, ready) -> None:
    """The receiver, in a process of its own (so that the bench's client threads do not delay its clock): verifies
    each delivery with `standardwebhooks` and reports (webhook-id, arrival time, verified)."""
    import time as time_
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from standardwebhooks.webhooks import Webhook as Verifier
    state = {"secret": None}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            at = time_.time()
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            if state["secret"] is None and secret_conn.poll():
                state["secret"] = secret_conn.recv()
            try:
                Verifier(state["secret"]).verify(body, headers)
                ok = True
            except Exception:  # noqa: BLE001 - counted
                ok = False
            out_queue.put((headers.get("webhook-id", ""), at, ok))
            self.send_response(200 if ok else 400)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    ready.put(server.server_address[1])
    server.serve_forever()


class Receiver:
    def __init__(self) -> None:
        import multiprocessing as mp
        self.arrived: dict[str, float] = {}
        self.bad = 0
        parent, child = mp.Pipe()
        self._secret, self._queue, ready = parent, mp.Queue(), mp.Queue()
        self.proc = mp.Process(target=_serve, args=(child, self._queue, ready), daemon=True)
        self.proc.start()
        self.url = f"http://127.0.0.1:{ready.get(timeout=10)}/hooks"

    def set_secret(self, secret: str) -> None:
        self._secret.send(secret)

    def collect(self) -> int:
        import queue as queue_mod
        while True:
            try:
                wid, at, ok = self._queue.get_nowait()
            except queue_mod.Empty:
                return len(self.arrived)
            self.arrived.setdefault(wid, at)
            self.bad += 0 if ok else 1

    def stop(self) -> None:
        self.proc.terminate()


def start_stack(env: dict, port: int, workers: int, worker_class: str) -> list:
    def spawn(cmd: list[str]):
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    bin_ = ROOT / ".venv" / "bin"
    procs = [spawn([str(bin_ / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "4",
                    "wsgi:app"])]
    procs += [spawn([str(bin_ / "flask"), "jobs", "worker", "--queue", "webhooks", "--worker-class", worker_class])
              for _ in range(workers)]
    wait_ready(port, "/healthz", procs[0])
    return procs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-class", choices=("fork", "simple"), default="fork")
    args = parser.parse_args()
    name = f"screening_bench_hooks_{os.getpid()}"
    url = PG + name
    _seed.recreate_database(url)
    redis_proc, redis_url = private_redis()
    env = {**_seed.app_env(url, redis_url), "DEFAULT_API_RATE_LIMIT": "10000000", "RQ_QUEUE_PREFIX": "benchhooks:",
           "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8"}
    _seed._flask(["db", "upgrade"], env)
    boot = json.loads(_seed._flask(["accounts", "bootstrap", "--name", "Bench", "--email", "hooks@example.com",
                                    "--password", "correct-horse-42", "--credit", "1000"], env))
    receiver = Receiver()
    port = free_port()
    procs = []
    try:
        procs = start_stack(env, port, args.workers, args.worker_class)
        base = f"http://127.0.0.1:{port}/api/v1"
        headers = {"Authorization": f"Bearer {boot['api_key']}"}
        client = httpx.Client(base_url=base, headers=headers, timeout=30)
        hook = client.post("/webhook-endpoints", json={"url": receiver.url, "event_types": ["check.completed"]}).json()
        receiver.set_secret(hook["data"]["secret"])
        endpoint = hook["data"]["uuid"]
        for _ in range(10):  # warm-up: workers and web processes
            client.post(f"/webhook-endpoints/{endpoint}/test")
        time.sleep(2)
        receiver.collect()
        warm = set(receiver.arrived)
        total = int(args.rate * args.seconds)
        meter = CpuMeter(procs, redis_proc.pid, name).__enter__()
        started = time.perf_counter()

        local = threading.local()

        def send(i: int) -> int:
            due = started + i / args.rate
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            if not hasattr(local, "client"):
                local.client = httpx.Client(base_url=base, headers=headers, timeout=30)
            return local.client.post(f"/webhook-endpoints/{endpoint}/test").status_code
        with cf.ThreadPoolExecutor(16) as pool:
            codes = list(pool.map(send, range(total)))
        sent_in = time.perf_counter() - started
        deadline = time.time() + 120
        while receiver.collect() - len(warm) < total and time.time() < deadline:
            time.sleep(0.1)
        meter.__exit__(None, None, None)
        with psycopg.connect(_seed.plain_url(url)) as conn:
            rows = conn.execute("SELECT webhook_id, extract(epoch from created_at) FROM webhook_deliveries").fetchall()
            attempts = conn.execute("SELECT count(*) FROM webhook_attempts").fetchone()[0]
        lat = [(receiver.arrived[wid] - float(created)) * 1000 for wid, created in rows
               if wid in receiver.arrived and wid not in warm]
        print(f"deliveries: {total} at {total / sent_in:.1f}/s (asked {args.rate:g}/s); API answers "
              f"{sorted(set(codes))}; received {len(lat)}; signatures failing verification {receiver.bad}; "
              f"attempts logged {attempts}")
        if lat:
            print(f"commit -> first attempt received: p50 {statistics.median(lat):.0f} ms, p95 {pct(lat, 95):.0f} ms, "
                  f"p99 {pct(lat, 99):.0f} ms, max {max(lat):.0f} ms")
        cpu = {k: v * 1000 / max(1, total) for k, v in meter.seconds.items()}
        print("CPU per delivery (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items())
              + f"; total {sum(cpu.values()):.1f}")
    finally:
        for p in procs:
            stop(p)
        stop(redis_proc)
        receiver.stop()
        with psycopg.connect(_seed.admin_url(url), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
