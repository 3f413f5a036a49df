#!/usr/bin/env python3
"""Load test of the whole loop (issue 21 §3): analysts, integrators and a webhook receiver at once, with locust,
against the app as in production (gunicorn 2 workers x 4 threads, 2 light RQ workers, 2 background workers for the
monitors queue, 2 heavy workers, the scheduler) on
its own PostgreSQL database and Redis db index.

    make load                                   # defaults: 14 users, 7 actions/s (the rate held here), 2 minutes
    make load USERS=20 RATE=10 DURATION=10m
    .venv/bin/python bench/load/run.py --users 14 --rate 7 --duration 10m [--monitor-entities 100000]

What it does:
1. Creates the database `screening_load_<pid>` on 127.0.0.1:5432 (migrations: `flask db upgrade`), uses Redis db
   index 14 (flushed: FLUSHDB of that index only) with its own queue prefix, and seeds: an account (`flask accounts
   bootstrap`), analyst users (`flask accounts create-user`), a synthetic sanctions/PEP list (`flask lists
   generate-synthetic`, Faker names: nothing from ../shared/data), a program "Onboarding" with `--entities`
   entities (a third of them people of the synthetic list, so that checks raise events), and one check on each
   (the events the analysts start with). With `--monitor-entities N`: a second program with N synthetic entities
   (`flask entities generate-synthetic`: one SQL insert per 5,000 rows) and a manual monitor, whose run over all
   of them starts `--monitor-delay` seconds into the load.
2. Starts gunicorn, the RQ workers (as `make run` does; `--background-workers 0`: 2 workers on every queue) and
   the scheduler, and runs locust headless (bench/load/locustfile.py) for the duration at the rate: `--rate` user
   actions a second in all (each user paces itself at rate / users), the users spawned within 10 seconds. Analysts
   are a third of the users, integrators the rest.
3. When the load stops: seconds until every queue is empty and no job is running, the checks not complete or
   failed (must be 0), the monitor run's end, and the figures per request type.

Writes the locust CSVs (`load_stats.csv`, `load_stats_history.csv`, `load_failures.csv`), the HTML report
(`report.html`), `summary.json` and the server logs into `--results` (default /tmp/load-results/<time>), never
into the repository; drops the database at the end (unless --keep-db).
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import random
import re
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(os.path.abspath(__file__)).parent.parent))
from _venv import ROOT  # noqa: E402 (first: re-runs with .venv/bin/python)

import httpx  # noqa: E402
import psycopg  # noqa: E402

import _seed  # noqa: E402
from api_latency import free_port, stop, wait_ready  # noqa: E402

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/"
REDIS_DB = 14
QUEUE_PREFIX = "benchload:"
PASSWORD = "Load-test-password-1234"
HERE = Path(os.path.abspath(__file__)).parent


def log(msg: str) -> None:
    print(f"[load] {time.strftime('%H:%M:%S')} {msg}", flush=True)


def seconds(text: str) -> int:
    """`90`, `90s`, `10m`, `1h` -> seconds."""
    match = re.fullmatch(r"(\d+)([smh]?)", text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r}")
    return int(match[1]) * {"": 1, "s": 1, "m": 60, "h": 3600}[match[2]]


def spawn(cmd: list[str], env: dict, logfile: Path) -> subprocess.Popen:
    out = open(logfile, "ab")
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def start_stack(env: dict, port: int, logs: Path, workers: int = 2, background: int = 2,
                heavy: int = 2) -> list[subprocess.Popen]:
    """As in production (scripts/run.sh): gunicorn 2 workers x 4 threads, `workers` light RQ workers, `background`
    workers for the monitors queue, `heavy` heavy workers and the scheduler; with `background` 0, `workers` RQ
    workers on every queue instead (the layout before the background role, for comparison). bench/checks.py's
    start_stack, with the scheduler and logs kept for the errors."""
    bin_ = ROOT / ".venv" / "bin"
    procs = [spawn([str(bin_ / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "4",
                    "--graceful-timeout", "5", "wsgi:app"], env, logs / "gunicorn.log")]
    worker = [str(bin_ / "flask"), "jobs", "worker"]
    roles = [("worker", [], workers)] if not background else [
        ("worker", ["--light"], workers), ("background", ["--background"], background), ("heavy", ["--heavy"], heavy)]
    procs += [spawn(worker + args, env, logs / f"{name}{i + 1}.log") for name, args, n in roles for i in range(n)]
    procs.append(spawn([str(bin_ / "flask"), "jobs", "scheduler"], env, logs / "scheduler.log"))
    wait_ready(port, "/healthz", procs[0])
    return procs


class Analyzer:
    """What PostgreSQL's autovacuum does for the planner, when the server runs without it (this machine's cluster
    has `autovacuum = off`): ANALYZE the load's database every `every` seconds. Without fresh statistics the
    tables, empty when the migrations made them, keep being planned as empty while they grow, and one event read
    by its uuid went from 1 ms to 122 ms in five minutes (a nested loop over every entity): the saturation the
    runs of 26 Nov saw after 6.5 minutes. Production runs autovacuum (docs/operations.md)."""

    def __init__(self, url: str, every: float = 60.0):
        with psycopg.connect(_seed.plain_url(url), autocommit=True) as conn:
            self.needed = conn.execute("SHOW autovacuum").fetchone()[0] != "on"
        self.url, self.every, self.runs, self.last = url, every, 0, 0.0

    def __call__(self, force: bool = False) -> None:
        if self.needed and (force or time.monotonic() - self.last >= self.every):
            with psycopg.connect(_seed.plain_url(self.url), autocommit=True) as conn:
                conn.execute("ANALYZE")
            self.runs, self.last = self.runs + 1, time.monotonic()


ROLES = (("web", "gunicorn"), ("background", "jobs worker --background"), ("heavy", "jobs worker --heavy"),
         ("workers", "jobs worker"), ("scheduler", "jobs scheduler"))


def cpu_by_role(procs: list[subprocess.Popen]) -> dict[str, float]:
    """CPU seconds so far of the app's processes (each with its children: gunicorn's workers, RQ's work horses)
    by role, and of the PostgreSQL and Redis processes of the machine (locust's is the runner's: its child)."""
    import psutil
    out = {role: 0.0 for role, _ in ROLES} | {"postgresql": 0.0, "redis": 0.0}

    def seconds(p) -> float:
        try:
            t = p.cpu_times()
            return t.user + t.system + t.children_user + t.children_system
        except psutil.Error:
            return 0.0
    for proc in procs:
        try:
            top = psutil.Process(proc.pid)
            line = " ".join(top.cmdline())
            family = [top, *top.children(recursive=True)]
        except psutil.Error:
            continue
        role = next((r for r, needle in ROLES if needle in line), None)
        if role:
            out[role] += sum(seconds(p) for p in family)
    for p in psutil.process_iter(["name"]):
        name = p.info["name"] or ""
        key = "postgresql" if name.startswith("postgres") else "redis" if name.startswith("redis") else None
        if key:
            out[key] += seconds(p)
    return {k: round(v, 1) for k, v in out.items()}


# ------------------------------------------------------------------ seeding

def pressure() -> dict[str, int]:
    """The kernel's pressure stall totals (microseconds some task waited for a CPU, or for I/O; /proc/pressure, Linux
    4.20+): their growth over the load says whether the machine, not the product, made requests wait. Empty when the
    kernel does not have them."""
    totals = {}
    for resource in ("cpu", "io"):
        try:
            lines = Path(f"/proc/pressure/{resource}").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            kind, *fields = line.split()
            totals[f"{resource}_{kind}"] = int(dict(f.split("=") for f in fields)["total"])
    return totals


def machine_busy() -> tuple[int, int]:
    """(busy, all) clock ticks of every CPU of the machine so far (/proc/stat): what the roles above do not see
    (other processes, the kernel's own threads, short-lived processes)."""
    ticks = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = ticks[3] + ticks[4]  # idle, iowait
    return sum(ticks[:8]) - idle, sum(ticks[:8])


def pg_disk_reads(url: str) -> tuple[int, int]:
    """(blocks read from the operating system, blocks found in shared buffers) of the load's database so far."""
    with psycopg.connect(_seed.plain_url(url)) as conn:
        return tuple(conn.execute("SELECT blks_read, blks_hit FROM pg_stat_database WHERE datname = current_database()")
                     .fetchone())


def listed_people(url: str, n: int) -> list[tuple[str, str, str | None]]:
    """(first, last, date of birth or None) of people of the synthetic list, Latin script: customers who happen
    to be listed (with the listed date of birth, or none: a different one would rule the match out)."""
    with psycopg.connect(_seed.plain_url(url)) as conn:
        rows = conn.execute("SELECT caption, data FROM screening_records WHERE schema = 'Person' "
                            "AND removed_in_version IS NULL ORDER BY id LIMIT 20000").fetchall()
    people = []
    for caption, data in rows:
        parts = caption.replace(",", " ").split()
        if len(parts) >= 2 and caption.isascii():
            dob = next((d for d in (data or {}).get("birth_dates") or [] if len(d) == 10), None)
            people.append((" ".join(parts[:-1]), parts[-1], dob))
    random.Random(3).shuffle(people)
    return people[:n]


FIRST = ("James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara Richard Susan "
         "Wei Olga Aisha Hiroshi Priya Ahmed Chen Yuki Ivan Mei Raj Ana Lucas Sofia Mateo Chloe Liam Noah").split()
LAST = ("Smith Johnson Williams Brown Jones Garcia Miller Davis Wilson Anderson Taylor Moore Martin Lee Walker "
        "Young Allen King Wright Scott Nguyen Hill Green Adams Baker Campbell Mitchell Carter Roberts").split()


def people(rng: random.Random, listed: list[tuple[str, str]], n: int, listed_share: float) -> list[dict]:
    out = []
    for _ in range(n):
        if listed and rng.random() < listed_share:
            first, last, dob = rng.choice(listed)
        else:
            first, last = rng.choice(FIRST), rng.choice(LAST)
            dob = f"{rng.randint(1940, 2004)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        out.append({"entity_type": "individual", "first_name": first, "last_name": last, "birth_date": dob or ""})
    return out


def wait_checks(client: httpx.Client, uuids: list[str], timeout: float = 600) -> None:
    pending = set(uuids)
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for u in list(pending):
            if client.get(f"/checks/{u}").json()["data"]["status"] in ("complete", "failed"):
                pending.discard(u)
        time.sleep(0.5)
    if pending:
        raise SystemExit(f"{len(pending)} seed checks did not end")


def seed(url: str, env: dict, args) -> dict:
    t0 = time.perf_counter()
    _seed.recreate_database(url)
    _seed._flask(["db", "upgrade"], env)
    boot = json.loads(_seed._flask(["accounts", "bootstrap", "--name", "Load test", "--email", "admin@load.example.com",
                                    "--password", PASSWORD, "--credit", "100000000"], env).strip().splitlines()[-1])
    analysts = []
    for i in range(args.analyst_logins):
        email = f"analyst{i + 1}@load.example.com"
        _seed._flask(["accounts", "create-user", "--account", boot["account_uuid"], "--email", email,
                      "--password", PASSWORD, "--role", "analyst"], env)
        analysts.append(email)
    log(f"schema, account and {len(analysts)} analysts ({time.perf_counter() - t0:.0f} s); "
        f"generating {args.records:,} synthetic list records")
    _seed._flask(["lists", "generate-synthetic", "--count", str(args.records), "--seed", "21"], env)
    log(f"lists ready ({time.perf_counter() - t0:.0f} s)")
    return {"boot": boot, "analysts": analysts, "listed": listed_people(url, 2000)}


def seed_over_api(base: str, seeded: dict, args, env: dict) -> dict:
    """The program, its entities and their first checks (the analysts' starting inbox), and the monitor."""
    client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {seeded['boot']['api_key']}"},
                          timeout=60)
    rng = random.Random(21)
    program = client.post("/programs", json={"program_name": "Onboarding"}).json()["data"]["uuid"]
    rows = people(rng, seeded["listed"], args.entities, 1 / 3)
    csv = "entity_type,first_name,last_name,birth_date\n" + "".join(
        f"{r['entity_type']},{r['first_name']},{r['last_name']},{r['birth_date']}\n" for r in rows)
    r = client.post(f"/programs/{program}/entities/bulk", content=csv.encode(), headers={"Content-Type": "text/csv"})
    assert r.status_code in (201, 202), r.text[:500]
    if r.status_code == 202:  # a large import is a heavy job (docs/heavy-jobs.md): its file names the entities
        deadline = time.monotonic() + 300
        while (job := client.get(r.headers["Location"].removeprefix("/api/v1")).json()["data"])["status"] in (
                "queued", "running"):
            assert time.monotonic() < deadline, job
            time.sleep(0.5)
        assert job["status"] == "complete", job
        entities = [str(u) for u in client.get(job["result_url"].removeprefix("/api/v1")).json()["entity_uuids"]]
    else:
        entities = [str(u) for u in r.json()["data"]["entity_uuids"]]
    t0 = time.perf_counter()

    def launch(e: str) -> str:
        with httpx.Client(base_url=base, headers=client.headers, timeout=60) as c:
            return c.post(f"/entities/{e}/checks", json={"check_types": ["pep_sanction_check"]}).json()["data"]["uuid"]
    with cf.ThreadPoolExecutor(8) as pool:
        checks = list(pool.map(launch, entities))
    wait_checks(client, checks)
    events = client.get("/events", params={"per_page": 1}).json()["meta"]["total"]
    log(f"{len(entities)} entities, their first checks ended in {time.perf_counter() - t0:.0f} s: {events} events")
    out = {"program": program, "entities": entities, "events_at_start": events, "monitor": None}
    if args.monitor_entities:
        t0 = time.perf_counter()
        mprog = client.post("/programs", json={"program_name": "Monitored customers"}).json()["data"]["uuid"]
        _seed._flask(["entities", "generate-synthetic", "--program", mprog, "--count", str(args.monitor_entities),
                      "--seed", "5"], env)
        monitor = client.post(f"/programs/{mprog}/monitors", json={
            "monitor_name": "Load test", "monitor_check_type": "pep_sanction_check", "status": "active",
            "schedule": "manual"})
        assert monitor.status_code == 201, monitor.text[:500]
        out["monitor"] = monitor.json()["data"]["uuid"]
        out["monitor_program"] = mprog
        log(f"{args.monitor_entities:,} monitored entities and their monitor ({time.perf_counter() - t0:.0f} s)")
    return out


