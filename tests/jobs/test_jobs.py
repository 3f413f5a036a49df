"""Background jobs on real Redis with a real RQ worker process."""
from __future__ import annotations

import os
import subprocess
import sys
import uuid
from datetime import timedelta

from sqlalchemy import select, update

from app.accounts.models import IdempotencyRecord
from app.core.types import utcnow
from app.extensions import db
from app.programs.models import Program


def _age_program(app, program_uuid: str, days: int) -> None:
    with app.app_context():
        db.session.execute(update(Program).where(Program.uuid == uuid.UUID(program_uuid))
                           .values(deleted_at=utcnow() - timedelta(days=days)))
        db.session.commit()


def _worker_env(app) -> dict:
    return {**os.environ, "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"],
            "REDIS_URL": app.config["REDIS_URL"], "RQ_QUEUE_PREFIX": app.config["RQ_QUEUE_PREFIX"],
            "FLASK_APP": "wsgi.py"}


def test_purge_job_runs_on_a_real_worker(app, tenant):
    old = tenant.program(program_name="Old deleted")
    recent = tenant.program(program_name="Recently deleted")
    live = tenant.program(program_name="Live")
    tenant.api.delete(f"/programs/{old['uuid']}")
    tenant.api.delete(f"/programs/{recent['uuid']}")
    _age_program(app, old["uuid"], 31)
    _age_program(app, recent["uuid"], 29)

    from app.maintenance.jobs import purge_soft_deleted
    with app.app_context():
        job_id = purge_soft_deleted.enqueue_now()
    assert job_id

    result = subprocess.run([sys.executable, "-m", "flask", "jobs", "worker", "--burst", "--queue", "maintenance"],
                            env=_worker_env(app), capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]

    with app.app_context():
        remaining = set(db.session.scalars(select(Program.program_name)))
        from rq.job import Job
        from app.jobs import _redis_connection
        job = Job.fetch(job_id, connection=_redis_connection(app))
        assert job.get_status() == "finished", job.exc_info
        assert job.return_value()["programs"] == 1
    assert remaining == {"Recently deleted", "Live"}
    assert tenant.api.get(f"/programs/{live['uuid']}").status_code == 200


def test_enqueue_waits_for_commit_and_is_dropped_on_rollback(app):
    from app.core.transactions import commit, rollback
    from app.jobs import queue
    from app.maintenance.jobs import purge_idempotency_records
    with app.app_context():
        q = queue("maintenance")
        q.empty()
        purge_idempotency_records.enqueue()
        assert q.count == 0  # nothing leaves before the commit
        rollback()
        commit()
        assert q.count == 0  # a rolled-back transaction's side effects are dropped
        purge_idempotency_records.enqueue()
        commit()
        assert q.count == 1
        q.empty()


def test_purge_expired_idempotency_records(app, tenant):
    tenant.api.post("/programs", json={"program_name": "Keyed"}, headers={"Idempotency-Key": "old"})
    tenant.api.post("/programs", json={"program_name": "Keyed 2"}, headers={"Idempotency-Key": "new"})
    with app.app_context():
        db.session.execute(update(IdempotencyRecord).where(IdempotencyRecord.key == "old")
                           .values(expires_at=utcnow() - timedelta(minutes=1)))
        db.session.commit()
        from app.jobs import run_job
        assert run_job("purge_idempotency_records") == 1
        assert list(db.session.scalars(select(IdempotencyRecord.key))) == ["new"]


def test_scheduler_registers_the_recurring_jobs(app):
    from app.jobs import build_scheduler
    scheduler = build_scheduler(app)
    jobs = {j.name: j for j in scheduler._cron_jobs}
    assert set(jobs) == {"recover_lost_work", "purge_soft_deleted", "purge_idempotency_records", "monitor_tick",
                         "expire_idpasses", "enforce_data_retention", "purge_webhook_log", "heavy_tick",
                         "purge_heavy_results"}
    assert jobs["heavy_tick"].interval == app.config["HEAVY_TICK_SECONDS"] == 10
    assert jobs["purge_heavy_results"].queue_name == "test:maintenance"
    assert jobs["monitor_tick"].interval == app.config["MONITOR_TICK_SECONDS"] == 60
    assert jobs["recover_lost_work"].interval == app.config["RECOVERY_INTERVAL_SECONDS"] == 60
    purge = jobs["purge_soft_deleted"]
    assert purge.queue_name == "test:maintenance" and purge.cron == "17 3 * * *"
    # enqueue what is due now and check it lands on the right queue with the job's name
    from app.jobs import queue
    q = queue("maintenance", app)
    q.empty()
    purge.enqueue(scheduler.connection)
    assert q.count == 1
    assert q.jobs[0].args == ("purge_soft_deleted",)
    q.empty()


