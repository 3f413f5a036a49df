"""Recovery drills: no launched check is lost, whatever process dies (app/recovery.py, docs/operations.md).

Real RQ workers and the real scheduler run as processes of their own (`flask jobs worker`, `flask jobs scheduler`)
on real Redis and PostgreSQL, with the sweeper's interval and grace cut to seconds by configuration; processes
die by SIGKILL. Each drill then asserts what a customer and an auditor rely on: every check ends, a failed one is
refunded exactly once, every check is charged exactly once, and no event is raised twice."""
from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.accounts.models import CreditEntry
from app.checks.models import Check
from app.checks.services import MAX_ATTEMPTS
from app.events.models import Event
from app.extensions import db

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
INTERVAL, GRACE = 1, 2  # seconds: RECOVERY_INTERVAL_SECONDS, RECOVERY_GRACE_SECONDS of the drills' processes
LAST_NAMES = {"slow": "sandbox-slow", "hit": "sandbox-hit", "timeout": "sandbox-timeout", "fail": "sandbox-fail",
              "plain": "Drillsworth"}


def _descendants(pid: int) -> list[int]:
    """The pids below `pid` (children, their children, ...), read from /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class Stack:
    """Worker and scheduler processes, each in a session of its own, killed with their descendants (a worker's
    work horses), restarted on demand like `make run`'s supervisor does."""

    def __init__(self, app, tmp_path: Path, redis_url: str | None = None):
        self.tmp = tmp_path
        self.redis_url = redis_url or app.config["REDIS_URL"]
        self.env = {**os.environ, "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"], "REDIS_URL": self.redis_url,
                    "RQ_QUEUE_PREFIX": app.config["RQ_QUEUE_PREFIX"], "FLASK_APP": "wsgi.py",
                    "SCREENING_INDEX_DIR": str(tmp_path / "index"), "MAIL_OUTBOX_DIR": str(tmp_path / "outbox"),
                    "RECOVERY_INTERVAL_SECONDS": str(INTERVAL), "RECOVERY_GRACE_SECONDS": str(GRACE)}
        self.procs: dict[str, subprocess.Popen] = {}
        self.args = {"worker": ["jobs", "worker", "--queue", "checks", "--queue", "maintenance"],
                     "scheduler": ["jobs", "scheduler"]}
        self.started = 0

    def start(self, name: str) -> subprocess.Popen:
        self.started += 1
        log = open(self.tmp / f"{self.started:03d}-{name}.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "flask", *self.args[name]], cwd=ROOT, env=self.env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs[name] = proc
        return proc

    def keep_running(self) -> None:
        for name, proc in list(self.procs.items()):
            if proc.poll() is not None:
                self.start(name)

    def kill(self, name: str) -> None:
        """SIGKILL the process and every descendant: RQ's work horse runs in a process group of its own."""
        proc = self.procs.pop(name, None)
        if proc is not None:
            for pid in [proc.pid, *_descendants(proc.pid)]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            proc.wait(10)

    def close(self) -> None:
        for name in list(self.procs):
            self.kill(name)

    def worker_ready(self, timeout: float = 30) -> None:
        """Wait until the current worker process has registered with RQ (it takes jobs from then on)."""
        from redis import Redis
        from rq import Worker
        pid = self.procs["worker"].pid
        deadline = time.monotonic() + timeout
        while not any(w.pid == pid for w in Worker.all(connection=Redis.from_url(self.redis_url))):
            assert self.procs["worker"].poll() is None, self.logs()
            assert time.monotonic() < deadline, "the worker did not start"
            time.sleep(0.05)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}"
                         for p in sorted(self.tmp.glob("*.log")))


def _launch(tenant, program_uuid: str, kind: str, n: int) -> str:
    entity = tenant.entity(program_uuid, first_name=f"Drill{n}", last_name=LAST_NAMES[kind])
    response = tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["adverse_media"]})
    assert response.status_code == 202, response.get_json()
    return response.get_json()["data"]["uuid"]


def _states(app, uuids) -> dict[str, str]:
    with app.app_context():
        rows = db.session.execute(select(Check.uuid, Check.status).where(Check.uuid.in_([uuid.UUID(u) for u in uuids])))
        result = {str(u): s for u, s in rows}
        db.session.remove()
    return result


def _until_ended(app, uuids, seconds: float, stack: Stack) -> float:
    started = time.monotonic()
    while True:
        stack.keep_running()
        states = _states(app, uuids)
        if all(s in ("complete", "failed") for s in states.values()):
            return time.monotonic() - started
        assert time.monotonic() - started < seconds, \
            f"not ended within {seconds} s: {Counter(states.values())}\n{stack.logs()}"
        time.sleep(0.25)


