"""Check jobs: one run per check (it takes the check's id and the job id it was dispatched as), and the check's
registration with the recovery sweeper (app/recovery.py), so that no check is stranded by a lost job, a dead
worker, an emptied Redis or a web process that died after its commit. The retry policy is the service's
(`finish_run`); a job holds the transactions and the settings."""
from __future__ import annotations

from flask import current_app

from app import jobs, recovery
from app.checks import queries, services
from app.core.transactions import transaction
from app.extensions import db
from app.jobs import job

JOB_TIMEOUT = 60  # seconds: RQ stops a run that takes longer (a hung upstream)
# What the providers read from the configuration (upstream credentials, classes, timeouts).
PROVIDER_SETTINGS = ("ABR_GUID", "COMPANIES_HOUSE_API_KEY", "PROVIDER_CLASSES", "PROVIDER_TIMEOUT",
                     "EMAIL_DNS_TIMEOUT")


def _account_of(check_id: int, job_id: str | None = None) -> int | None:
    from sqlalchemy import select

    from app.checks.models import Check
    return db.session.scalar(select(Check.account_id).where(Check.id == check_id))


@job("checks", timeout=JOB_TIMEOUT, account=_account_of, lean=True)
def run_check(check_id: int, job_id: str | None = None) -> str:
    """One run of a check. `job_id` is the dispatch it was queued as: the run acts only while the check still
    names it (a duplicate or superseded job does nothing)."""
    with transaction():
        run = services.start_check(check_id, job_id)
    if run is None:
        return "skipped"
    settings = {k: current_app.config.get(k) for k in PROVIDER_SETTINGS}
    # No lock is held while the provider runs (the screening index only reads the list versions, in the
    # transaction the next step commits).
    result, error = services.execute_check(run, settings)
    with transaction():
        return services.finish_run(check_id, result, error, job_id)


@jobs.warmup("checks", "monitors")
def load_screening_index(app) -> None:
    """Load (or refresh, when the lists changed) the screening index in the worker's main process before a
    check job: the job runs in that process (the `checks` queue is inline, RQ_INLINE_QUEUES), or a work horse
    forked from it inherits the loaded index (copy-on-write pages) instead of building it again; a list import
    reaches the worker at its next job. The pooled connection stays for the next job (a horse drops its copy
    of the pool at the fork: `jobs._after_fork_in_child`)."""
    with app.app_context():
        services.index_for_run()
        db.session.remove()


# A check's run is durable work: lost with a worker, with Redis or with the web process, the recovery sweeper
# dispatches it again, and fails and refunds it after the last attempt (app/recovery.py).
recovery.register(recovery.Recoverable(
    name="check", open_items=queries.open_runs, redispatch=services.redispatch_check,
    give_up=services.give_up_check, run_timeout=JOB_TIMEOUT, max_attempts=services.MAX_ATTEMPTS,
    give_up_after=services.GIVE_UP_PENDING))