def test_in_process_jobs_without_redis(tmp_path, app):
    """Without REDIS_URL a job runs in-process after the commit (development mode), on SQLite."""
    from flask_migrate import upgrade

    import app.jobs as jobs_mod
    from app import create_app
    from app.accounts.services import bootstrap_account, cli_actor, get_account
    from app.core.transactions import commit
    from app.maintenance.jobs import purge_soft_deleted
    from app.programs.services import create_program

    # The limiter is one object shared by every app of the process: keep it on the suite's Redis.
    sqlite_app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/dev.db", "REDIS_URL": None,
                             "RATELIMIT_STORAGE_URI": app.config["RATELIMIT_STORAGE_URI"], "TESTING": True})
    with sqlite_app.app_context():
        upgrade()
        info = bootstrap_account(name="Dev", email="dev@example.com", password="correct-horse-42")
        program = create_program(cli_actor(get_account(uuid.UUID(info["account_uuid"]))), {"program_name": "Gone"})
        program.deleted_at = utcnow() - timedelta(days=40)
        commit()
        purge_soft_deleted.enqueue()
        assert db.session.scalar(select(Program.id)) is not None  # not before the commit
        commit()
    jobs_mod._executor.shutdown(wait=True)
    jobs_mod._executor = None
    with sqlite_app.app_context():
        assert db.session.scalar(select(Program.id)) is None
        db.engine.dispose()


def test_in_process_jobs_still_run_while_the_process_shuts_down(tmp_path, app, monkeypatch):
    """A job queued by another in-process job as a CLI command ends (the executor refuses new work) runs inline."""
    import app.jobs as jobs_mod
    calls = []

    class Closed:
        def submit(self, fn):
            raise RuntimeError("cannot schedule new futures after interpreter shutdown")

    monkeypatch.setattr(jobs_mod, "_executor", Closed())
    monkeypatch.setattr(jobs_mod, "run_job", lambda path, *a, **kw: calls.append((path, a)))
    jobs_mod._in_process(app, "some.job", (1,), {})
    assert calls == [("some.job", (1,))]


def test_a_worker_freezes_its_start_up_heap():
    """`flask jobs worker` hides what lives as long as the process from the garbage collector (gc.freeze),
    after a collection, so that full collections stop walking the app and the screening index."""
    import gc
    import weakref

    from app.jobs import freeze_startup_heap

    class Node:
        pass

    alive = [object()]
    garbage = Node()
    garbage.me = garbage                     # a reference cycle nobody holds: collected first, never frozen
    gone = weakref.ref(garbage)
    del garbage
    try:
        freeze_startup_heap()
        assert gc.get_freeze_count() > 0
        assert not any(o is alive for o in gc.get_objects())
        assert gone() is None
    finally:
        gc.unfreeze()
    assert any(o is alive for o in gc.get_objects())


def test_job_state_reads_where_rq_holds_a_job(app):
    """What the recovery sweeper asks RQ (app/recovery.py), on real Redis with RQ's own dequeue: a queued job,
    one taken by a worker that beats, one whose worker stopped beating, one that ended, one Redis never had."""
    from datetime import datetime, timezone

    from rq import Queue, SimpleWorker

    from app import jobs
    from app.jobs import _redis_connection, queue
    from app.maintenance.jobs import purge_idempotency_records
    with app.app_context():
        conn = _redis_connection(app, worker=True)
        q = queue("maintenance")
        q.empty()
        job_id = purge_idempotency_records.enqueue_now(_job_id="state-probe-1")
        assert jobs.job_state(job_id, fresh=5) == jobs.JOB_QUEUED
        job, _ = Queue.dequeue_any([q], timeout=None, connection=conn)  # what a worker's BLMOVE does
        assert job.id == job_id
        assert jobs.job_state(job_id, fresh=5) == jobs.JOB_ABANDONED  # taken, and nobody beats for it
        job.heartbeat(datetime.now(timezone.utc), 0)  # the pulse of the worker that took it
        assert jobs.job_state(job_id, fresh=5) == jobs.JOB_TAKEN
        job.heartbeat(datetime.now(timezone.utc) - timedelta(seconds=6), 0)  # that worker died 6 s ago
        assert jobs.job_state(job_id, fresh=5) == jobs.JOB_ABANDONED
        assert jobs.job_state("never-queued", fresh=5) == jobs.JOB_MISSING
        done = purge_idempotency_records.enqueue_now(_job_id="state-probe-2")
        SimpleWorker([q], connection=conn).work(burst=True, with_scheduler=False)
        assert jobs.job_state(done, fresh=5) == jobs.JOB_ENDED
        q.empty()


