"""What a check costs the databases (issue 21 §2, docs/performance.md): a launch writes each row once with its
dispatch and queues its runs in one round trip; a run on the app's worker leaves nothing in Redis when it
succeeds and is kept as any failed job when it fails; the API's rate limit is one script call."""
from __future__ import annotations

import uuid

from redis import Redis
from sqlalchemy import event, select

from app.checks.models import Check
from app.core.models import JobFailure
from app.extensions import db


class Statements:
    """The SQL statements the app's engine sends while counting (SQLAlchemy's cursor events)."""

    def __init__(self, app):
        self.app, self.seen = app, []

    def _count(self, conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001
        self.seen.append(" ".join(statement.split()))

    def __enter__(self):
        with self.app.app_context():
            event.listen(db.engine, "before_cursor_execute", self._count)
        return self

    def __exit__(self, *exc):
        with self.app.app_context():
            event.remove(db.engine, "before_cursor_execute", self._count)
        return False

    def starting(self, prefix: str) -> list[str]:
        return [s for s in self.seen if s.upper().startswith(prefix.upper())]


def _rq(app) -> Redis:
    from app.jobs import _redis_connection
    return _redis_connection(app, worker=True)


def test_a_launch_writes_each_row_once_with_its_dispatch(app, tenant):
    from rq.job import Job
    # warm: the key's first use of the minute is recorded (on its own connection), the numbering key read once
    tenant.api.post("/adhoc-checks", json={"check_types": ["phone_check"], "data": {"phone": "+61412345678"}})
    with Statements(app) as sql:
        r = tenant.api.post("/adhoc-checks", json={"check_types": ["phone_check"], "data": {"phone": "+61412345678"}})
    assert r.status_code == 202, r.get_json()
    assert sql.starting("UPDATE") == []  # the job id is in the INSERT
    assert len(sql.starting("INSERT INTO checks")) == 1 and len(sql.starting("INSERT INTO credit_ledger")) == 1, sql.seen
    assert len(sql.seen) <= 7, "\n".join(s[:90] for s in sql.seen)  # the target: 7 statements and the commit (docs/performance.md)
    check_uuid = r.get_json()["data"]["uuid"]
    with app.app_context():
        check = db.session.scalar(select(Check).where(Check.uuid == uuid.UUID(check_uuid)))
        assert check.job_id.startswith(f"check-{check_uuid}-") and check.enqueued_at is not None
        job = Job.fetch(check.job_id, connection=_rq(app))
        assert job.args[1:] == (check.id, check.job_id) and job.result_ttl == 0  # a lean job


def test_a_group_launch_writes_its_children_in_one_statement_and_queues_them_together(app, tenant):
    from app.jobs import queue
    with app.app_context():
        queue("checks").empty()
    tenant.api.get("/adhoc-checks")
    with Statements(app) as sql:
        r = tenant.api.post("/adhoc-checks", json={"check_types": ["phone_check", "email_check"], "data": {
            "phone": "+61412345678", "email": "jane@example.com"}})
    assert r.status_code == 202, r.get_json()
    assert sql.starting("UPDATE") == []
    assert len(sql.starting("INSERT INTO checks")) == 2  # the parent, then its children together
    body = r.get_json()["data"]
    assert [c["check_type"] for c in body["children"]] == ["phone_check", "email_check"]
    with app.app_context():
        children = list(db.session.scalars(select(Check).where(Check.parent_id.is_not(None))
                                           .order_by(Check.position)))
        assert [c.uuid for c in children] == [uuid.UUID(c["uuid"]) for c in body["children"]]
        assert all(c.job_id.startswith(f"check-{c.uuid}-") for c in children)
        assert queue("checks").job_ids == [c.job_id for c in children]


def _launch_on_empty_queue(app, tenant) -> tuple[uuid.UUID, str]:
    """One adhoc phone check launched on an emptied `checks` queue: its uuid and the job id it was queued as."""
    from app import jobs
    with app.app_context():
        jobs.queue("checks").empty()
    r = tenant.api.post("/adhoc-checks", json={"check_types": ["phone_check"], "data": {"phone": "+61412345678"}})
    check_uuid = uuid.UUID(r.get_json()["data"]["uuid"])
    with app.app_context():
        return check_uuid, db.session.scalar(select(Check.job_id).where(Check.uuid == check_uuid))


def test_a_successful_lean_run_leaves_nothing_of_rq_in_redis(app, tenant):
    from app import jobs
    conn = _rq(app)
    check_uuid, job_id = _launch_on_empty_queue(app, tenant)
    with app.app_context():
        assert conn.exists(f"rq:job:{job_id}")
        assert jobs.make_worker(app, ["checks"], "fork").work(burst=True, with_scheduler=False)
        db.session.remove()
        assert db.session.scalar(select(Check.status).where(Check.uuid == check_uuid)) == "complete"
        assert not conn.exists(f"rq:job:{job_id}")  # deleted on success: no result, no registry entry
        assert jobs.job_state(job_id, fresh=5) == jobs.JOB_MISSING
        prefix = app.config["RQ_QUEUE_PREFIX"]
        assert conn.zcard(f"rq:finished:{prefix}checks") == 0 and conn.zcard(f"rq:wip:{prefix}checks") == 0
        assert list(conn.scan_iter(f"rq:results:{job_id}*")) == []
        assert list(conn.scan_iter(f"rq:execution*{job_id}*")) == []


def test_a_failed_lean_run_is_kept_as_any_failed_job(app, tenant, monkeypatch):
    from app import jobs
    from app.checks import services
    conn = _rq(app)

    def broken(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(services, "execute_check", broken)
    check_uuid, job_id = _launch_on_empty_queue(app, tenant)
    with app.app_context():
        jobs.make_worker(app, ["checks"], "fork").work(burst=True, with_scheduler=False)
        db.session.remove()
        assert jobs.job_state(job_id, fresh=5) == jobs.JOB_ENDED  # failed: the sweeper dispatches it again
        assert conn.zscore(f"rq:failed:{app.config['RQ_QUEUE_PREFIX']}checks", job_id) is not None
        assert 0 < conn.ttl(f"rq:job:{job_id}") <= jobs.LEAN_FAILURE_TTL
        failure = db.session.scalar(select(JobFailure).where(JobFailure.job_name == "run_check"))
        assert failure.rq_job_id == job_id and "the database went away" in failure.last_error
        assert failure.account_id == tenant.account_id


def test_the_rate_limit_is_one_script_call_that_tells_the_count_and_the_window(redis_url):
    from limits import RateLimitItemPerMinute

    from app.core.ratelimit import RateLimiter
    limiter = RateLimiter(redis_url, prefix="test-one-call")
    limiter.reset()
    budgets = [limiter.hit("key:1", 2) for _ in range(3)]
    assert [b.remaining for b in budgets] == [1, 0, 0]
    assert [b.exceeded for b in budgets] == [False, False, True]
    assert all(1 <= b.reset_after <= 60 for b in budgets)
    # the counter is the limits library's own (same key, same window)
    assert limiter.strategy.get_window_stats(RateLimitItemPerMinute(2), "key:1").remaining == 0
    # a counter found without an expiry (left by a crash between two commands) is given its window again
    conn = Redis.from_url(redis_url)
    key = limiter.storage.prefixed_key(RateLimitItemPerMinute(5).key_for("key:2"))
    conn.set(key, 1)
    assert limiter.hit("key:2", 5).remaining == 3 and 0 < conn.ttl(key) <= 60
    limiter.reset()
