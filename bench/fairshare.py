#!/usr/bin/env python3
"""Fair shares under a flood (issue 24): does one account's heavy work slow another account down?

The app as in production (scripts/run.sh): gunicorn 2 workers x 4 threads, RQ_WORKERS light workers, HEAVY_SLOTS
heavy workers (`flask jobs worker --heavy`, at OS priority HEAVY_WORKER_NICE) and the scheduler, on a database and
a private redis-server of their own. A synthetic list (`flask lists generate-synthetic`, Faker names: nothing from
../shared/data) is screened.

1. Account A: a program, an entity and a check (events to list). Account B: an entity with --checks broad checks of
   up to 25 results each (a heavy history PDF).
2. A's `GET /api/v1/events?per_page=30` every 0.1 s: idle for 10 s, then while B floods --pdfs concurrent history
   PDF downloads from the portal (4 sessions of B's admin) and --imports concurrent --rows-row CSV imports from the
   API (4 keys), until every job of B's has ended. p50/p95/p99 for both windows.
3. A asks for an import of its own behind a backlog of B's imports: how long it waits for a heavy worker.
4. The thresholds of docs/decisions.md ("Heavy work"): the rendering time of PDFs by items printed, the import
   time by rows, the export time by events, measured in this process against the same database.

    .venv/bin/python bench/fairshare.py                  # 24 PDFs, 8 imports of 8,000 rows, 50 checks
    .venv/bin/python bench/fairshare.py --pdfs 6 --imports 2 --rows 2000 --checks 10 --records 20000

Prints the figures and writes them as JSON (--out, default /tmp/fairshare.json); drops its database at the end
(unless --keep-db)."""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(os.path.abspath(__file__)).parent))
from _venv import ROOT  # noqa: E402 (first: re-runs with .venv/bin/python)

import httpx  # noqa: E402

import _seed  # noqa: E402
from api_latency import free_port, stop, wait_ready  # noqa: E402
from load.run import spawn  # noqa: E402

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/screening_fairshare"
PREFIX = "benchfair:"
PASSWORD = "Fair-share-password-1234"
PEP = "pep_sanction_check"
BROAD = {PEP: {"search_type": "broad_search", "similarity_threshold": "50", "max_results": 25}}


def log(msg: str) -> None:
    print(f"[fairshare] {time.strftime('%H:%M:%S')} {msg}", flush=True)


def pct(xs: list[float], p: float) -> float | None:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else None


def figures(samples: list[tuple[float, int]]) -> dict:
    ms = [m for m, _ in samples]
    return {"requests": len(ms), "non_200": sum(1 for _, s in samples if s != 200),
            "p50_ms": round(statistics.median(ms), 1) if ms else None, "p95_ms": round(pct(ms, 95) or 0, 1),
            "p99_ms": round(pct(ms, 99) or 0, 1), "max_ms": round(max(ms), 1) if ms else None}


def bulk_csv(n: int, seed: str) -> bytes:
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["entity_type", "first_name", "last_name", "reference_number"])
    for i in range(n):
        w.writerow(["individual", f"Ava{seed}", f"Numbat{i:05d}x{seed}", f"R{seed}-{i}"])
    return out.getvalue().encode()


def login(base: str, email: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=600)
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', client.get("/login").text).group(1)
    r = client.post("/login", data={"email": email, "password": PASSWORD, "csrf_token": token})
    if r.status_code != 302:
        raise SystemExit(f"login of {email} failed: {r.status_code}")
    return client


def write_crowd(path: Path, n: int = 400) -> Path:
    """A PEP list (Senzing JSON lines) of invented people whose names are spellings of "Mohammed Ali" with a third
    part: a broad search on that name finds dozens of them, as it does on the official lists (where a check keeps
    25 results). The synthetic list alone gives a common name one or two results."""
    import random
    rng = random.Random(24)
    firsts = ["Mohammed", "Mohamed", "Muhammad", "Mohammad", "Mohamad", "Muhammed"]
    lasts = ["Ali", "Aly", "Alli", "Alee"]
    syllables = ["ba", "ka", "ra", "mi", "so", "tu", "ha", "di", "ne", "lo", "za", "qi"]
    with open(path, "w") as out:
        for i in range(n):
            third = "".join(rng.choice(syllables) for _ in range(3)).capitalize()
            name = f"{rng.choice(firsts)} {rng.choice(lasts)} {third}"
            out.write(json.dumps({"DATA_SOURCE": "CROWD", "RECORD_ID": f"C{i:05d}", "RECORD_TYPE": "PERSON",
                                  "NAMES": [{"NAME_TYPE": "PRIMARY", "NAME_FULL": name}],
                                  "RISKS": [{"TOPIC": "role.pep"}]}) + "\n")
    return path