def _report_pid() -> int:
    return os.getpid()


def test_a_fork_worker_runs_the_inline_queues_jobs_in_its_own_process(app, monkeypatch):
    """RQ_INLINE_QUEUES (default: checks, webhooks): a fork worker runs those jobs in its main process, on its pooled
    database connection, and forks a work horse for the jobs of every other queue."""
    from rq.job import Job

    from app import jobs
    from app.jobs import JobSpec, _redis_connection, make_worker, queue
    monkeypatch.setitem(jobs._registry, "_report_pid_checks", JobSpec("_report_pid_checks", _report_pid, "checks", 60))
    monkeypatch.setitem(jobs._registry, "_report_pid_notify", JobSpec("_report_pid_notify", _report_pid, "notify", 60))
    monkeypatch.setattr(jobs, "_worker_app", None)
    with app.app_context():
        assert app.config["RQ_INLINE_QUEUES"] == "checks,webhooks"
        for name in ("checks", "notify"):
            queue(name).empty()
        inline = jobs.enqueue_now("_report_pid_checks", _job_id="inline-probe")
        forked = jobs.enqueue_now("_report_pid_notify", _job_id="fork-probe")
        worker = make_worker(app, ["checks", "notify"], "fork")
        assert worker.work(burst=True, with_scheduler=False)
        conn = _redis_connection(app, worker=True)
        assert Job.fetch(inline, connection=conn).return_value() == os.getpid()
        horse = Job.fetch(forked, connection=conn).return_value()
        assert isinstance(horse, int) and horse != os.getpid()


def _report_niceness() -> int:
    return os.nice(0)


def test_a_background_job_runs_in_a_horse_at_a_lower_priority_and_the_worker_keeps_its_own(app, monkeypatch):
    """`job(background=True)` (a monitor run's chunks): the work horse lowers its OS priority by BACKGROUND_JOB_NICE
    so that the web and the check runs come first on a busy CPU; the worker itself, and any other job's horse, keep
    the priority the worker was started with."""
    from rq.job import Job

    from app import jobs
    from app.jobs import JobSpec, _redis_connection, make_worker, queue
    monkeypatch.setitem(jobs._registry, "_nice_background",
                        JobSpec("_nice_background", _report_niceness, "monitors", 60, background=True))
    monkeypatch.setitem(jobs._registry, "_nice_plain", JobSpec("_nice_plain", _report_niceness, "notify", 60))
    monkeypatch.setitem(app.config, "BACKGROUND_JOB_NICE", 7)
    start = os.nice(0)
    with app.app_context():
        for name in ("monitors", "notify"):
            queue(name).empty()
        background = jobs.enqueue_now("_nice_background", _job_id="nice-background")
        plain = jobs.enqueue_now("_nice_plain", _job_id="nice-plain")
        assert make_worker(app, ["monitors", "notify"], "fork").work(burst=True, with_scheduler=False)
        conn = _redis_connection(app, worker=True)
        assert Job.fetch(background, connection=conn).return_value() == min(19, start + 7)
        assert Job.fetch(plain, connection=conn).return_value() == start
    assert os.nice(0) == start
    assert jobs.spec_of("run_monitor_chunk").background and jobs.spec_of("rescreen_list_update").background
    assert not jobs.spec_of("run_check").background


