#!/usr/bin/env python3
"""Checks benchmark: launch latency, launch → complete latency, sustained throughput and PDF rendering, over HTTP
against the app as in production (gunicorn 2 workers x 4 threads) with 2 RQ workers, on PostgreSQL and Redis.

    python bench/checks.py [--launches 300] [--latency 100] [--throughput 300] [--clients 16] [--pdfs 30]

The throughput run is issue 21's: N adhoc `pep_sanction_check` launches (`--throughput-kind entity`: on the
bench's 50 entities instead) from `--clients` concurrent clients, each launch on a new connection, timed from the
first POST to the last check ended (read from the database every 10 ms, so that the wait adds no HTTP requests
to the CPU measured). Before the stack starts, bench/_counts.py counts the SQL statements and Redis commands of
a launch and of a run (`--counts`; `--counts-only` prints only those).

It creates and drops its own database (`screening_bench_checks_<pid>`) and starts a redis-server of its own. The
CPU per check counts only the bench's own processes (the machine is shared: `CpuMeter`). Screening lists: the
invented demo list plus N synthetic records (`--records`, default 20,000) so the engine works on a realistic
index; nothing is read from ../shared/data. Prints the figures; writes nothing into the repository.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import http.client
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time

from _venv import HERE, ROOT  # noqa: E402,F401 (first: re-runs with .venv/bin/python)

import httpx  # noqa: E402
import psycopg  # noqa: E402

import _seed  # noqa: E402
from api_latency import free_port, stop, wait_ready  # noqa: E402

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/"
FIRST = ["Anna", "Bilal", "Chen", "Dmitri", "Elena", "Fatima", "Giorgio", "Hana", "Ivan", "Julia", "Kofi", "Lars",
         "Mei", "Nikolai", "Olga", "Pedro", "Rania", "Sergei", "Tomas", "Yusuf"]
LAST = ["Abramov", "Bianchi", "Castillo", "Dimitrov", "Eriksen", "Fernandes", "Gallagher", "Haddad", "Ivanova",
        "Jovanovic", "Kowalski", "Lindqvist", "Morales", "Novak", "Okafor", "Petrov", "Quinn", "Rossi", "Sato"]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def start_stack(env: dict, port: int, *, workers: int = 2, worker_class: str = "fork") -> list:
    """The app as in production: gunicorn 2 workers x 4 threads, and RQ workers on the checks and notify queues.
    Returns the processes, the web server first, once it answers /healthz."""
    def spawn(cmd: list[str]):
        return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    bin_ = ROOT / ".venv" / "bin"
    procs = [spawn([str(bin_ / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", "2", "--threads", "4",
                    "wsgi:app"])]
    procs += [spawn([str(bin_ / "flask"), "jobs", "worker", "--queue", "checks", "--queue", "notify",
                     "--worker-class", worker_class]) for _ in range(workers)]
    wait_ready(port, "/healthz", procs[0])
    return procs


class CpuMeter:
    """CPU seconds (user + system, reaped children included) of this bench's own processes, by role: the web server
    and its workers, the RQ workers (and their work horses), the bench's private redis-server, and the PostgreSQL
    backends serving the bench's database. Other work on the machine is not counted. A thread samples /proc every
    20 ms, so that a process that ends in the window (a backend whose connection closes) counts up to its last
    sample; one born in the window counts from zero."""
    ROLES = ("web (gunicorn)", "RQ workers", "PostgreSQL", "Redis")

    def __init__(self, procs: list, redis_pid: int, db_name: str):
        self.roots = {procs[0].pid: self.ROLES[0], redis_pid: self.ROLES[3],
                      **{p.pid: self.ROLES[1] for p in procs[1:]}}
        self.db_name = db_name
        self.ticks = os.sysconf("SC_CLK_TCK")

    def _sample(self) -> dict[int, tuple[str, float]]:
        table = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            table[int(pid)] = (int(fields[1]), sum(int(x) for x in fields[11:15]) / self.ticks, cmd)
        out = {}
        for pid, (ppid, cpu, cmd) in table.items():
            role, walk = None, pid
            for _ in range(6):  # the process or one of its ancestors is a root of the stack
                if walk in self.roots:
                    role = self.roots[walk]
                    break
                walk = table.get(walk, (0,))[0]
                if not walk:
                    break
            if role is None and cmd.startswith("postgres:") and f" {self.db_name} " in cmd:
                role = self.ROLES[2]
            if role is not None:
                out[pid] = (role, cpu)
        return out

    def __enter__(self):
        import threading
        self.start = self._sample()
        self.last = dict(self.start)
        self._stop = threading.Event()

        def run():
            while not self._stop.wait(0.02):
                self.last.update(self._sample())
        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.last.update(self._sample())
        self.seconds = {role: 0.0 for role in self.ROLES}
        for pid, (role, cpu) in self.last.items():
            self.seconds[role] += cpu - self.start.get(pid, (role, 0.0))[1]
        return False


def private_redis() -> tuple[subprocess.Popen, str]:
    """A redis-server of the bench's own (no persistence), so that its CPU is the bench's alone."""
    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    import redis
    client = redis.Redis(port=port)
    for _ in range(100):
        try:
            client.ping()
            return proc, f"redis://127.0.0.1:{port}/0"
        except redis.ConnectionError:
            time.sleep(0.05)
    raise SystemExit("the bench's redis-server did not start")


def seed_lists(env: dict, n: int) -> None:
    code = f"""
