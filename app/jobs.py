"""Background work: named queues, one job decorator, enqueue-after-commit, worker and scheduler.

With REDIS_URL set, jobs go to RQ queues and run on `flask jobs worker`; recurring jobs are enqueued
by `flask jobs scheduler` (RQ's CronScheduler). Without Redis, jobs run in-process on a small thread
pool after the commit, each in its own app context (development only)."""
from __future__ import annotations

import gc
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from functools import wraps
from typing import Any, Callable

from flask import Flask, current_app, has_app_context

from app.core.errors import ServiceUnavailable
from app.core.ratelimit import ThrottledLog
from app.core.transactions import after_commit

log = logging.getLogger(__name__)
_outage_log = ThrottledLog(log)

QUEUES = ("checks", "monitors", "pdf", "notify", "maintenance")
# Recurring jobs: (dotted function path, queue, cron string). Times are UTC.
SCHEDULE: list[tuple[str, str, str]] = [
    ("app.checks.jobs.sweep_checks", "maintenance", "* * * * *"),
    ("app.maintenance.jobs.purge_soft_deleted", "maintenance", "17 3 * * *"),
    ("app.maintenance.jobs.purge_idempotency_records", "maintenance", "*/30 * * * *"),
]

_executor: ThreadPoolExecutor | None = None
_worker_app: Flask | None = None


def _redis_connection(app: Flask, *, worker: bool = False):
    """The RQ connection. Web processes use short socket timeouts, so that a Redis outage answers a quick
    503 instead of hanging a request; workers block on their queues and get no read timeout."""
    from redis import Redis
    name = "rq_redis_worker" if worker else "rq_redis"
    conn = app.extensions.get(name)
    if conn is None:
        options = {"socket_connect_timeout": 1.0} if worker else {"socket_connect_timeout": 0.5, "socket_timeout": 1.0}
        conn = app.extensions[name] = Redis.from_url(app.config["REDIS_URL"], **options)
    return conn


def queue(name: str, app: Flask | None = None, *, worker: bool = False):
    from rq import Queue
    app = app or current_app._get_current_object()
    return Queue(app.config["RQ_QUEUE_PREFIX"] + name, connection=_redis_connection(app, worker=worker))


def redis_available(app: Flask | None = None) -> bool | None:
    """True when the job queue's Redis answers a PING; None when no REDIS_URL is configured (in-process jobs)."""
    app = app or current_app._get_current_object()
    if not app.config.get("REDIS_URL"):
        return None
    try:
        return bool(_redis_connection(app).ping())
    except Exception:
        return False


def ensure_queue_available(app: Flask | None = None) -> None:
    """Raise ServiceUnavailable (503) when work cannot be queued, before anything is committed or charged."""
    if redis_available(app) is False:
        _outage_log.warning("job queue unreachable (REDIS_URL): refusing work that needs a background job")
        raise ServiceUnavailable("Background processing is temporarily unavailable, so nothing was saved or "
                                 "charged. Retry after the number of seconds given in Retry-After.",
                                 retry_after=30)


def _app_for_job() -> Flask:
    """The app a job runs in: the current one, or one created once per worker process."""
    global _worker_app
    if has_app_context():
        return current_app._get_current_object()
    if _worker_app is None:
        from app import create_app
        _worker_app = create_app()
    return _worker_app


def run_job(path: str, *args: Any, **kwargs: Any) -> Any:
    """What RQ executes: import the job function and run it inside an app context."""
    import importlib

    from app.extensions import db
    module_name, _, attr = path.rpartition(".")
    fn = getattr(importlib.import_module(module_name), attr)
    app = _app_for_job()
    with app.app_context():
        try:
            return fn.__wrapped__(*args, **kwargs)
        finally:
            db.session.remove()


