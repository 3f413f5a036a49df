#!/usr/bin/env python3
"""Counts what one check costs the databases: SQL statements and Redis commands per launch and per run.

    python bench/_counts.py --api-key sk_... [--n 50] [--worker-class fork|simple]

Run by `bench/checks.py` (with its environment: the bench database and its own redis-server) before the stack
starts, so that nothing else touches that Redis while it counts. In this one process: launches through the Flask
test client (every before-request hook: rate limit, API key, idempotency), then the queued runs by the app's own
RQ worker class in burst mode (`app.jobs.make_worker`: its warm-up, pulse and RQ's bookkeeping included).

SQL statements are counted in the process (SQLAlchemy's `before_cursor_execute`: one per round trip, an
executemany counts once). Redis commands are counted by the server (MONITOR on a separate connection, this
process's db only, commands run by Lua scripts included), so what RQ and the rate limiter send inside pipelines
and scripts is counted as Redis executes it. The CPU of this process (all its threads) is given beside them: the
Python side of a launch (without gunicorn and HTTP) and of a run (RQ's bookkeeping included). A run is measured
as a burst over N queued jobs less a burst over none (the worker's own start and stop). A fork worker's work
horse is another process whose SQL is not seen here (the `checks` queue runs inline by default,
RQ_INLINE_QUEUES; Redis is counted either way). Prints one JSON object."""
from __future__ import annotations

import argparse
import json
import os
import re
import threading
import time
from collections import Counter

from _venv import ROOT  # noqa: F401 (first: re-runs with .venv/bin/python)

import redis  # noqa: E402