def test_worker_roles_split_the_queues_so_a_monitor_run_never_holds_the_check_workers(app, monkeypatch):
    """`flask jobs worker --light` takes every queue but the heavy and the background ones, `--background` only a
    monitor run's queue and `--heavy` the heavy ones: together they serve every queue, each queue by one role, so a
    run of 100,000 entities waits on its own workers while checks and webhook deliveries keep theirs."""
    from app import jobs
    taken: dict[str, list[str]] = {}
    monkeypatch.setattr(jobs, "run_worker", lambda app_, names, **kw: taken.setdefault(role, names) and True)
    monkeypatch.setattr(os, "nice", lambda n: 0)  # `--heavy` lowers its own priority: not this test process's
    runner = app.test_cli_runner()
    for role in ("light", "background", "heavy"):
        result = runner.invoke(args=["jobs", "worker", f"--{role}"])
        assert result.exit_code == 0, result.output
    assert taken["background"] == ["monitors"]
    assert "monitors" not in taken["light"] and {"checks", "webhooks", "notify", "maintenance"} <= set(taken["light"])
    assert taken["heavy"] == ["pdf", "imports"]
    served = taken["light"] + taken["background"] + taken["heavy"]
    assert sorted(served) == sorted(jobs.QUEUES)


def _kill_own_horse(_n: int) -> None:
    import signal
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_work_horse_killed_mid_job_is_recorded_as_that_jobs_failure_by_its_worker(app, monkeypatch):
    """A horse SIGKILLed (out of memory, an operator) cannot record its own failure: the worker that forked it
    does, under the registered job's name and arguments, so that `flask jobs failures` shows it."""
    from app import jobs
    from app.jobs import JobSpec, make_worker, queue
    monkeypatch.setitem(jobs._registry, "_killed_horse", JobSpec("_killed_horse", _kill_own_horse, "notify", 60))
    with app.app_context():
        queue("notify").empty()
        jobs.enqueue_now("_killed_horse", 42, _job_id="killed-horse")
        make_worker(app, ["notify"], "fork").work(burst=True, with_scheduler=False)
        [failure] = jobs.failures(job_name="_killed_horse")
    assert "ended unexpectedly" in failure.last_error and failure.rq_job_id == "killed-horse"
    assert failure.args == [42]


def test_jobs_status_names_the_queues_no_worker_takes(app, monkeypatch):
    """`flask jobs status`: each queue's waiting jobs and the live workers that take it; it exits 1 while a queue
    has none (a deployment with light workers only never runs a monitor), 0 once every role runs."""
    import json as json_

    from app import jobs
    from app.jobs import BACKGROUND_QUEUES, HEAVY_QUEUES, QUEUES, make_worker, queue
    # queues of their own: a worker SIGKILLed by another test stays registered until its key expires
    monkeypatch.setitem(app.config, "RQ_QUEUE_PREFIX", f"status{os.getpid()}:")
    runner = app.test_cli_runner()
    with app.app_context():
        jobs.enqueue_now("run_monitor_chunk", 10 ** 9, _job_id="status-chunk")
        light = make_worker(app, [q for q in QUEUES if q not in HEAVY_QUEUES + BACKGROUND_QUEUES])
        background, heavy = make_worker(app, list(BACKGROUND_QUEUES)), make_worker(app, list(HEAVY_QUEUES))
        light.register_birth()
        try:
            result = runner.invoke(args=["jobs", "status", "--json"])
            rows = {r["queue"]: r for r in map(json_.loads, result.output.splitlines())}
            assert result.exit_code == 1
            assert rows["monitors"] == {"queue": "monitors", "waiting": 1, "workers": 0, "gone": 0}
            assert rows["checks"]["workers"] == 1 and rows["pdf"]["workers"] == 0
            assert "no worker takes this queue" in runner.invoke(args=["jobs", "status"]).output
            background.register_birth()
            heavy.register_birth()
            result = runner.invoke(args=["jobs", "status"])
            assert result.exit_code == 0 and "no worker" not in result.output, result.output
            # a background worker killed (no death registered): gone at once, not counted until its key expires
            ended = subprocess.Popen(["true"])
            ended.wait()
            background.register_death()
            background.pid = ended.pid
            background.register_birth()
            result = runner.invoke(args=["jobs", "status", "--json"])
            rows = {r["queue"]: r for r in map(json_.loads, result.output.splitlines())}
            assert result.exit_code == 1 and rows["monitors"] == {"queue": "monitors", "waiting": 1, "workers": 0,
                                                                  "gone": 1}
            assert "1 gone" in runner.invoke(args=["jobs", "status"]).output
        finally:
            for w in (light, background, heavy):
                w.register_death()
            queue("monitors").empty()