def job(queue_name: str, *, timeout: int = 600) -> Callable:
    """Mark a function as a job. Call `fn.enqueue(*ids)` inside a transaction: it is sent after commit.

    Jobs take ids and plain values, never ORM objects."""
    if queue_name not in QUEUES:
        raise ValueError(f"unknown queue {queue_name}")

    def decorate(fn: Callable) -> Callable:
        path = f"{fn.__module__}.{fn.__name__}"

        @wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)

        def enqueue_now(*args: Any, _job_id: str | None = None, **kwargs: Any) -> str | None:
            app = current_app._get_current_object()
            if app.config.get("REDIS_URL"):
                rq_job = queue(queue_name, app).enqueue(run_job, args=(path, *args), kwargs=kwargs,
                                                        job_timeout=timeout, job_id=_job_id)
                return rq_job.id
            _in_process(app, path, args, kwargs)
            return None

        def enqueue(*args: Any, _job_id: str | None = None, **kwargs: Any) -> None:
            """Queue the job once the current transaction commits. Checks first that the queue answers:
            when Redis is down this raises ServiceUnavailable, so the caller's transaction rolls back and
            nothing is left without its job. (Should Redis fail between this check and the commit, the
            enqueue error is logged and the record's own sweeper picks it up.) `_job_id` names the RQ job,
            so that a sweeper can look it up."""
            ensure_queue_available()
            after_commit(lambda: enqueue_now(*args, _job_id=_job_id, **kwargs))

        wrapper.enqueue = enqueue
        wrapper.enqueue_now = enqueue_now
        wrapper.job_path = path
        wrapper.queue_name = queue_name
        return wrapper

    return decorate


def _in_process(app: Flask, path: str, args: tuple, kwargs: dict) -> None:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="inproc-job")

    def run():
        try:
            with app.app_context():
                run_job(path, *args, **kwargs)
        except Exception:
            log.exception("in-process job %s failed", path)

    try:
        _executor.submit(run)
    except RuntimeError:  # the process is shutting down (a CLI command ending): run it here, now
        run()


def _after_fork_in_child() -> None:
    # A forked RQ work-horse must not share pooled database connections with its parent.
    if _worker_app is not None:
        from app.extensions import db
        with _worker_app.app_context():
            db.engine.dispose(close=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def warm_screening_index(app: Flask) -> None:
    """Load (or refresh, when the lists changed) the screening index in this process. Called by the worker's
    main process before each job: RQ forks a work horse per job, and the horse inherits the loaded index
    (copy-on-write pages) instead of building it again; a list import reaches the worker at its next job."""
    from app.extensions import db
    try:
        with app.app_context():
            from app.screening.store import holder
            holder.get(db.session)
            db.session.remove()
            db.engine.dispose(close=False)  # no pooled connection crosses the fork
    except Exception:  # a worker without lists (or a database hiccup) still runs the other jobs
        log.exception("could not load the screening index before the job")


def freeze_startup_heap() -> None:
    """Move every object alive now (the app, its modules, the loaded screening index) out of the garbage
    collector's sight (`gc.freeze`). They live as long as the process, yet each full collection walked them
    all: with the Flask app and SQLAlchemy loaded that cost a screening worker about 15% of its CPU (see
    docs/performance.md). Python's documentation recommends it before forking as well: a work horse's
    collections then leave the parent's pages unwritten (shared). Objects frozen here are still freed when
    their last reference goes; only reference cycles among them are never collected, which start-up objects
    do not form in any number."""
    gc.collect()
    gc.freeze()


def worker_class(kind: str = "fork"):
    from rq import SimpleWorker, Worker

    base = SimpleWorker if kind == "simple" else Worker

    class ScreeningWorker(base):
        """An RQ worker that keeps the screening index loaded in its main process (see warm_screening_index)."""

        # RQ doubles its wait between reconnection attempts up to 60 s: after a long Redis outage the worker
        # slept up to a minute more. Capped, it takes jobs again within seconds of Redis answering.
        max_connection_wait_time = 5.0

        def execute_job(self, job, queue):
            if _worker_app is not None and job.args and str(job.args[0]).startswith("app.checks."):
                warm_screening_index(_worker_app)
            return super().execute_job(job, queue)

    return ScreeningWorker


def run_worker(app: Flask, queues: list[str] | None = None, burst: bool = False, kind: str = "fork") -> bool:
    global _worker_app
    _worker_app = app
    names = [app.config["RQ_QUEUE_PREFIX"] + q for q in (queues or QUEUES)]
    worker = worker_class(kind)(names, connection=_redis_connection(app, worker=True))
    warm_screening_index(app)
    freeze_startup_heap()
    return worker.work(burst=burst, with_scheduler=True)


def build_scheduler(app: Flask):
    from rq.cron import CronScheduler
    import importlib
    scheduler = CronScheduler(connection=_redis_connection(app, worker=True))
    for path, queue_name, cron in SCHEDULE:
        module_name, _, attr = path.rpartition(".")
        getattr(importlib.import_module(module_name), attr)  # fail early on a bad path
        scheduler.register(run_job, queue_name=app.config["RQ_QUEUE_PREFIX"] + queue_name, args=(path,),
                           cron=cron, name=path)
    return scheduler
