"""Check jobs: one run per check (it takes the check's id), and the sweeper that the scheduler runs every
minute so that no check is stranded by a lost job or a dead worker."""
from __future__ import annotations

import logging
from datetime import timedelta

from flask import current_app
from sqlalchemy import select

from app.checks import services
from app.checks.models import Check
from app.core.transactions import transaction
from app.core.types import utcnow
from app.extensions import db
from app.jobs import job

log = logging.getLogger(__name__)

JOB_TIMEOUT = 60           # seconds: RQ stops a run that takes longer (a hung upstream)
STALE_PROCESSING = 90      # seconds without an end: the worker died or the run was stopped
STALE_PENDING = 120        # seconds queued with no job in the queue: the job was lost
GIVE_UP_PENDING = 30 * 60  # a check still pending after this long fails (and is refunded)


@job("checks", timeout=JOB_TIMEOUT)
def run_check(check_id: int) -> str:
    with transaction():
        started = services.start_check(check_id)
    if not started:
        return "skipped"
    result, error = services.execute_check(check_id)
    with transaction():
        if error is None:
            services.complete_check(check_id, result)
            return "complete"
        attempts = db.session.scalar(select(Check.attempts).where(Check.id == check_id)) or 0
        if error.retryable and attempts < services.MAX_ATTEMPTS:
            services.requeue_check(check_id)
            return "retry"
        services.fail_check(check_id, str(error))
        return "failed"


def _job_alive(job_id: str | None) -> bool:
    """True when the check's RQ job still waits in its queue or runs."""
    if not job_id or not current_app.config.get("REDIS_URL"):
        return False
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    from app.jobs import _redis_connection
    try:
        status = Job.fetch(job_id, connection=_redis_connection(current_app)).get_status(refresh=False)
    except NoSuchJobError:
        return False
    return str(getattr(status, "value", status)) in ("queued", "started", "deferred", "scheduled")


@job("maintenance")
def sweep_checks(now=None) -> dict[str, int]:
    """Retry checks whose job was lost (a worker died, Redis lost its queue); fail and refund them after the
    last attempt. Each check is handled in its own transaction."""
    now = now or utcnow()
    counts = {"retried": 0, "failed": 0}
    ids = list(db.session.execute(
        select(Check.id, Check.status, Check.started_at, Check.enqueued_at, Check.created_at, Check.attempts,
               Check.job_id)
        .where(Check.status.in_(("pending", "processing")), Check.check_type != "group")
        .order_by(Check.updated_at).limit(1000)))
    db.session.close()  # read only; each check below is handled in its own transaction
    for check_id, status, started_at, enqueued_at, created_at, attempts, job_id in ids:
        action = None
        if status == "processing" and started_at and started_at < now - timedelta(seconds=STALE_PROCESSING):
            action = "fail" if attempts >= services.MAX_ATTEMPTS else "retry"
            reason = f"the run was lost {attempts} time{'s' if attempts != 1 else ''} (worker stopped)"
        elif status == "pending" and created_at < now - timedelta(seconds=GIVE_UP_PENDING):
            action, reason = "fail", "the check could not be run within 30 minutes"
        elif status == "pending" and (enqueued_at or created_at) < now - timedelta(seconds=STALE_PENDING) \
                and not _job_alive(job_id):
            action, reason = ("fail", "the run was lost too often") if attempts >= services.MAX_ATTEMPTS \
                else ("retry", "")
        if action is None:
            continue
        try:
            with transaction():
                if action == "retry":
                    services.requeue_check(check_id)
                else:
                    services.fail_check(check_id, reason)
            counts["retried" if action == "retry" else "failed"] += 1
        except Exception:  # one check must not stop the sweep (e.g. Redis down for the retry)
            log.exception("sweeper: check %s could not be %s", check_id, action)
    if counts["retried"] or counts["failed"]:
        log.warning("check sweeper: %s", counts)
    return counts