# ------------------------------------------------------------------ measuring

def queue_depth(redis_url: str) -> dict[str, int]:
    """Jobs waiting and running per queue of the app (RQ's queue list and started-job registry)."""
    from redis import Redis
    from rq import Queue
    from rq.registry import StartedJobRegistry

    from app.jobs import QUEUES  # checks, monitors, pdf, notify, maintenance (and webhooks once merged)
    conn = Redis.from_url(redis_url)
    out = {}
    for name in QUEUES:
        q = Queue(QUEUE_PREFIX + name, connection=conn)
        out[name] = q.count + StartedJobRegistry(queue=q).count
    return out


def unfinished_checks(url: str) -> dict[str, int]:
    with psycopg.connect(_seed.plain_url(url)) as conn:
        rows = conn.execute("SELECT status, count(*) FROM checks GROUP BY status").fetchall()
    return {status: n for status, n in rows}


def server_errors(logs: Path) -> int:
    """Tracebacks in the app's logs, and gunicorn workers that timed out or were killed (their requests' clients
    see a closed connection)."""
    needles = ("Traceback", "WORKER TIMEOUT", "was sent SIGKILL", "Worker failed to boot")
    return sum(1 for p in logs.glob("*.log") if p.name != "locust.log"
               for line in p.read_text(errors="replace").splitlines() if any(n in line for n in needles))


