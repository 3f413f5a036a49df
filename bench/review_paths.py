#!/usr/bin/env python3
"""CPU and SQL per request on the analysts' and integrators' review paths (issue 21 §3): the inbox, the event page
and the keyboard's "next" (htmx), a status change by key, a status change from an inbox row, a note, the check
PDF, and the API's event list, show and PATCH.

    python bench/review_paths.py [--requests 30] [--entities 450] [--reseed] [--profile DIR] [--json FILE]

What it does:
1. Seeds, once, a template database (`screening_review_seed`) exactly as the load test does (bench/load/run.py:
   an account, analysts, a synthetic list of Faker names, a program whose entities are a third listed people, one
   check each, run by the app's own RQ workers), and subscribes a webhook endpoint to every event type, so that a
   review writes its outbox deliveries as under the load test. `--reseed` seeds it again.
2. Copies the template into `screening_review_run` (CREATE DATABASE ... TEMPLATE), migrates it to the code's head,
   analyzes it (the statistics autovacuum keeps in production; without them the planner picks nested loops over
   whole tables for an event by uuid), and serves the app in this process (the Flask test client: every before-request hook, CSRF, the Redis rate
   limiter; no gunicorn, no HTTP). An analyst signs in with the login form.
3. Runs each scenario `--requests` times (writes on distinct open events) and reports per request: the process CPU
   (time.process_time: the Python side, without gunicorn and the HTTP parsing), the wall time, the SQL statements
   (round trips), and PostgreSQL's own time from pg_stat_statements (planning + execution, this database only;
   track_planning is switched on for the app's connections).

Everything runs on its own database and Redis db (`--redis-url`, default db 11 of 127.0.0.1:6379; FLUSHDB of that
index only). Nothing is written into the repository: the figures go to docs/performance.md by hand, with the
commit they were measured at. On a shared machine the figures are indicative: compare runs made back to back.
"""
from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import re
import statistics
import subprocess
import sys
import time
from argparse import Namespace
from pathlib import Path

from _venv import HERE, ROOT  # noqa: F401 (first: re-runs with .venv/bin/python)

import psycopg  # noqa: E402

import _seed  # noqa: E402

sys.path.insert(0, str(HERE / "load"))
PG = "postgresql+psycopg://postgres@127.0.0.1:5432/"
SEED_DB = "screening_review_seed"
RUN_DB = "screening_review_run"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
EVENT_LINK = re.compile(rf'/events/({UUID})')
CHECK_LINK = re.compile(rf'/checks/({UUID})')
FORM_CSRF = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"')
META_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')
NOTE = "Different date of birth: not the listed person."


def log(msg: str) -> None:
    print(f"[review] {time.strftime('%H:%M:%S')} {msg}", file=sys.stderr, flush=True)


