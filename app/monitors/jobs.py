"""Monitor jobs: a run's chunk (it takes the chunk's id and the job id it was dispatched as), the scheduler's tick
(due runs and runs paused for credit), and the chunks' registration with the recovery sweeper (app/recovery.py)."""
from __future__ import annotations

import logging
import time

from flask import current_app

from app import jobs, recovery, signals
from app.checks.jobs import PROVIDER_SETTINGS
from app.core.transactions import rollback, transaction
from app.core.types import utcnow
from app.monitors import queries, services

log = logging.getLogger(__name__)


@jobs.job("monitors", timeout=services.CHUNK_TIMEOUT, background=True)
def run_monitor_chunk(chunk_id: int, job_id: str | None = None) -> str:
    """Screen one chunk of a run: started in one transaction, screened in the worker, written in another that acts
    only while the chunk still names this job. An error is retried under a new job while attempts remain."""
    started = time.monotonic()
    with transaction():
        work = services.start_chunk(chunk_id, job_id)
    if work is None:
        return "skipped"
    settings = {k: current_app.config.get(k) for k in PROVIDER_SETTINGS}
    try:
        with transaction():
            screened, versions, engine = services.screen_entities(work, settings)
            try:
                outcome = services.finish_chunk(work, job_id, screened, versions, engine)
            except services.BalanceMoved:
                rollback()  # nothing of the first attempt stays (its writes and their side effects)
                outcome = services.finish_chunk(work, job_id, screened, versions, engine, lock_first=True)
    except Exception as exc:
        log.exception("monitor chunk %s failed", chunk_id)
        with transaction():
            services.chunk_failed(chunk_id, job_id, f"{type(exc).__name__}: {exc}")
        return "error"
    pace(len(work.entity_ids), started)
    return outcome


def pace(entities: int, started: float) -> float:
    """Hold a background worker after a chunk (committed: no lock is held) until its entities took at least
    1 / MONITOR_ENTITIES_PER_SECOND seconds each, so that a run over 100,000 customers leaves the machine's CPU,
    and the database's, to the analysts and integrators working beside it (docs/decisions.md). Returns the
    seconds slept; 0 when pacing is off (0), or without Redis (jobs in the web process: nothing to share)."""
    rate = float(current_app.config.get("MONITOR_ENTITIES_PER_SECOND") or 0)
    if rate <= 0 or not current_app.config.get("REDIS_URL"):
        return 0.0
    wait = entities / rate - (time.monotonic() - started)
    if wait > 0:
        time.sleep(wait)
    return max(wait, 0.0)


@jobs.job("maintenance", every="MONITOR_TICK_SECONDS")
def monitor_tick() -> dict[str, int]:
    """Start the monitors' due runs (each once, whatever the number of schedulers) and resume the runs paused for
    credit once the balance pays for them."""
    now = utcnow()
    started = resumed = 0
    with transaction():
        due = queries.due_monitors(now)
    for monitor_id in due:
        try:
            with transaction():
                started += services.start_scheduled_run(monitor_id, now) is not None
        except Exception:  # noqa: BLE001 - one monitor must not stop the others (e.g. Redis down: next tick)
            log.exception("monitor %s: its scheduled run could not be started", monitor_id)
    with transaction():
        paused = queries.paused_runs()
    for run_id in paused:
        try:
            with transaction():
                resumed += services.resume_run(run_id)
        except Exception:  # noqa: BLE001
            log.exception("monitor run %s could not be resumed", run_id)
    return {"started": started, "resumed": resumed}


# A chunk is durable work: lost with a worker, with Redis or with the web process, the recovery sweeper dispatches
# it again, and after its last attempt gives it up (its entities are not charged; the run ends failed).
recovery.register(recovery.Recoverable(
    name="monitor_chunk", open_items=queries.open_chunks, redispatch=services.redispatch_chunk,
    give_up=services.fail_chunk, run_timeout=services.CHUNK_TIMEOUT, max_attempts=services.MAX_CHUNK_ATTEMPTS,
    give_up_after=services.GIVE_UP_CHUNK))


@jobs.job("monitors", timeout=1800, background=True)
def rescreen_list_update(list_name: str, version: int) -> int:
    """A new list version reaches the monitored customers it concerns: one delta run per monitor concerned."""
    with transaction():
        return len(services.rescreen_for_list_update(list_name, version))


@signals.list_version_stored.connect
def _list_version_stored(list_name: str, version: int, **_) -> None:
    try:
        jobs.enqueue_now("rescreen_list_update", list_name, version)
    except Exception:  # noqa: BLE001 - the import stands; the monitors' next scheduled runs catch up
        log.exception("the monitors could not be told about %s v%s", list_name, version)
