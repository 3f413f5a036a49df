"""Fair shares of heavy work (issue 24): accounts take turns on the heavy workers, an account runs a bounded number
of jobs at once, a token bucket of work seconds and a backlog cap answer 429 with Retry-After, the portal has rate
limits per user and per account, and a heavy worker SIGKILLed mid-job loses nothing."""
from __future__ import annotations

import html
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from sqlalchemy import select

from tests.heavy.conftest import csv_rows
from tests.heavy.test_heavy_jobs import bulk, entity_count, job_row

ROOT = Path(__file__).resolve().parents[2]


def heavy_rows(app, account_id: int | None = None):
    from app.extensions import db
    from app.heavy.models import HeavyJob
    with app.app_context():
        stmt = select(HeavyJob).order_by(HeavyJob.id)
        if account_id is not None:
            stmt = stmt.where(HeavyJob.account_id == account_id)
        rows = list(db.session.scalars(stmt))
        for r in rows:
            db.session.expunge(r)
        return rows


def test_accounts_take_turns_so_a_backlog_does_not_starve_another_account(app, factory, work, settings):
    """One heavy slot: B's 20 queued imports delay A's one import by at most the job running when it came."""
    settings(HEAVY_SLOTS=1, HEAVY_MAX_RUNNING_PER_ACCOUNT=1, HEAVY_IMPORT_SYNC_ROWS=5)
    a, b = factory.tenant(name="Alpha"), factory.tenant(name="Beta")
    pa, pb = a.program(), b.program()
    for i in range(20):
        assert bulk(b, pb["uuid"], csv_rows(8, seed=f"b{i}")).status_code == 202
    assert bulk(a, pa["uuid"], csv_rows(8, seed="a")).status_code == 202
    work()
    ran = sorted(heavy_rows(app), key=lambda j: j.started_at)
    assert all(j.status == "complete" for j in ran) and len(ran) == 21
    order = ["A" if j.account_id == a.account_id else "B" for j in ran]
    assert order.index("A") == 1, order  # after B's first (running when A asked), before B's other 19
    first_b = ran[0]
    a_job = ran[1]
    assert a_job.started_at >= first_b.finished_at
    assert entity_count(app, pa["uuid"]) == 8 and entity_count(app, pb["uuid"]) == 160


def test_an_account_runs_at_most_its_share_of_jobs_at_once(app, factory, settings):
    from app.heavy import fair
    from app.jobs import queue
    settings(HEAVY_SLOTS=3, HEAVY_MAX_RUNNING_PER_ACCOUNT=1, HEAVY_IMPORT_SYNC_ROWS=5)
    a, b = factory.tenant(name="Alpha"), factory.tenant(name="Beta")
    pa, pb = a.program(), b.program()
    for i in range(3):
        assert bulk(b, pb["uuid"], csv_rows(8, seed=f"b{i}")).status_code == 202
    with app.app_context():
        running = fair.inflight()
        assert [acct for acct, _, _ in running.values()] == [b.account_id]  # one of B's three; a slot stays free
        assert len(queue("imports")) == 1
    assert bulk(a, pa["uuid"], csv_rows(8, seed="a")).status_code == 202
    with app.app_context():
        assert sorted(acct for acct, _, _ in fair.inflight().values()) == sorted([a.account_id, b.account_id])
        assert len(queue("imports")) == 2
    statuses = [j.status for j in heavy_rows(app, b.account_id)]
    assert statuses == ["queued"] * 3  # two wait their turn in Redis, none is lost


def test_the_token_bucket_of_work_seconds_answers_429_with_retry_after(app, tenant, factory, work, settings):
    from app.heavy import fair
    from tests.factories import csrf_from
    settings(HEAVY_IMPORT_SYNC_ROWS=5, HEAVY_BUDGET_SECONDS=600, HEAVY_BUDGET_REFILL_PER_MINUTE=60)
    program = tenant.program()
    assert bulk(tenant, program["uuid"], csv_rows(20)).status_code == 202
    work()
    with app.app_context():
        spent = 600 - fair.budget_balance(tenant.account_id)
    job = heavy_rows(app)[0]
    assert job.cost_seconds > 0 and abs(spent - job.cost_seconds) < 0.5  # the job's measured seconds were taken
    settings(HEAVY_BUDGET_SECONDS=2, HEAVY_BUDGET_REFILL_PER_MINUTE=6)  # 0.1 s a second
    with app.app_context():
        fair._conn(app).delete(f"{app.config['RQ_QUEUE_PREFIX']}heavy:budget:{tenant.account_id}")
        fair.spend(tenant.account_id, 5)  # 2 - 5 = -3 seconds: 40 s until it holds work again
    r = bulk(tenant, program["uuid"], csv_rows(20, seed="y"))
    assert r.status_code == 429 and "share of report, import and export time" in r.get_json()["message"]
    assert 30 <= int(r.headers["Retry-After"]) <= 41
    assert len(heavy_rows(app)) == 1  # nothing was written
    assert bulk(tenant, program["uuid"], csv_rows(5, seed="z")).status_code == 201  # small work is not refused
    client = factory.login(tenant.email)
    token = csrf_from(client.get(f"/programs/{program['uuid']}/entities/import").get_data(as_text=True))
    page = client.post(f"/programs/{program['uuid']}/entities/import",
                       data={"csrf_token": token, "file": (__import__("io").BytesIO(csv_rows(20, seed="p")), "a.csv")},
                       content_type="multipart/form-data")
    assert page.status_code == 429 and "Retry in" in page.get_data(as_text=True) and page.headers["Retry-After"]