def exists(name: str) -> bool:
    with psycopg.connect(_seed.admin_url(PG + name), autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None


def seed_template(args, redis_url: str) -> None:
    """The load test's seeding (bench/load/run.py) into SEED_DB, with its app processes started and stopped here."""
    import run as load  # bench/load/run.py
    from api_latency import free_port, stop

    url = PG + SEED_DB
    results = Path("/tmp/review-bench")
    (results / "logs").mkdir(parents=True, exist_ok=True)
    env = {**_seed.app_env(url, redis_url), **app_settings(results)}
    seed_args = Namespace(analyst_logins=2, records=args.records, entities=args.entities, monitor_entities=0)
    seeded = load.seed(url, env, seed_args)
    port = free_port()
    procs = load.start_stack(env, port, results / "logs")
    try:
        world = load.seed_over_api(f"http://127.0.0.1:{port}/api/v1", seeded, seed_args, env)
    finally:
        for p in procs:
            stop(p)
    meta = {"api_key": seeded["boot"]["api_key"], "analyst": seeded["analysts"][0], "password": load.PASSWORD,
            "program": world["program"], "events": world["events_at_start"]}
    with psycopg.connect(_seed.plain_url(url), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS review_bench_meta (data jsonb)")
        conn.execute("DELETE FROM review_bench_meta")
        conn.execute("INSERT INTO review_bench_meta VALUES (%s)", (json.dumps(meta),))
    log(f"template {SEED_DB} seeded: {world['events_at_start']} events")


def app_settings(results: Path) -> dict:
    return {"RQ_QUEUE_PREFIX": "benchreview:", "RATELIMIT_KEY_PREFIX": "benchreview",
            "DEFAULT_API_RATE_LIMIT": "10000000", "LOGIN_RATE_LIMIT": "10000 per minute",
            "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8", "SCREENING_INDEX_DIR": str(results / "index"),
            "STORAGE_PATH": str(results / "storage"), "MAIL_OUTBOX_DIR": str(results / "mail"),
            "SMS_OUTBOX_DIR": str(results / "sms")}


def fresh_run_db(redis_url: str) -> dict:
    url = PG + RUN_DB
    with psycopg.connect(_seed.admin_url(url), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{RUN_DB}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{RUN_DB}" TEMPLATE "{SEED_DB}"')
    _seed._flask(["db", "upgrade"], _seed.app_env(url, redis_url))  # the code's migrations, if newer
    with psycopg.connect(_seed.plain_url(url), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")  # its view, in this database
        conn.execute("VACUUM (ANALYZE)")  # production runs autovacuum; this server may not: statistics now
        return conn.execute("SELECT data FROM review_bench_meta").fetchone()[0]


class Meter:
    """Statements sent by the app (SQLAlchemy's before_cursor_execute) and PostgreSQL's time for this database
    (pg_stat_statements: planning + execution)."""

    def __init__(self, engine, dsn: str):
        from sqlalchemy import event
        self.statements = 0
        self.texts: list[str] = []
        self.conn = psycopg.connect(dsn, autocommit=True)
        self.dbid = self.conn.execute("SELECT oid FROM pg_database WHERE datname = current_database()").fetchone()[0]

        def count(conn, cursor, statement, *a):
            self.statements += 1
            self.texts.append(statement)
        event.listen(engine, "before_cursor_execute", count)

    def reset(self) -> None:
        self.conn.execute("SELECT pg_stat_statements_reset(0::oid, %s::oid, 0::bigint)", (self.dbid,))
        self.statements = 0
        self.texts = []

    def pg_ms(self) -> tuple[float, float]:
        """(planning, execution) milliseconds of the statements run since the reset, but this meter's own."""
        row = self.conn.execute(
            "SELECT coalesce(sum(total_plan_time), 0), coalesce(sum(total_exec_time), 0) FROM pg_stat_statements "
            "WHERE dbid = %s AND query NOT LIKE '%%pg_stat_statements%%'", (self.dbid,)).fetchone()
        return float(row[0]), float(row[1])

    def top(self, n: int = 8) -> list[tuple]:
        return self.conn.execute(
            "SELECT calls, round((total_plan_time + total_exec_time)::numeric, 2), left(regexp_replace(query, "
            "'\\s+', ' ', 'g'), 160) FROM pg_stat_statements WHERE dbid = %s AND query NOT LIKE "
            "'%%pg_stat_statements%%' ORDER BY total_plan_time + total_exec_time DESC LIMIT %s",
            (self.dbid, n)).fetchall()


class Bench:
    def __init__(self, meta: dict, redis_url: str, args):
        results = Path("/tmp/review-bench")
        os.environ.update({**app_settings(results), "DATABASE_URL": PG + RUN_DB, "REDIS_URL": redis_url})
        from app import create_app
        from app.extensions import db
        self.app = create_app({"SQLALCHEMY_DATABASE_URI": PG + RUN_DB, "REDIS_URL": redis_url,
                               "RATELIMIT_STORAGE_URI": redis_url, "SQLALCHEMY_ENGINE_OPTIONS": {
                                   "pool_pre_ping": False,
                                   "connect_args": {"options": "-c pg_stat_statements.track_planning=on"}}})
        import logging
        logging.getLogger().setLevel(logging.WARNING)
        with self.app.app_context():
            self.meter = Meter(db.engine, _seed.plain_url(PG + RUN_DB))
        self.meta = meta
        self.args = args
        self.portal = self.app.test_client()
        self.api = self.app.test_client()
        self.api_headers = {"Authorization": f"Bearer {meta['api_key']}"}
        self.csrf = ""
        self.results: list[dict] = []

    # -------------------------------------------------------------- set-up

    def login(self) -> None:
        page = self.portal.get("/login")
        token = FORM_CSRF.search(page.get_data(as_text=True))[1]
        r = self.portal.post("/login", data={"email": self.meta["analyst"], "password": self.meta["password"],
                                             "csrf_token": token}, follow_redirects=True)
        text = r.get_data(as_text=True)
        assert r.status_code == 200 and 'name="password"' not in text, "sign-in failed"
        self.csrf = META_CSRF.search(text)[1]

    def subscribe(self) -> None:
        r = self.api.post("/api/v1/webhook-endpoints", headers=self.api_headers, json={
            "url": "http://127.0.0.1:9/hook", "event_types": ["check.completed", "check.failed", "event.created",
                                                              "event.updated", "monitor_run.completed"]})
        assert r.status_code in (201, 404), r.get_data(as_text=True)[:300]

    def open_events(self, n: int) -> list[str]:
        r = self.api.get("/api/v1/events", headers=self.api_headers,
                         query_string={"filter[status]": "new", "per_page": 100, "sort": "created_at"})
        found = [e["uuid"] for e in r.get_json()["data"]]
        page = 2
        while len(found) < n and r.get_json()["data"]:
            r = self.api.get("/api/v1/events", headers=self.api_headers, query_string={
                "filter[status]": "new", "per_page": 100, "sort": "created_at", "page": page})
            found += [e["uuid"] for e in r.get_json()["data"]]
            page += 1
        if len(found) < n:
            raise SystemExit(f"only {len(found)} new events; seed more entities (--entities, --reseed)")
        return found

    def form(self, fields: dict) -> dict:
        return {"data": {**fields, "csrf_token": self.csrf},
                "headers": {"HX-Request": "true", "X-CSRFToken": self.csrf}}

    # -------------------------------------------------------------- measuring

    def scenario(self, name: str, call, n: int, expect=(200,)) -> None:
        """`call(i)` makes the i-th request; measured one by one after two warm-up requests (i = -2, -1)."""
        if self.args.only and self.args.only not in name:
            return
        for i in (-2, -1):
            call(i)
        cpu, wall, statements = [], [], []
        profile = cProfile.Profile() if self.args.profile else None
        self.meter.reset()
        for i in range(n):
            before = self.meter.statements
            self.meter.texts = []
            c0, w0 = time.process_time(), time.perf_counter()
            if profile:
                profile.enable()
            r = call(i)
            if profile:
                profile.disable()
            cpu.append((time.process_time() - c0) * 1000)
            wall.append((time.perf_counter() - w0) * 1000)
            statements.append(self.meter.statements - before)
            if r.status_code not in expect:
                raise SystemExit(f"{name}: {r.status_code} {r.get_data(as_text=True)[:400]}")
        plan, execute = self.meter.pg_ms()
        row = {"scenario": name, "n": n, "cpu_ms": statistics.median(cpu), "cpu_mean_ms": statistics.fmean(cpu),
               "wall_ms": statistics.median(wall), "statements": statistics.median(statements),
               "statements_max": max(statements), "pg_plan_ms": plan / n, "pg_exec_ms": execute / n}
        self.results.append(row)
        log(f"{name:<44} cpu {row['cpu_ms']:6.1f} ms  wall {row['wall_ms']:6.1f} ms  SQL {row['statements']:4.0f}"
            f"  PG plan {row['pg_plan_ms']:5.2f} + exec {row['pg_exec_ms']:5.2f} ms")
        if self.args.verbose:
            for calls, ms, query in self.meter.top():
                log(f"      {calls:4d} x {ms:8.2f} ms  {query}")
        if self.args.statements:
            for text in self.meter.texts:  # the last request's
                log("      | " + re.sub(r"\s+", " ", text)[:200])
        if profile:
            out = Path(self.args.profile)
            out.mkdir(parents=True, exist_ok=True)
            slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
            profile.dump_stats(out / f"{slug}.prof")
            with open(out / f"{slug}.txt", "w") as fh:
                pstats.Stats(profile, stream=fh).sort_stats("cumulative").print_stats(60)

    def run(self) -> None:
        n = self.args.requests
        self.login()
        self.subscribe()
        events = self.open_events(2 + 3 * (n + 2) + 2)
        it = iter(events[2:])
        take = lambda k: [next(it) for _ in range(k)]  # noqa: E731
        page_events = events[:2]
        key_events, row_events, api_events = take(n + 2), take(n + 2), take(n + 2)
        first = self.portal.get(f"/events/{page_events[0]}").get_data(as_text=True)
        check = CHECK_LINK.search(first)[1]

        self.scenario("portal GET / (inbox)", lambda i: self.portal.get("/"), n)
        self.scenario("portal GET / (inbox, all, page 2)", lambda i: self.portal.get("/?status=all&page=2"), n)
        self.scenario("portal GET /events/<uuid>", lambda i: self.portal.get(f"/events/{page_events[i % 2]}"), n)
        self.scenario("portal GET /events/<uuid> (next, htmx)", lambda i: self.portal.get(
            f"/events/{page_events[i % 2]}", headers={"HX-Request": "true", "HX-Target": "main"}), n)
        self.scenario("portal POST status (key, advance)", lambda i: self.portal.post(
            f"/events/{key_events[i + 2]}/status", **self.form({"status": "closed_dismissed", "note": NOTE,
                                                                 "advance": "1"})), n)
        self.scenario("portal POST status (inbox row)", lambda i: self.portal.post(
            f"/events/{row_events[i + 2]}/status", **self.form({"status": "investigating", "from": "inbox"})), n)
        self.scenario("portal POST notes", lambda i: self.portal.post(
            f"/events/{page_events[1]}/notes", **self.form({"note_text": f"{NOTE} ({i})"})), n)
        self.scenario("portal GET /checks/<uuid>/pdf", lambda i: self.portal.get(f"/checks/{check}/pdf"),
                      max(5, n // 3))
        self.scenario("API GET /events (new, 25)", lambda i: self.api.get(
            "/api/v1/events", headers=self.api_headers, query_string={"filter[status]": "new", "per_page": 25}), n)
        self.scenario("API GET /events/<uuid>", lambda i: self.api.get(
            f"/api/v1/events/{page_events[1]}", headers=self.api_headers), n)
        self.scenario("API PATCH /events/<uuid> (note)", lambda i: self.api.patch(
            f"/api/v1/events/{page_events[0]}", headers=self.api_headers, json={"note": f"{NOTE} [{i}]"}), n)
        self.scenario("API PATCH /events/<uuid> (status + note)", lambda i: self.api.patch(
            f"/api/v1/events/{api_events[i + 2]}", headers=self.api_headers,
            json={"status": "closed_dismissed", "note": NOTE}), n)


def commit_label() -> str:
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "app", "templates", "static", "migrations"],
                           cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return sha.strip() + (" (with uncommitted changes)" if dirty else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=30, help="measured requests per scenario")
    ap.add_argument("--entities", type=int, default=450, help="entities of the seeded program (with --reseed)")
    ap.add_argument("--records", type=int, default=20_000, help="synthetic list records (with --reseed)")
    ap.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/11"))
    ap.add_argument("--reseed", action="store_true")
    ap.add_argument("--only", help="run only the scenarios whose name contains this text")
    ap.add_argument("--profile", help="write cProfile stats per scenario into this directory")
    ap.add_argument("--verbose", action="store_true", help="print each scenario's costliest statements")
    ap.add_argument("--statements", action="store_true", help="print the statements of each scenario's last request")
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    args = ap.parse_args()
    import redis
    redis.Redis.from_url(args.redis_url).flushdb()
    if args.reseed or not exists(SEED_DB):
        seed_template(args, args.redis_url)
        redis.Redis.from_url(args.redis_url).flushdb()
    meta = fresh_run_db(args.redis_url)
    bench = Bench(meta, args.redis_url, args)
    try:
        bench.run()
    finally:
        bench.meter.conn.close()
        with bench.app.app_context():
            from app.extensions import db
            db.engine.dispose()
        redis.Redis.from_url(args.redis_url).flushdb()
    out = {"commit": commit_label(), "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "load_average": os.getloadavg(), "results": bench.results}
    print(f"\nCommit {out['commit']}, {out['when']}, load average {out['load_average'][0]:.2f}")
    print("| request | n | CPU ms (median) | wall ms | SQL statements | PostgreSQL plan + exec ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in bench.results:
        print(f"| {r['scenario']} | {r['n']} | {r['cpu_ms']:.1f} | {r['wall_ms']:.1f} | {r['statements']:.0f} "
              f"| {r['pg_plan_ms']:.2f} + {r['pg_exec_ms']:.2f} |")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