class RedisMonitor:
    """Counts the commands Redis runs on one db (MONITOR), by name; `mark()` waits until every command sent
    before it has been seen."""
    LINE = re.compile(r'^\d+\.\d+ \[(\d+) [^\]]*\] "([^"]+)"')

    def __init__(self, url: str):
        self.client = redis.Redis.from_url(url)
        self.db = self.client.connection_pool.connection_kwargs.get("db", 0)
        self.counts: Counter = Counter()
        self.lines: list[str] | None = None  # every command, while tracing
        self._seen_marks: set[str] = set()
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._ready = threading.Event()
        self._thread.start()
        self._ready.wait(5)

    def _run(self) -> None:
        with self.client.monitor() as m:
            self._ready.set()
            for entry in m.listen():
                if int(entry.get("db", -1)) != self.db:
                    continue
                words = entry["command"].split(" ", 2)
                if words[0].upper() == "ECHO" and len(words) > 1 and words[1].startswith("bench-mark-"):
                    with self._cond:
                        self._seen_marks.add(words[1])
                        self._cond.notify_all()
                    continue
                with self._cond:
                    self.counts[words[0].upper()] += 1
                    if self.lines is not None:
                        self.lines.append(entry["command"][:160])

    def mark(self) -> Counter:
        token = f"bench-mark-{time.monotonic_ns()}"
        self.client.echo(token)
        with self._cond:
            self._cond.wait_for(lambda: token in self._seen_marks, timeout=10)
            return Counter(self.counts)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--worker-class", choices=("fork", "simple"), default="fork")
    parser.add_argument("--profile", help="also write cProfile stats of the launches and runs to this prefix")
    parser.add_argument("--trace", help="also write every SQL statement and Redis command of one adhoc launch and "
                                        "one run to this file")
    args = parser.parse_args()

    from sqlalchemy import event

    from app import create_app, jobs
    from app.extensions import db

    app = create_app()
    statements: Counter = Counter()
    traced: list[str] | None = None
    with app.app_context():
        @event.listens_for(db.engine, "before_cursor_execute")
        def count(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001
            statements[statement.split(None, 1)[0].upper()] += 1
            if traced is not None:
                traced.append(" ".join(statement.split())[:2000])

        @event.listens_for(db.engine, "connect")
        def count_connect(dbapi_conn, record):  # noqa: ANN001
            statements["(new connection)"] += 1

        @event.listens_for(db.engine, "commit")
        def count_commit(conn):  # noqa: ANN001
            statements["COMMIT"] += 1

    monitor = RedisMonitor(app.config["REDIS_URL"])
    client = app.test_client()
    headers = {"Authorization": f"Bearer {args.api_key}"}
    program = client.post("/api/v1/programs", headers=headers, json={"program_name": "Counts"}).get_json()
    entity = client.post(f"/api/v1/programs/{program['data']['uuid']}/entities", headers=headers, json={
        "entity_type": "individual", "first_name": "Olga", "last_name": "Novak"}).get_json()["data"]["uuid"]
    def burst() -> None:
        jobs.make_worker(app, ["checks", "notify"], args.worker_class).work(burst=True)

    def launch(kind: str, i: int, idempotent: bool = False) -> None:
        extra = {"Idempotency-Key": f"bench-{kind}-{i}-{time.time_ns()}"} if idempotent else {}
        if kind == "adhoc":
            r = client.post("/api/v1/adhoc-checks", headers={**headers, **extra}, json={
                "check_types": ["pep_sanction_check"], "data": {"first_name": "Olga", "last_name": f"Novak{i}"}})
        else:
            r = client.post(f"/api/v1/entities/{entity}/checks", headers={**headers, **extra},
                            json={"check_types": ["pep_sanction_check"]})
        assert r.status_code == 202, r.get_data(as_text=True)

    def measure(fn, n: int) -> dict:
        sql_before, redis_before = Counter(statements), monitor.mark()
        cpu = time.process_time()
        fn()
        cpu = time.process_time() - cpu
        redis_after = monitor.mark()
        sql = Counter(statements)
        sql.subtract(sql_before)
        cmds = Counter(redis_after)
        cmds.subtract(redis_before)
        return {"sql": {k: v / n for k, v in sql.items() if v}, "redis": {k: v / n for k, v in cmds.items() if v},
                "cpu_ms": cpu / n * 1000}

    # warm: prices, the screening index, the first job of the worker
    launch("adhoc", -1)
    launch("entity", -1)
    burst()
    out = {"n": args.n, "worker_class": args.worker_class}
    if args.trace:
        with open(args.trace, "w") as f:
            for name, fn in (("adhoc launch", lambda: launch("adhoc", -2)), ("run", burst)):
                traced, monitor.lines = [], []
                monitor.mark()
                fn()
                monitor.mark()
                f.write(f"== {name}: {len(traced)} SQL statements\n" + "\n".join(traced) + "\n")
                f.write(f"== {name}: {len(monitor.lines)} Redis commands\n" + "\n".join(monitor.lines) + "\n")
            traced, monitor.lines = None, None
    if args.profile:
        import cProfile
        for name, fn in (("launch", lambda: [launch("adhoc", i) for i in range(args.n)]), ("run", burst)):
            profiler = cProfile.Profile(time.process_time)  # CPU, not wall: waits on the databases excluded
            profiler.runcall(fn)
            profiler.dump_stats(f"{args.profile}-{name}.pstats")
    out["adhoc launch"] = measure(lambda: [launch("adhoc", i) for i in range(args.n)], args.n)
    out["entity launch"] = measure(lambda: [launch("entity", i) for i in range(args.n)], args.n)
    out["idempotent adhoc launch"] = measure(lambda: [launch("adhoc", i, True) for i in range(args.n)], args.n)
    runs = measure(burst, 3 * args.n)
    idle = measure(burst, 3 * args.n)  # the same burst over no job: the worker's own start and stop
    out["run"] = {part: {k: v - idle[part].get(k, 0) for k, v in runs[part].items()
                         if abs(v - idle[part].get(k, 0)) > 1e-9} for part in ("sql", "redis")}
    out["run"]["cpu_ms"] = runs["cpu_ms"] - idle["cpu_ms"]
    out["worker start and stop (burst)"] = {part: {k: v * 3 * args.n for k, v in idle[part].items()}
                                           for part in ("sql", "redis")}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