def _assert_books_hold(app, launched: dict[str, str]) -> dict[str, Check]:
    """Every check ended; charged once; refunded once when failed, never when complete; one event per hit that
    completed and none otherwise (a second completion would raise another); attempts within the limit."""
    with app.app_context():
        checks = {str(c.uuid): c for c in db.session.scalars(
            select(Check).where(Check.uuid.in_([uuid.UUID(u) for u in launched])))}
        ledger = Counter((row.check_id, row.kind) for row in db.session.scalars(
            select(CreditEntry).where(CreditEntry.check_id.in_([c.id for c in checks.values()]))))
        events = Counter(db.session.scalars(select(Event.check_id).where(
            Event.check_id.in_([c.id for c in checks.values()]))))
        problems = []
        for u, kind in launched.items():
            c = checks[u]
            refunds = 1 if c.status == "failed" else 0
            expected_events = 1 if (kind == "hit" and c.status == "complete") else 0
            if c.status not in ("complete", "failed"):
                problems.append(f"{u} {kind}: {c.status}")
            if ledger[(c.id, "charge")] != 1 or ledger[(c.id, "refund")] != refunds:
                problems.append(f"{u} {kind} {c.status}: {ledger[(c.id, 'charge')]} charges, "
                                f"{ledger[(c.id, 'refund')]} refunds")
            if events[c.id] != expected_events:
                problems.append(f"{u} {kind} {c.status}: {events[c.id]} events")
            if c.attempts > MAX_ATTEMPTS:
                problems.append(f"{u} {kind}: {c.attempts} attempts")
            if c.status == "failed" and not c.failed_reason:
                problems.append(f"{u} {kind}: failed without a reason")
            # what may fail: forced failures, timeouts after their retries, and runs lost on every attempt
            if c.status == "failed" and kind not in ("fail", "timeout") and "lost" not in c.failed_reason:
                problems.append(f"{u} {kind}: failed with {c.failed_reason!r}")
            if c.status == "complete" and kind in ("fail", "timeout"):
                problems.append(f"{u} {kind}: complete")
        assert not problems, "\n".join(problems)
        db.session.expunge_all()
        db.session.remove()
    return checks


def test_kill_drill_workers_sigkilled_at_random_moments(app, tenant, tmp_path):
    """20 rounds: a worker takes a batch of checks (slow ones, hits, timeouts, failures) and is SIGKILLed with its
    work horse; a fresh one starts. The rounds take turns: killed at once (its checks still queued, or just
    taken), killed while a slow check runs (mid-provider), and killed at a random moment (after a dequeue, mid-run,
    mid-commit, or idle). Then every check ends within the recovery's seconds, every check killed while it ran was
    recovered, and the books hold."""
    rng = random.Random(22)
    program = tenant.program(program_name="Kill drill")["uuid"]
    stack = Stack(app, tmp_path)
    launched: dict[str, str] = {}
    killed_running: set[str] = set()  # slow checks seen processing just before their worker's death
    phases: Counter = Counter()
    try:
        stack.start("scheduler")
        n = 0
        for round_ in range(20):
            phase = ("at once", "mid-run", "random", "mid-run")[round_ % 4]
            stack.start("worker")
            stack.worker_ready()
            batch = []
            for kind in ["slow", *rng.choices(["slow", "hit", "hit", "plain", "timeout", "fail"], k=3)]:
                n += 1
                batch.append(_launch(tenant, program, kind, n))
                launched[batch[-1]] = kind
            if phase == "mid-run":
                # A slow check of any round (the sweeper queues the lost ones again, ahead of this batch) running.
                deadline = time.monotonic() + 30
                while not (running := {u for u, s in _states(app, list(launched)).items()
                                       if s == "processing" and launched[u] == "slow"}):
                    assert time.monotonic() < deadline, f"no slow check started: {_states(app, batch)}"
                    time.sleep(0.01)
                killed_running |= running  # a slow check runs for 2 s: it dies with the worker
            elif phase == "random":
                time.sleep(rng.uniform(0.0, 2.5))
            phases[phase] += 1
            stack.kill("worker")
        stack.start("worker")
        took = _until_ended(app, list(launched), 120, stack)
    finally:
        stack.close()
    checks = _assert_books_hold(app, launched)
    assert len(killed_running) >= 10, killed_running
    not_recovered = [u for u in killed_running if not checks[u].recoveries]
    assert not not_recovered, f"killed while running, yet never recovered: {not_recovered}"
    recovered = [c for c in checks.values() if c.recoveries]
    assert {"attempt", "at", "why"} <= set(recovered[0].recoveries[0])
    print(f"kill drill: {dict(phases)}; {len(killed_running)} checks killed mid-run; {len(recovered)} checks "
          f"recovered; all ended {took:.1f} s after the last kill; {Counter(c.status for c in checks.values())}")