def bootstrap(env: dict, name: str) -> dict:
    out = _seed._flask(["accounts", "bootstrap", "--name", name, "--email", f"{name.lower()}@fair.example.com",
                        "--password", PASSWORD, "--credit", "100000000"], env)
    boot = json.loads(out.strip().splitlines()[-1])
    boot["email"] = f"{name.lower()}@fair.example.com"
    return boot


def create_key(env: dict, account_uuid: str, label: str) -> str:
    out = _seed._flask(["accounts", "create-key", "--account", account_uuid, "--label", label], env)
    return json.loads([line for line in out.splitlines() if line.strip().startswith("{")][-1])["api_key"]


def wait_checks(api: httpx.Client, entity: str, timeout: float = 900) -> int:
    deadline = time.time() + timeout
    while time.time() < deadline:
        rows = api.get(f"/entities/{entity}/checks?per_page=100").json()["data"]
        if rows and all(r["status"] in ("complete", "failed") for r in rows):
            return len(rows)
        time.sleep(1)
    raise SystemExit("checks did not end")


def wait_jobs(api: httpx.Client, uuids: set[str], timeout: float = 1800) -> dict[str, dict]:
    deadline = time.time() + timeout
    while time.time() < deadline:
        rows = {u: api.get(f"/jobs/{u}").json()["data"] for u in uuids}
        if all(r["status"] in ("complete", "failed") for r in rows.values()):
            return rows
        time.sleep(0.5)
    raise SystemExit("jobs did not end")