import random
from app import create_app
from app.demo import demo_list
from app.extensions import db
from app.screening import store
from app.screening.records import ListInfo, ListRecord, ParsedList
app = create_app()
with app.app_context():
    store.save_list(db.session, demo_list(), fmt="demo", source="bench", checksum="demo")
    rng = random.Random(7)
    first, last = {FIRST!r}, {LAST!r}
    records = [ListRecord(id=f"syn-{{i}}", schema="Person", caption=f"{{rng.choice(first)}} {{rng.choice(last)}}{{i}}",
                          topics=["sanction"], birth_dates=[f"{{rng.randint(1940, 2000)}}"],
                          sanctions=[{{"programs": ["BENCH"]}}]) for i in range({n})]
    # 30 namesakes of the demo's listed person, so that the PDF's check has a full page of 25 results
    records += [ListRecord(id=f"namesake-{{i}}", schema="Person", caption=f"Anatol Grevskiy",
                           topics=["sanction"], birth_dates=[f"{{1950 + i}}"], countries=["cy"],
                           sanctions=[{{"programs": ["BENCH-NAMESAKE"], "authority": "Bench"}}]) for i in range(30)]
    info = ListInfo(name="bench_synthetic", title="Synthetic", publisher="bench", kind="sanction", jurisdiction="us")
    store.save_list(db.session, ParsedList(info, records), fmt="bench", source="bench", checksum="syn")
    db.session.commit()
