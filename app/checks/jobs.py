"""Check jobs: one run per check (it takes the check's id), and the sweeper that the scheduler runs every
minute so that no check is stranded by a lost job or a dead worker. The policies (when to retry, when a run is
stale) are the service's (`finish_run`, `stale_action`); a job holds the transactions and the settings."""
from __future__ import annotations

import logging

from flask import current_app

from app import jobs
from app.checks import queries, services
from app.core.transactions import transaction
from app.core.types import utcnow
from app.extensions import db
from app.jobs import job

log = logging.getLogger(__name__)

JOB_TIMEOUT = 60  # seconds: RQ stops a run that takes longer (a hung upstream)
# What the providers read from the configuration (upstream credentials, classes, timeouts).
PROVIDER_SETTINGS = ("ABR_GUID", "COMPANIES_HOUSE_API_KEY", "PROVIDER_CLASSES", "PROVIDER_TIMEOUT",
                     "EMAIL_DNS_TIMEOUT")


@job("checks", timeout=JOB_TIMEOUT)
def run_check(check_id: int) -> str:
    with transaction():
        run = services.start_check(check_id)
    if run is None:
        return "skipped"
    settings = {k: current_app.config.get(k) for k in PROVIDER_SETTINGS}
    # No lock is held while the provider runs (the screening index only reads the list versions, in the
    # transaction the next step commits).
    result, error = services.execute_check(run, settings)
    with transaction():
        return services.finish_run(check_id, result, error)


@jobs.warmup("checks")
def load_screening_index(app) -> None:
    """Load (or refresh, when the lists changed) the screening index in the worker's main process before a
    check job: RQ forks a work horse per job, and the horse inherits the loaded index (copy-on-write pages)
    instead of building it again; a list import reaches the worker at its next job."""
    with app.app_context():
        services.index_for_run()
        db.session.remove()
        db.engine.dispose(close=False)  # no pooled connection crosses the fork


@job("maintenance", cron="* * * * *")
def sweep_checks(now=None) -> dict[str, int]:
    """Retry checks whose job was lost (a worker died, Redis lost its queue); fail and refund them after the
    last attempt. Each check is handled in its own transaction."""
    now = now or utcnow()
    counts = {"retried": 0, "failed": 0}
    with transaction():  # read only
        runs = queries.open_runs()
    for run in runs:
        action, reason = services.stale_action(run, now, job_alive=lambda: jobs.job_alive(run.job_id))
        if action is None:
            continue
        try:
            with transaction():
                if action == "retry":
                    services.requeue_check(run.id)
                else:
                    services.fail_check(run.id, reason)
            counts["retried" if action == "retry" else "failed"] += 1
        except Exception:  # one check must not stop the sweep (e.g. Redis down for the retry)
            log.exception("sweeper: check %s could not be %s", run.id, action)
    if counts["retried"] or counts["failed"]:
        log.warning("check sweeper: %s", counts)
    return counts