def _redis_server(port: int) -> subprocess.Popen:
    from redis import Redis
    server = shutil.which("redis-server")
    assert server, "redis-server is needed for this test"
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 10
    while True:
        try:
            if Redis(port=port).ping():
                return proc
        except Exception:
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)


def test_redis_restarted_empty_mid_run(app, tenant, tmp_path):
    """Redis dies with checks queued and one running, and comes back empty (no persistence): every pending and
    processing check is dispatched again from the database and ends; the books hold."""
    from tests.api.test_resilience import _free_port, app_with_redis
    from tests.factories import ApiClient
    port = _free_port()
    url = f"redis://127.0.0.1:{port}/0"
    redis_proc = _redis_server(port)
    stack = Stack(app, tmp_path, redis_url=url)
    launched: dict[str, str] = {}
    try:
        with app_with_redis(app, url) as live:
            tenant.api = ApiClient(live, tenant.api_key)
            program = tenant.program(program_name="Redis drill")["uuid"]
            stack.start("scheduler")
            stack.start("worker")
            stack.worker_ready()
            for n, kind in enumerate(["slow", "hit", "slow", "plain", "slow", "hit", "fail", "slow", "plain", "hit"]):
                launched[_launch(tenant, program, kind, n)] = kind
            time.sleep(2.5)  # one slow check done, the next running, the rest queued
            before = Counter(_states(app, launched).values())
            redis_proc.kill()
            redis_proc.wait(10)
            redis_proc = _redis_server(port)  # the same address, empty
            took = _until_ended(app, list(launched), 60, stack)
    finally:
        stack.close()
        redis_proc.kill()
        redis_proc.wait(10)
    assert before["pending"] >= 3 and before["complete"] < len(launched), before  # it died mid-run
    checks = _assert_books_hold(app, launched)
    notes = [r["why"] for c in checks.values() for r in (c.recoveries or [])]
    assert any("not in Redis" in why for why in notes), notes
    print(f"Redis drill: {dict(before)} when Redis died; all ended {took:.1f} s after it came back empty")


WEB_DIES_AFTER_COMMIT = textwrap.dedent("""
    import os, signal, sys
    from app import create_app, jobs
    app = create_app()
    def die(*args, **kwargs):  # the enqueue that follows the commit: the process dies right there
        os.kill(os.getpid(), signal.SIGKILL)
    jobs.enqueue_now = jobs.enqueue_many_now = die  # a launch queues its runs in one round trip
    response = app.test_client().post(f"/api/v1/entities/{sys.argv[1]}/checks", json={"check_types": ["adverse_media"]},
                                      headers={"Authorization": f"Bearer {sys.argv[2]}"})
    print("not killed:", response.status_code, response.get_data(as_text=True))
""")


def test_web_process_killed_between_commit_and_enqueue(app, tenant, tmp_path):
    """A web process that dies after committing a launch and before queuing its job leaves a charged check with no
    job anywhere: the sweeper finds it and dispatches it; it completes, charged once."""
    from redis import Redis
    program = tenant.program(program_name="Web drill")["uuid"]
    entity = tenant.entity(program, first_name="Drill", last_name="sandbox-hit")
    stack = Stack(app, tmp_path)
    web = subprocess.run([sys.executable, "-c", WEB_DIES_AFTER_COMMIT, entity["uuid"], tenant.api_key], cwd=ROOT,
                         env=stack.env, capture_output=True, text=True, timeout=60)
    assert web.returncode == -signal.SIGKILL, (web.returncode, web.stdout, web.stderr[-2000:])
    [listed] = tenant.api.get(f"/entities/{entity['uuid']}/checks").get_json()["data"]
    assert listed["status"] == "pending"  # committed, charged
    with app.app_context():
        check = db.session.scalar(select(Check).where(Check.uuid == uuid.UUID(listed["uuid"])))
        assert check.job_id and check.enqueued_at is not None
        assert not Redis.from_url(app.config["REDIS_URL"]).exists(f"rq:job:{check.job_id}")  # never queued
        db.session.remove()
    try:
        stack.start("scheduler")
        stack.start("worker")
        _until_ended(app, [listed["uuid"]], 30, stack)
    finally:
        stack.close()
    checks = _assert_books_hold(app, {listed["uuid"]: "hit"})
    check = checks[listed["uuid"]]
    assert check.status == "complete" and check.attempts == 1
    assert "not in Redis" in check.recoveries[0]["why"]
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(Event).where(Event.check_id == check.id)) == 1
