#!/usr/bin/env python3
"""Redis outage drill: the app served as in production (gunicorn, 2 workers x 4 threads) on PostgreSQL, with
`REDIS_URL` pointing at a port where nothing listens. Sends a mix of API reads and writes, portal sign-ins and
portal pages, and counts the answers by status.

    python bench/redis_outage.py [--requests 3000]

It creates and drops its own database (`screening_outage_<pid>`); nothing is written into the repository.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import time
from pathlib import Path

from _venv import HERE, ROOT  # noqa: E402,F401 (first: re-runs with .venv/bin/python)

import httpx  # noqa: E402
import psycopg  # noqa: E402

import _seed  # noqa: E402
from api_latency import free_port, stop, wait_ready  # noqa: E402

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    args = parser.parse_args()

    url = f"{PG}screening_outage_{os.getpid()}"
    dead_redis = f"redis://127.0.0.1:{free_port()}/0"
    _seed.recreate_database(url)
    env = _seed.app_env(url, dead_redis)
    _seed._flask(["db", "upgrade"], env)
    import json
    boot = json.loads(_seed._flask(["accounts", "bootstrap", "--name", "Outage", "--email", "ops@example.com",
                                    "--password", "correct-horse-42"], env))
    port = free_port()
    log = Path(f"/tmp/outage-gunicorn-{os.getpid()}.log")
    import subprocess
    proc = subprocess.Popen([str(ROOT / ".venv" / "bin" / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers",
                             "2", "--threads", "4", "--capture-output", "--error-logfile", str(log), "wsgi:app"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    codes: collections.Counter = collections.Counter()
    by_kind: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    try:
        wait_ready(port, "/healthz", proc)
        base = f"http://127.0.0.1:{port}"
        api = httpx.Client(base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {boot['api_key']}"})
        started = time.perf_counter()
        program = api.post("/programs", json={"program_name": "Outage drill"}).json()["data"]["uuid"]
        entity = None
        i = 0
        while sum(codes.values()) < args.requests:
            i += 1
            kind = ("api_write" if i % 10 == 0 else "portal" if i % 10 == 5 else "api_read")
            if kind == "api_write":
                r = api.post(f"/programs/{program}/entities",
                             json={"entity_type": "individual", "first_name": "Ada", "last_name": f"Outage{i}"})
                if r.status_code == 201:
                    entity = r.json()["data"]["uuid"]
                    r2 = api.post(f"/entities/{entity}/notes", json={"note_text": f"note {i}"})
                    codes[r2.status_code] += 1
                    by_kind["api_write"][r2.status_code] += 1
            elif kind == "portal":
                with httpx.Client(base_url=base, follow_redirects=False) as browser:
                    page = browser.get("/login")
                    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page.text).group(1)
                    r = browser.post("/login", data={"email": "ops@example.com", "password": "correct-horse-42",
                                                     "csrf_token": token})
                    if r.status_code == 302:
                        r = browser.get("/programs")
            else:
                path = ("/programs", f"/programs/{program}/entities", "/notes",
                        f"/entities/{entity}" if entity else "/programs")[i % 4]
                r = api.get(path)
            codes[r.status_code] += 1
            by_kind[kind][r.status_code] += 1
        seconds = time.perf_counter() - started
        health = httpx.get(f"{base}/healthz")
    finally:
        stop(proc)
        with psycopg.connect(_seed.admin_url(url), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{_seed.db_name(url)}" WITH (FORCE)')
    total = sum(codes.values())
    served = sum(n for c, n in codes.items() if c < 500)
    warnings = sum(1 for line in log.read_text().splitlines() if "unreachable" in line)
    lines = log.read_text().splitlines()
    tracebacks = sum(1 for line in lines if "Traceback" in line)
    swallowed = sum(1 for line in lines if "Swallowing error" in line)
    print(f"Redis down ({dead_redis}); {total} requests in {seconds:.1f} s against gunicorn 2x4 on PostgreSQL")
    print(f"served (status < 500): {served} of {total}; by status: {dict(sorted(codes.items()))}")
    for kind, counter in sorted(by_kind.items()):
        print(f"  {kind}: {dict(sorted(counter.items()))}")
    print(f"/healthz: {health.status_code} {health.text.strip()}")
    print(f"log lines of the 2 web workers: {warnings} API-limiter outage warnings, {swallowed} sign-in limiter "
          f"notices (each at most once a minute per worker), {tracebacks} tracebacks")
    return 0 if served == total else 1


if __name__ == "__main__":
    sys.exit(main())