def monitor_run(client: httpx.Client, run_uuid: str | None) -> dict | None:
    if not run_uuid:
        return None
    return client.get(f"/monitor-runs/{run_uuid}").json()["data"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=14, help="locust users (a third analysts, the rest integrators)")
    ap.add_argument("--rate", type=float, default=7, help="user actions a second, all users together")
    ap.add_argument("--duration", type=seconds, default="2m", help="e.g. 120, 2m, 10m")
    ap.add_argument("--entities", type=int, default=300, help="entities of the analysts' program")
    ap.add_argument("--records", type=int, default=20_000, help="synthetic list records")
    ap.add_argument("--analyst-logins", type=int, default=10, help="portal users the analysts sign in as")
    ap.add_argument("--monitor-entities", type=int, default=0, help="entities of a monitored program (0: none)")
    ap.add_argument("--monitor-delay", type=seconds, default="30", help="seconds into the load the run starts")
    ap.add_argument("--monitor-pace", type=float, default=0,
                    help="MONITOR_ENTITIES_PER_SECOND of the background workers (0: unpaced, the app's default)")
    ap.add_argument("--background-workers", type=int, default=2,
                    help="workers of the monitors queue (0: the 2 RQ workers take every queue, as before 28 Nov)")
    ap.add_argument("--drain-timeout", type=seconds, default="15m")
    ap.add_argument("--results", type=Path, default=None, help="default /tmp/load-results/<time>")
    ap.add_argument("--keep-db", action="store_true", help="do not drop the database at the end")
    args = ap.parse_args()
    results = args.results or Path("/tmp/load-results") / datetime.now().strftime("%Y%m%d-%H%M%S")
    results.mkdir(parents=True, exist_ok=True)
    logs = results / "logs"
    logs.mkdir(exist_ok=True)
    url = f"{PG}screening_load_{os.getpid()}"
    redis_url = f"redis://127.0.0.1:6379/{REDIS_DB}"
    import redis
    redis.Redis.from_url(redis_url).flushdb()  # this bench's own index only
    env = {**_seed.app_env(url, redis_url), "RQ_QUEUE_PREFIX": QUEUE_PREFIX, "RATELIMIT_KEY_PREFIX": "benchload",
           "DEFAULT_API_RATE_LIMIT": "10000000", "LOGIN_RATE_LIMIT": "10000 per minute",
           "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.0/8", "SCREENING_INDEX_DIR": str(results / "index"),
           "STORAGE_PATH": str(results / "storage"), "MAIL_OUTBOX_DIR": str(results / "mail"),
           "SMS_OUTBOX_DIR": str(results / "sms"), "RECOVERY_GRACE_SECONDS": "120",
           "MONITOR_ENTITIES_PER_SECOND": str(args.monitor_pace)}
    procs: list[subprocess.Popen] = []
    summary: dict = {"args": {k: str(v) for k, v in vars(args).items()}, "results": str(results),
                     "cores": os.cpu_count()}
    try:
        seeded = seed(url, env, args)
        port = free_port()
        procs = start_stack(env, port, logs, background=args.background_workers)
        base = f"http://127.0.0.1:{port}"
        api = f"{base}/api/v1"
        world = seed_over_api(api, seeded, args, env)
        config = {"api_key": seeded["boot"]["api_key"], "analysts": seeded["analysts"], "password": PASSWORD,
                  "program": world["program"], "entities": world["entities"], "listed": seeded["listed"][:500],
                  "rate": args.rate, "users": args.users, "results": str(results)}
        (results / "config.json").write_text(json.dumps(config))
        client = httpx.Client(base_url=api, headers={"Authorization": f"Bearer {seeded['boot']['api_key']}"},
                              timeout=60)
        analyze = Analyzer(url)
        analyze(force=True)  # after the seeding, as autovacuum would have by now
        cpu0 = os.times()
        roles0 = cpu_by_role(procs)
        load0 = os.getloadavg()
        stall0, blocks0, busy0 = pressure(), pg_disk_reads(url), machine_busy()
        locust_cmd = [str(ROOT / ".venv" / "bin" / "locust"), "-f", str(HERE / "locustfile.py"), "--headless",
                      "--host", base, "-u", str(args.users), "-r", str(max(1.0, args.users / 10)),
                      "-t", f"{args.duration}s", "--stop-timeout", "60", "--csv", str(results / "load"),
                      "--csv-full-history", "--html", str(results / "report.html"), "--only-summary",
                      "--loglevel", "WARNING"]
        log(f"locust: {args.users} users, {args.rate:g} actions/s, {args.duration} s -> {results}")
        started = time.monotonic()
        loc = subprocess.Popen(locust_cmd, cwd=ROOT, env={**os.environ, "LOAD_CONFIG": str(results / "config.json")},
                               stdout=open(logs / "locust.log", "wb"), stderr=subprocess.STDOUT)
        run_uuid = None
        depth_max = 0
        while loc.poll() is None:
            time.sleep(2)
            if world["monitor"] and run_uuid is None and time.monotonic() - started >= args.monitor_delay:
                r = client.post(f"/monitors/{world['monitor']}/run", json={"mode": "all"})
                assert r.status_code == 202, r.text[:500]
                run_uuid = r.json()["data"]["uuid"]
                summary["monitor_run_started_s"] = round(time.monotonic() - started, 1)
                log(f"monitor run {run_uuid} started ({args.monitor_entities:,} entities)")
            depth_max = max(depth_max, sum(queue_depth(redis_url).values()))
            analyze()
        stopped = time.monotonic()
        roles1 = cpu_by_role(procs)
        stall1, blocks1, busy1 = pressure(), pg_disk_reads(url), machine_busy()
        log(f"locust ended (exit {loc.returncode}); queues until empty")
        drained = None
        while time.monotonic() - stopped < args.drain_timeout:
            depth = queue_depth(redis_url)
            if sum(depth.values()) == 0:
                drained = round(time.monotonic() - stopped, 1)
                break
            time.sleep(1)
        run = monitor_run(client, run_uuid)
        checks = unfinished_checks(url)
        summary.update({
            "locust_exit": loc.returncode, "queue_depth_max": depth_max, "queues_drained_after_s": drained,
            "queue_depth_end": queue_depth(redis_url), "checks_by_status": checks,
            "checks_unfinished": sum(n for s, n in checks.items() if s not in ("complete", "failed")),
            "events_at_start": world["events_at_start"],
            "events_at_end": client.get("/events", params={"per_page": 1}).json()["meta"]["total"],
            "monitor_run": run, "load_average_at_start": load0, "load_average_at_end": os.getloadavg(),
            "runner_cpu_s": round(sum(os.times()[:4]) - sum(cpu0[:4]), 1),
            "cpu_s_by_role": {k: round(roles1[k] - roles0[k], 1) for k in roles1},
            "analyze_stand_in": {"autovacuum_off": analyze.needed, "runs": analyze.runs},
            "stall_share": {k: round((stall1[k] - stall0[k]) / 1e6 / (stopped - started), 3) for k in stall1},
            "machine_busy_cores": round((busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1) * (os.cpu_count() or 1),
                                        2),
            "pg_blocks": {"read": blocks1[0] - blocks0[0], "hit": blocks1[1] - blocks0[1]},
            "server_errors_logged": server_errors(logs)})
        if run:
            summary["monitor_run_s"] = _run_seconds(run)
    finally:
        for p in procs:
            stop(p)
        if not args.keep_db:
            with psycopg.connect(_seed.admin_url(url), autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{_seed.db_name(url)}" WITH (FORCE)')
    stats = _read_json(results / "locust_summary.json")
    summary["locust"] = stats
    if summary.get("monitor_run") and summary["monitor_run"].get("ended_at"):
        summary["during_monitor_run"] = window_figures(results / "locust_samples.json", summary["monitor_run"])
    (results / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    report(summary)
    ok = (stats and stats["total"]["failures"] == 0 and summary["checks_unfinished"] == 0
          and summary["queues_drained_after_s"] is not None)
    return 0 if ok else 1


def _run_seconds(run: dict) -> float | None:
    started, ended = run.get("started_at") or run.get("created_at"), run.get("ended_at")
    if not (started and ended):
        return None
    parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    return round((parse(ended) - parse(started)).total_seconds(), 1)


def window_figures(samples_path: Path, run: dict) -> dict | None:
    """API and portal latency while the monitor run went on (started_at .. ended_at) and outside it, in the same
    load: the comparison the other processes on a shared machine disturb least."""
    samples = _read_json(samples_path)
    if not samples:
        return None
    parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()  # noqa: E731
    start, end = parse(run["started_at"]), parse(run["ended_at"])
    out = {"run_seconds": round(end - start, 1)}
    for group in ("api", "portal"):
        for where, inside in (("during", True), ("outside", False)):
            values = sorted(ms for t, g, ms in samples if g == group and (start <= t <= end) == inside)
            if values:
                pick = lambda p: values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]  # noqa: E731
                out[f"{group}_{where}"] = {"count": len(values), "p50": pick(50), "p95": pick(95), "p99": pick(99)}
    return out


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def report(s: dict) -> None:
    stats = s.get("locust")
    print()
    print(f"Load test: {s['args']['users']} users at {s['args']['rate']} actions/s for {s['args']['duration']} s "
          f"({s['cores']} cores, load average {s['load_average_at_start'][0]:.1f} before, "
          f"{s['load_average_at_end'][0]:.1f} after)")
    if stats:
        print(f"{'group / request':<58} {'count':>7} {'fail':>5} {'rps':>6} {'p50':>6} {'p95':>6} {'p99':>6} "
              f"{'max':>6}")
        for key in ("total", "api", "portal", "webhook", "loop"):
            g = stats.get(key)
            if g and g["count"]:
                print(_row(key.upper(), g))
        for name, g in sorted(stats["by_name"].items()):
            print(_row("  " + name, g))
        print(f"webhooks: {stats['webhooks']}")
    else:
        print("no locust summary (see logs/locust.log)")
    print(f"queue depth max {s['queue_depth_max']}; queues empty {s['queues_drained_after_s']} s after the load "
          f"stopped; checks by status {s['checks_by_status']} ({s['checks_unfinished']} unfinished)")
    print(f"events: {s['events_at_start']} at start, {s['events_at_end']} at the end; tracebacks and worker timeouts "
          f"in the server logs: {s['server_errors_logged']}")
    if s.get("monitor_run"):
        run = s["monitor_run"]
        print(f"monitor run: {run.get('status')}, {run.get('entities_processed')}/{run.get('entities_total')} "
              f"entities, started {s.get('monitor_run_started_s')} s into the load, took {s.get('monitor_run_s')} s")
        window = s.get("during_monitor_run") or {}
        for group in ("api", "portal"):
            for where, words in (("during", "while the run went on"), ("outside", "before and after it")):
                g = window.get(f"{group}_{where}")
                if g:
                    print(f"  {group.upper()} {words}: {g['count']} requests, p50 {g['p50']:.0f} / p95 {g['p95']:.0f} "
                          f"/ p99 {g['p99']:.0f} ms")
    cpu = s.get("cpu_s_by_role") or {}
    seconds = float(s["args"]["duration"])
    print("CPU during the load, in cores: " + ", ".join(f"{k} {v / seconds:.2f}" for k, v in cpu.items())
          + f", runner and locust {s['runner_cpu_s'] / seconds:.2f}; the whole machine "
          + f"{s.get('machine_busy_cores', float('nan')):.2f} of {s['cores']}")
    stall = s.get("stall_share") or {}
    if stall:
        print("time some task waited (pressure stall, share of the load's time): "
              + ", ".join(f"{k.replace('_', ' ')} {v:.0%}" for k, v in stall.items()))
    blocks = s.get("pg_blocks") or {}
    if blocks:
        total = blocks["read"] + blocks["hit"]
        print(f"PostgreSQL blocks: {blocks['hit']:,} from shared buffers, {blocks['read']:,} read from the operating "
              f"system ({blocks['read'] / max(total, 1):.1%})")
    a = s.get("analyze_stand_in") or {}
    if a.get("autovacuum_off"):
        print(f"autovacuum is off on this server: the runner ran ANALYZE {a['runs']} times in its place")
    print(f"results: {s['results']}")


def _row(name: str, g: dict) -> str:
    return (f"{name[:58]:<58} {g['count']:>7} {g['failures']:>5} {g['rps']:>6.1f} {g['p50']:>6.0f} {g['p95']:>6.0f} "
            f"{g['p99']:>6.0f} {g['max']:>6.0f}")


if __name__ == "__main__":
    sys.exit(main())