"""
    subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-c", code], cwd=ROOT, env=env, check=True)


def count_statements(env: dict, api_key: str, n: int, worker_class: str, profile: str | None = None,
                     trace: str | None = None) -> dict:
    """SQL statements and Redis commands per launch and per run (bench/_counts.py), before the stack starts."""
    out = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), str(HERE / "_counts.py"), "--api-key", api_key,
                          "--n", str(n), "--worker-class", "simple" if worker_class == "simple" else "fork",
                          *(["--profile", profile] if profile else []), *(["--trace", trace] if trace else [])],
                         cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def print_counts(counts: dict | None) -> None:
    if not counts:
        return
    print(f"SQL statements and Redis commands ({counts['n']} launches of each kind, {3 * counts['n']} runs, "
          f"{counts['worker_class']} worker; bench/_counts.py):")
    for what in ("adhoc launch", "entity launch", "idempotent adhoc launch", "run"):
        sql, cmds = counts[what]["sql"], counts[what]["redis"]
        print(f"  per {what}: {counts[what]['cpu_ms']:.2f} ms CPU in the process, "
              f"{sum(sql.values()):.1f} SQL ("
              + ", ".join(f"{k} {v:g}" for k, v in sorted(sql.items(), key=lambda kv: -kv[1])) + f"); "
              f"{sum(cmds.values()):.1f} Redis ("
              + ", ".join(f"{k} {v:g}" for k, v in sorted(cmds.items(), key=lambda kv: -kv[1])) + ")")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=300)
    parser.add_argument("--latency", type=int, default=100)
    parser.add_argument("--throughput", type=int, default=300)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--throughput-kind", choices=("adhoc", "entity"), default="adhoc")
    parser.add_argument("--pdfs", type=int, default=30)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--worker-class", choices=("fork", "simple"), default="fork")
    parser.add_argument("--counts", type=int, default=50,
                        help="launches and runs counted for SQL statements and Redis commands (bench/_counts.py)")
    parser.add_argument("--counts-only", action="store_true", help="count, and skip the timed runs")
    parser.add_argument("--profile", help="cProfile the counted launches and runs into <PROFILE>-launch.pstats, "
                                          "<PROFILE>-run.pstats")
    parser.add_argument("--trace", help="write every SQL statement and Redis command of one launch and one run "
                                        "to this file (bench/_counts.py)")
    args = parser.parse_args()

    url = f"{PG}screening_bench_checks_{os.getpid()}"
    _seed.recreate_database(url)
    redis_proc, redis_url = private_redis()
    import atexit
    atexit.register(stop, redis_proc)
    env = {**_seed.app_env(url, redis_url), "DEFAULT_API_RATE_LIMIT": "10000000", "RQ_QUEUE_PREFIX": "benchchecks:"}
    _seed._flask(["db", "upgrade"], env)
    boot = json.loads(_seed._flask(["accounts", "bootstrap", "--name", "Bench", "--email", "bench@example.com",
                                    "--password", "correct-horse-42", "--credit", "10000000"], env))
    seed_lists(env, args.records)
    counts = (count_statements(env, boot["api_key"], args.counts, args.worker_class, args.profile, args.trace)
              if args.counts else None)
    if args.counts_only:
        with psycopg.connect(_seed.admin_url(url), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{_seed.db_name(url)}" WITH (FORCE)')
        print_counts(counts)
        return 0
    port = free_port()
    procs = []
    try:
        procs += start_stack(env, port, worker_class=args.worker_class)
        base = f"http://127.0.0.1:{port}/api/v1"
        headers = {"Authorization": f"Bearer {boot['api_key']}"}
        client = httpx.Client(base_url=base, headers=headers, timeout=30)
        program = client.post("/programs", json={"program_name": "Bench"}).json()["data"]["uuid"]
        rng = random.Random(1)
        entities = [client.post(f"/programs/{program}/entities", json={
            "entity_type": "individual", "first_name": rng.choice(FIRST), "last_name": rng.choice(LAST)}
            ).json()["data"]["uuid"] for _ in range(50)]
        hit = client.post(f"/programs/{program}/entities", json={
            "entity_type": "individual", "first_name": "Anatol", "last_name": "Grevskiy"}).json()["data"]["uuid"]
        # warm-up: both workers load the index
        for e in entities[:4]:
            client.post(f"/entities/{e}/checks", json={"check_types": ["pep_sanction_check"]})
        time.sleep(3)

        # 1. launch latency (the API answer, 202): while the workers run the launched checks on the same two
        # cores, and with the workers paused (SIGSTOP; as when they run on other machines), then resumed
        def launches(n: int) -> list[float]:
            out = []
            for i in range(n):
                started = time.perf_counter()
                r = client.post(f"/entities/{entities[i % len(entities)]}/checks",
                                json={"check_types": ["pep_sanction_check"]})
                out.append((time.perf_counter() - started) * 1000)
                assert r.status_code == 202, r.text
            return out
        launch_ms = launches(args.launches)
        _drain(url)
        workers = procs[1:]
        for w in workers:
            os.killpg(w.pid, signal.SIGSTOP)
        try:
            launch_alone_ms = launches(args.launches)
        finally:
            for w in workers:
                os.killpg(w.pid, signal.SIGCONT)
        _drain(url)

        # 2. launch -> complete, one at a time, polled every 2 ms
        complete_ms = []
        for i in range(args.latency):
            started = time.perf_counter()
            uuid = client.post(f"/entities/{entities[i % len(entities)]}/checks",
                               json={"check_types": ["pep_sanction_check"]}).json()["data"]["uuid"]
            while client.get(f"/checks/{uuid}").json()["data"]["status"] not in ("complete", "failed"):
                time.sleep(0.002)
            complete_ms.append((time.perf_counter() - started) * 1000)

        # 3. throughput: N launches from C clients, each on a new connection, until all have ended
        # (http.client, not a new httpx.Client per launch: building one, with its TLS context, costs the bench's
        # own process 25-30 ms of CPU, and its threads share one GIL: that capped the throughput at 40 checks/s,
        # whatever the app did; the bench now spends about 3 ms a launch, printed below)
        meter = CpuMeter(procs, redis_proc.pid, _seed.db_name(url)).__enter__()
        bench_cpu, started = time.process_time(), time.perf_counter()
        post_headers = {**headers, "Content-Type": "application/json"}
        with cf.ThreadPoolExecutor(args.clients) as pool:
            def launch(i: int) -> str:
                if args.throughput_kind == "adhoc":
                    path, body = "/api/v1/adhoc-checks", {"check_types": ["pep_sanction_check"], "data": {
                        "first_name": FIRST[i % len(FIRST)], "last_name": LAST[(i * 7) % len(LAST)]}}
                else:
                    path, body = (f"/api/v1/entities/{entities[i % len(entities)]}/checks",
                                  {"check_types": ["pep_sanction_check"]})
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                try:
                    conn.request("POST", path, body=json.dumps(body), headers=post_headers)
                    r = conn.getresponse()
                    text = r.read()
                finally:
                    conn.close()
                assert r.status == 202, text
                return json.loads(text)["data"]["uuid"]
            list(pool.map(launch, range(args.throughput)))
        launched, bench_cpu = time.perf_counter() - started, time.process_time() - bench_cpu
        _drain(url, poll=0.01)
        throughput_seconds = time.perf_counter() - started
        meter.__exit__(None, None, None)
        cpu_per_check = {role: seconds / args.throughput * 1000 for role, seconds in meter.seconds.items()}

        # 4. PDF of a check with results (`--pdfs 0`: skipped)
        results, pdf_ms = 0, []
        uuid = None if not args.pdfs else client.post(f"/entities/{hit}/checks",
                           json={"check_types": ["pep_sanction_check"]}).json()["data"]["uuid"]
        while uuid and client.get(f"/checks/{uuid}").json()["data"]["status"] != "complete":
            time.sleep(0.01)
        if uuid:
            shown = client.get(f"/checks/{uuid}").json()["data"]
            results = len(shown["details"]["results"])
            if not results:
                print("warning: the PDF's check found nothing (are the lists loaded?):", json.dumps(shown)[:500])
        for _ in range(args.pdfs):
            started = time.perf_counter()
            r = client.get(f"/checks/{uuid}/pdf")
            pdf_ms.append((time.perf_counter() - started) * 1000)
            assert r.status_code == 200, (r.status_code, r.text[:300])
    finally:
        for p in procs:
            stop(p)
        with psycopg.connect(_seed.admin_url(url), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{_seed.db_name(url)}" WITH (FORCE)')
    load = os.getloadavg()
    print(f"checks bench: gunicorn 2x4 + 2 RQ workers ({args.worker_class}), PostgreSQL + Redis, "
          f"{args.records:,} synthetic list records "
          f"(load average {load[0]:.1f} at the end, {os.cpu_count()} cores)")
    print(f"launch API (one pep_sanction_check, {args.launches}): p50 {pct(launch_ms, 50):.1f} ms, "
          f"p95 {pct(launch_ms, 95):.1f} ms, p99 {pct(launch_ms, 99):.1f} ms")
    print(f"launch API with the workers paused ({args.launches}): p50 {pct(launch_alone_ms, 50):.1f} ms, "
          f"p95 {pct(launch_alone_ms, 95):.1f} ms, p99 {pct(launch_alone_ms, 99):.1f} ms")
    print(f"launch -> complete ({args.latency}, polled): p50 {pct(complete_ms, 50):.1f} ms, "
          f"p95 {pct(complete_ms, 95):.1f} ms")
    print(f"throughput: {args.throughput:,} {args.throughput_kind} checks launched in {launched:.2f} s by "
          f"{args.clients} clients, all ended {throughput_seconds:.2f} s after the first POST: "
          f"{args.throughput / throughput_seconds:.0f} checks/s end to end")
    print(f"  (the bench's own CPU while launching: {bench_cpu / args.throughput * 1000:.1f} ms a launch)")
    print("CPU per check during the throughput run: " + ", ".join(
        f"{role} {ms:.1f} ms" for role, ms in cpu_per_check.items()) + f"; total {sum(cpu_per_check.values()):.1f} ms")
    print_counts(counts)
    if pdf_ms:
        print(f"PDF report ({results} results, {args.pdfs} renders): p50 {statistics.median(pdf_ms):.0f} ms, "
              f"p95 {pct(pdf_ms, 95):.0f} ms")
    return 0


def _drain(url: str, timeout: float = 900, poll: float = 0.5) -> None:
    """Wait until no check is pending or processing, asking the database (no HTTP request, no rate limit)."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(_seed.plain_url(url), autocommit=True) as conn:
        while time.monotonic() < deadline:
            if not conn.execute("SELECT 1 FROM checks WHERE status IN ('pending', 'processing') LIMIT 1").fetchone():
                return
            time.sleep(poll)
    raise SystemExit("checks did not drain")


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(main())