def test_a_full_backlog_is_429(app, tenant, settings):
    settings(HEAVY_SLOTS=1, HEAVY_MAX_QUEUED_PER_ACCOUNT=2, HEAVY_IMPORT_SYNC_ROWS=5)
    program = tenant.program()
    assert bulk(tenant, program["uuid"], csv_rows(8, seed="1")).status_code == 202
    assert bulk(tenant, program["uuid"], csv_rows(8, seed="2")).status_code == 202
    r = bulk(tenant, program["uuid"], csv_rows(8, seed="3"))
    assert r.status_code == 429 and r.headers["Retry-After"] == "30" and "at most 2" in r.get_json()["message"]


def test_portal_rate_limits_per_user(app, tenant, factory, settings):
    settings(PORTAL_HEAVY_RATE_LIMIT_USER="2 per minute", PORTAL_HEAVY_RATE_LIMIT_ACCOUNT="100 per minute")
    program = tenant.program()
    entity = tenant.entity(program["uuid"])
    url = f"/entities/{entity['uuid']}/history.pdf"
    first = factory.login(tenant.email)
    other = factory.login(factory.user(tenant))
    assert first.get(url).status_code == 200 and first.get(url).status_code == 200
    refused = first.get(url)
    text = refused.get_data(as_text=True)
    assert refused.status_code == 429 and "try again in" in text and "for reports, imports and exports" in text
    assert 1 <= int(refused.headers["Retry-After"]) <= 60
    assert first.get(f"/programs/{program['uuid']}").status_code == 200  # other pages are not counted here
    assert other.get(url).status_code == 200  # another user of the account has a budget of their own

    settings(PORTAL_RATE_LIMIT_USER="3 per minute")
    client = factory.login(factory.user(tenant))
    codes = [client.get("/programs").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]


def test_portal_rate_limit_per_account(app, tenant, factory, settings):
    settings(PORTAL_HEAVY_RATE_LIMIT_USER="100 per minute", PORTAL_HEAVY_RATE_LIMIT_ACCOUNT="3 per minute")
    program = tenant.program()
    entity = tenant.entity(program["uuid"])
    url = f"/entities/{entity['uuid']}/history.pdf"
    first = factory.login(tenant.email)
    other = factory.login(factory.user(tenant))
    assert [first.get(url).status_code, first.get(url).status_code, other.get(url).status_code] == [200] * 3
    refused = other.get(url)  # the account's budget is spent, for every user of it
    assert refused.status_code == 429 and "your account's limit" in html.unescape(refused.get_data(as_text=True))
    neighbour = factory.tenant(name="Neighbour")
    n_program = neighbour.program()
    n_entity = neighbour.entity(n_program["uuid"])
    assert factory.login(neighbour.email).get(f"/entities/{n_entity['uuid']}/history.pdf").status_code == 200