class Poller:
    """A's GET /events every 0.1 s on its own thread, the samples kept by window."""

    def __init__(self, api: httpx.Client):
        self.api, self.window, self.samples = api, "idle", {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            t = time.perf_counter()
            try:
                status = self.api.get("/events?per_page=30").status_code
            except httpx.HTTPError:
                status = 0
            self.samples.setdefault(self.window, []).append(((time.perf_counter() - t) * 1000, status))
            time.sleep(0.1)

    def start(self):
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def thresholds(env: dict, b_entity: str, b_checks: list[str], a_entity: str) -> dict:
    """The costs that place the synchronous thresholds, measured in this process on the bench's database."""
    os.environ.update({k: env[k] for k in ("DATABASE_URL", "REDIS_URL", "RQ_QUEUE_PREFIX", "STORAGE_PATH",
                                           "SCREENING_INDEX_DIR", "RATELIMIT_KEY_PREFIX")})
    import uuid as uuid_mod

    from app import create_app, reports
    from app.accounts.models import ApiKey
    from app.accounts.services import api_key_actor
    from app.entities import services as entity_services
    from app.events import exports, queries as event_queries
    from app.core.csvsafe import csv_lines
    from app.extensions import db
    from sqlalchemy import select
    app = create_app()
    out: dict = {"pdf": [], "import": [], "export": []}
    with app.app_context():
        def actor_for(entity_uuid: str):
            from app.entities.models import Entity
            entity = db.session.scalar(select(Entity).where(Entity.uuid == uuid_mod.UUID(entity_uuid)))
            key = db.session.scalar(select(ApiKey).where(ApiKey.account_id == entity.account_id).limit(1))
            return api_key_actor(key)
        b = actor_for(b_entity)
        a = actor_for(a_entity)
        cases = [("history", a, a_entity, None), ("history", b, b_entity, None)] + \
                [("check", b, c, "entity") for c in b_checks[:3]]
        for kind, actor, target, check_kind in cases:
            build = reports._history_document if kind == "history" else reports._check_document
            args = (actor, uuid_mod.UUID(target)) if kind == "history" else (actor, uuid_mod.UUID(target), check_kind)
            t = time.perf_counter()
            content, _, _ = build(*args)
            read = time.perf_counter() - t
            items = reports.printed_items(content)
            estimate = reports._estimate("history_pdf" if kind == "history" else "check_pdf", actor,
                                         uuid_mod.UUID(target), check_kind)[0]
            t = time.perf_counter()
            (reports._render_history if kind == "history" else reports._render_check)(actor, content)
            render = time.perf_counter() - t
            out["pdf"].append({"report": kind, "items": items, "estimate": estimate, "read_s": round(read, 3),
                               "render_s": round(render, 3)})
            db.session.rollback()
        from app.programs.models import Program
        program = db.session.scalar(select(Program).where(Program.account_id == b.account_id).limit(1))
        for rows in (50, 100, 200, 500, 1000, 2000):
            text = bulk_csv(rows, f"t{rows}").decode()
            t = time.perf_counter()
            entity_services.bulk_import(b, program.uuid, text)
            db.session.flush()
            out["import"].append({"rows": rows, "seconds": round(time.perf_counter() - t, 3)})
            db.session.rollback()
        params = event_queries.list_params({})
        n = exports.export_count(b, {})
        t = time.perf_counter()
        lines = sum(1 for _ in csv_lines(event_queries.export_rows(b, params)))
        out["export"].append({"events": n, "lines": lines, "seconds": round(time.perf_counter() - t, 3)})
        db.session.rollback()
    return out


def main() -> int:
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the stack it started (finally) when stopped
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pdfs", type=int, default=24)
    ap.add_argument("--imports", type=int, default=8)
    ap.add_argument("--rows", type=int, default=8000)
    ap.add_argument("--checks", type=int, default=50)
    ap.add_argument("--records", type=int, default=50000, help="synthetic list records")
    ap.add_argument("--heavy-slots", type=int, default=2)
    ap.add_argument("--out", default="/tmp/fairshare.json")
    ap.add_argument("--keep-db", action="store_true")
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="fairshare-"))
    redis_port = free_port()
    redis_proc = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                                   "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  start_new_session=True)
    REDIS = f"redis://127.0.0.1:{redis_port}/0"
    env = _seed.app_env(PG, REDIS)
    env.update({"RQ_QUEUE_PREFIX": PREFIX, "RATELIMIT_KEY_PREFIX": "benchfair", "STORAGE_PATH": str(tmp / "blobs"),
                "SCREENING_INDEX_DIR": str(tmp / "index"), "MAIL_OUTBOX_DIR": str(tmp / "outbox"),
                "HEAVY_SLOTS": str(args.heavy_slots), "DEFAULT_API_RATE_LIMIT": "6000"})
    import redis as redis_mod
    for _ in range(100):
        try:
            redis_mod.Redis.from_url(REDIS).ping()
            break
        except redis_mod.RedisError:
            time.sleep(0.05)
    log(f"database screening_fairshare, Redis {REDIS}, logs in {tmp}")
    _seed.recreate_database(PG)
    _seed._flask(["db", "upgrade"], env)
    _seed._flask(["lists", "generate-synthetic", "--count", str(args.records), "--seed", "24"], env)
    crowd = write_crowd(tmp / "crowd.json")
    _seed._flask(["lists", "import", "--format", "senzing", "--list", "crowd", str(crowd)], env)
    first, last = "Mohammed", "Ali"
    a, b = bootstrap(env, "Alpha"), bootstrap(env, "Beta")
    b_keys = [b["api_key"]] + [create_key(env, b["account_uuid"], f"flood-{i}") for i in range(3)]

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    bin_ = ROOT / ".venv" / "bin"
    procs = [spawn([str(bin_ / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "4",
                    "--graceful-timeout", "5", "wsgi:app"], env, tmp / "gunicorn.log")]
    procs += [spawn([str(bin_ / "flask"), "jobs", "worker", "--light"], env, tmp / f"light{i}.log") for i in range(2)]
    procs += [spawn([str(bin_ / "flask"), "jobs", "worker", "--heavy"], env, tmp / f"heavy{i}.log")
              for i in range(args.heavy_slots)]
    procs.append(spawn([str(bin_ / "flask"), "jobs", "scheduler"], env, tmp / "scheduler.log"))
    result: dict = {"args": vars(args)}
    try:
        wait_ready(port, "/healthz", procs[0])
        A = httpx.Client(base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {a['api_key']}"}, timeout=600)
        Bs = [httpx.Client(base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {k}"}, timeout=600)
              for k in b_keys]
        pa = A.post("/programs", json={"program_name": "Alpha customers"}).json()["data"]["uuid"]
        ea = A.post(f"/programs/{pa}/entities", json={"entity_type": "individual", "first_name": "Gilberto Jose",
                                                      "last_name": "Rodriguez Orejuela"}).json()["data"]["uuid"]
        A.post(f"/entities/{ea}/checks", json={"check_types": [PEP]})
        pb = Bs[0].post("/programs", json={"program_name": "Beta flood"}).json()["data"]["uuid"]
        eb = Bs[0].post(f"/programs/{pb}/entities", json={"entity_type": "individual", "first_name": first,
                                                          "last_name": last}).json()["data"]["uuid"]
        t0 = time.time()
        for i in range(args.checks):
            r = Bs[i % 4].post(f"/entities/{eb}/checks", json={"check_types": [PEP], "config": BROAD})
            assert r.status_code == 202, r.text
        wait_checks(Bs[0], eb)
        wait_checks(A, ea)
        b_checks = [c["uuid"] for c in Bs[0].get(f"/entities/{eb}/checks?per_page=100").json()["data"]]
        results = [len((Bs[0].get(f"/checks/{c}").json()["data"].get("details") or {}).get("results") or [])
                   for c in b_checks[:5]]
        log(f"B's entity has {len(b_checks)} checks ({results} results in the first five), "
            f"{time.time() - t0:.0f} s")
        result["b_entity"] = {"checks": len(b_checks), "results_first_five": results}

        poller = Poller(A).start()
        time.sleep(10)
        sessions = [login(base, b["email"]) for _ in range(4)]

        def pdf(i: int):
            t = time.time()
            r = sessions[i % 4].get(f"/entities/{eb}/history.pdf")
            return r.status_code, time.time() - t, r.headers.get("location")

        def post(i: int):
            t = time.time()
            r = Bs[i % 4].post(f"/programs/{pb}/entities/bulk", content=bulk_csv(args.rows, str(i)),
                               headers={"Content-Type": "text/csv"})
            return r.status_code, time.time() - t, r.headers.get("location")

        poller.window = "flood"
        t0 = time.time()
        with ThreadPoolExecutor(32) as ex:
            futs = [ex.submit(pdf, i) for i in range(args.pdfs)] + [ex.submit(post, i) for i in range(args.imports)]
            answers = [f.result() for f in futs]
        flood_s = time.time() - t0
        poller.window = "jobs"
        codes: dict[int, int] = {}
        for status, _, _ in answers:
            codes[status] = codes.get(status, 0) + 1
        jobs = {loc.rstrip("/").rsplit("/", 1)[1] for _, _, loc in answers if loc and "/jobs/" in loc}
        log(f"B's flood answered in {flood_s:.1f} s: {codes}; slowest answer {max(t for _, t, _ in answers):.2f} s; "
            f"{len(jobs)} jobs")
        done = wait_jobs(Bs[0], jobs)
        jobs_s = time.time() - t0
        poller.window = "after"
        time.sleep(3)
        poller.stop()
        result["flood"] = {"answers": codes, "answer_max_s": round(max(t for _, t, _ in answers), 2),
                           "answer_p50_s": round(statistics.median(t for _, t, _ in answers), 3),
                           "flood_s": round(flood_s, 1), "jobs": len(jobs), "all_jobs_ended_s": round(jobs_s, 1),
                           "job_statuses": sorted({j["status"] for j in done.values()})}
        result["a_latency"] = {w: figures(s) for w, s in poller.samples.items()}
        both = poller.samples.get("flood", []) + poller.samples.get("jobs", [])
        result["a_latency"]["flood_and_jobs"] = figures(both)
        log(f"A: {json.dumps(result['a_latency'])}")

        # A's own heavy job behind a backlog of B's
        backlog = set()
        for i in range(6):
            r = Bs[i % 4].post(f"/programs/{pb}/entities/bulk", content=bulk_csv(args.rows, f"q{i}"),
                               headers={"Content-Type": "text/csv"})
            if r.status_code == 202:
                backlog.add(r.json()["data"]["uuid"])
        time.sleep(1)
        r = A.post(f"/programs/{pa}/entities/bulk", content=bulk_csv(2000, "a"), headers={"Content-Type": "text/csv"})
        a_job = r.json()["data"]["uuid"]
        done_b = wait_jobs(Bs[0], backlog)
        a_row = wait_jobs(A, {a_job})[a_job]
        from datetime import datetime

        def ts(s):
            return datetime.fromisoformat(s.replace("Z", "+00:00"))
        b_durations = [(ts(j["finished_at"]) - ts(j["started_at"])).total_seconds() for j in done_b.values()]
        a_wait = (ts(a_row["started_at"]) - ts(a_row["created_at"])).total_seconds()
        b_started_after_a = sum(1 for j in done_b.values() if ts(j["started_at"]) > ts(a_row["started_at"]))
        result["turns"] = {"b_backlog": len(backlog), "a_waited_s": round(a_wait, 2),
                           "b_job_s_median": round(statistics.median(b_durations), 2),
                           "b_jobs_started_after_a": b_started_after_a}
        log(f"A's import behind B's backlog of {len(backlog)}: waited {a_wait:.2f} s (B's imports take "
            f"{statistics.median(b_durations):.2f} s each); {b_started_after_a} of B's started after it")

        result["thresholds"] = thresholds(env, eb, b_checks, ea)
        log(f"thresholds: {json.dumps(result['thresholds'])}")
    finally:
        for p in procs:
            stop(p)
        redis_proc.terminate()
        redis_proc.wait(10)
        if not args.keep_db:
            subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", "--force",
                            "screening_fairshare"], capture_output=True)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