def test_the_sweeper_requeues_lost_jobs_and_the_purge_deletes_old_results(app, tenant, work, settings):
    from app.extensions import db
    from app.heavy import fair, services
    from app.heavy.models import HeavyJob
    settings(HEAVY_IMPORT_SYNC_ROWS=5)
    program = tenant.program()
    r = bulk(tenant, program["uuid"], csv_rows(8))
    job_uuid = r.get_json()["data"]["uuid"]
    with app.app_context():
        conn = fair._conn(app)
        for key in conn.scan_iter(match=f"{app.config['RQ_QUEUE_PREFIX']}*"):
            conn.delete(key)  # Redis lost everything (a restart without persistence)
        assert services.sweep(grace=0) == {"released": 0, "requeued": 1, "failed": 0, "dispatched": 1}
    work()
    done = job_row(app, job_uuid)
    assert done.status == "complete" and entity_count(app, program["uuid"]) == 8
    with app.app_context():
        from app.core.storage import BlobNotFound, blob_storage, sealed
        row = db.session.scalar(select(HeavyJob).where(HeavyJob.uuid == uuid.UUID(job_uuid)))
        key = row.result_key
        assert sealed(blob_storage()).get(key)
        row.expires_at = row.finished_at
        db.session.commit()
        assert services.purge() == 1
        try:
            blob_storage().get(key)
            raise AssertionError("the expired result is still stored")
        except BlobNotFound:
            pass
    gone = tenant.api.get(f"/jobs/{job_uuid}/result")
    assert gone.status_code == 409 and "deleted after it expired" in gone.get_json()["message"]
    assert tenant.api.get(f"/jobs/{job_uuid}").get_json()["data"]["result_url"] is None


def _descendants(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True).stdout.split()
    pairs = list(zip(map(int, out[0::2]), map(int, out[1::2])))
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for child, ppid in pairs:
            if ppid == parent and child not in found:
                found.append(child)
                todo.append(child)
    return found


def test_a_sigkilled_heavy_worker_loses_nothing(app, tenant, work, settings, tmp_path):
    """A real heavy worker (`flask jobs worker --heavy`) is SIGKILLed while it imports: the import rolls back with
    it, the sweeper frees its slot and queues the job again, and the next run imports every row exactly once.

    The test holds a SHARE lock on `entities` until the worker is dead, so the import cannot finish before the kill
    however fast this machine validates (it once did: the job completed between the poll and the SIGKILL)."""
    from sqlalchemy import text

    from app.extensions import db
    from app.heavy import fair, services
    settings(HEAVY_IMPORT_SYNC_ROWS=5)
    program = tenant.program()
    rows = 30_000  # a few seconds of validation: killed while it validates them, or while it waits for the lock
    env = {**os.environ, "DATABASE_URL": app.config["SQLALCHEMY_DATABASE_URI"], "REDIS_URL": app.config["REDIS_URL"],
           "RQ_QUEUE_PREFIX": app.config["RQ_QUEUE_PREFIX"], "FLASK_APP": "wsgi.py",
           "SECRET_KEY": app.config["SECRET_KEY"],
           "STORAGE_PATH": app.config["STORAGE_PATH"], "RECOVERY_GRACE_SECONDS": "3", "HEAVY_WORKER_NICE": "0"}
    log = open(tmp_path / "heavy-worker.log", "wb")
    worker = subprocess.Popen([sys.executable, "-m", "flask", "jobs", "worker", "--heavy"], cwd=ROOT, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    with app.app_context():
        blocker = db.engine.connect()
    try:
        r = bulk(tenant, program["uuid"], csv_rows(rows))
        assert r.status_code == 202
        blocker.execute(text("LOCK TABLE entities IN SHARE MODE"))  # the worker's INSERT waits for the kill
        job_uuid = r.get_json()["data"]["uuid"]
        deadline = time.time() + 60
        waiting = text("SELECT count(*) FROM pg_locks WHERE relation = 'entities'::regclass AND NOT granted")
        while time.time() < deadline and not (job_row(app, job_uuid).status == "running"
                                              and (job_row(app, job_uuid).progress >= 10
                                                   or blocker.execute(waiting).scalar())):
            time.sleep(0.05)
        assert job_row(app, job_uuid).status == "running", (tmp_path / "heavy-worker.log").read_text()[-2000:]
        for pid in [worker.pid, *_descendants(worker.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        worker.wait(10)
    finally:  # the worker, its work horse and RQ's scheduler process, whatever happened
        for pid in [worker.pid, *_descendants(worker.pid)]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        worker.wait(10)
        blocker.rollback()  # the lock goes; a backend left waiting on it finds its client gone and rolls back
        blocker.close()
    assert job_row(app, job_uuid).status == "running" and entity_count(app, program["uuid"]) == 0
    time.sleep(4.5)  # its job's last beat is older than the grace (3 s)
    with app.app_context():
        counts = services.sweep(grace=3)
        assert counts["released"] == 1 and counts["requeued"] == 1, counts
        assert not fair.inflight() or all(row != job_row(app, job_uuid).id for _, row, _ in fair.inflight().values()) \
            or counts["dispatched"] == 1
    work()
    done = job_row(app, job_uuid)
    assert done.status == "complete" and done.attempts == 2, (done.status, done.message)
    assert entity_count(app, program["uuid"]) == rows
    with app.app_context():
        assert fair.inflight() == {}
