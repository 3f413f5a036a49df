"""Background work: named queues, a registry of jobs by name, enqueue-after-commit, worker and scheduler.

A job module registers its functions with `@job(queue)`; services enqueue them by name
(`jobs.enqueue("run_check", check.id)`), so no service imports its job module. The app factory imports the
job modules (`app/__init__.py`), which fills the registry in every process that runs or enqueues jobs.

With REDIS_URL set, jobs go to RQ queues and run on `flask jobs worker`; recurring jobs (`@job(..., cron=...)`)
are enqueued by `flask jobs scheduler` (RQ's CronScheduler). Without Redis, jobs run in-process on a small
thread pool after the commit, each in its own app context (development only). A package that wants the worker
warm before jobs of a queue (the screening index before check runs) registers a `warmup`; this module imports
no domain."""
from __future__ import annotations

import gc
import logging
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from flask import Flask, current_app, has_app_context

from app.core.errors import ServiceUnavailable
from app.core.ratelimit import ThrottledLog
from app.core.transactions import after_commit, commit, rollback
from app.extensions import db

log = logging.getLogger(__name__)
_outage_log = ThrottledLog(log)

# How long RQ keeps a lean job that failed (its record is in job_failures; RQ's default is a year).
LEAN_FAILURE_TTL = 7 * 24 * 3600
QUEUES = ("checks", "webhooks", "monitors", "pdf", "imports", "notify", "maintenance")
# The queues of heavy work (PDFs, imports, exports: app/heavy), served by heavy workers at a lower CPU priority.
HEAVY_QUEUES = ("pdf", "imports")
# The queues of bulk background work (a monitor run's chunks), served by workers of their own (`--background`) so that
# a run of 100,000 entities never holds the workers that checks and webhook deliveries wait for.
BACKGROUND_QUEUES = ("monitors",)


@dataclass(frozen=True)
class JobSpec:
    name: str
    fn: Callable[..., Any]
    queue: str
    timeout: int
    cron: str | None = None  # recurring (UTC), enqueued by the scheduler
    every: str | None = None  # recurring every N seconds, N the app setting of this name
    # The account a run of the job works for, from its arguments (asked only when a run fails: job_failures).
    account: Callable[..., int | None] | None = None
    # A run whose success leaves nothing in Redis (its record is a row of ours, and nobody reads its RQ result):
    # queued with result_ttl=0, which the app's worker honours without RQ's bookkeeping (`worker_class`).
    lean: bool = False
    # Bulk work that must not slow the interactive paths (a monitor run's chunks): its forked work horse lowers
    # its own OS priority to BACKGROUND_JOB_NICE, so that on a busy CPU the web and the check runs come first.
    background: bool = False

    @property
    def ttls(self) -> dict[str, int]:
        """What RQ keeps of a run: a lean job's result is never kept, and its failure for LEAN_FAILURE_TTL."""
        return {"result_ttl": 0, "failure_ttl": LEAN_FAILURE_TTL} if self.lean else {}


_registry: dict[str, JobSpec] = {}
_warmups: list[tuple[frozenset[str], Callable[[Flask], None]]] = []
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


def redis_connection(app: Flask | None = None, *, worker: bool = False):
    """The Redis of the job queues (short timeouts in web processes), for other bookkeeping beside RQ's."""
    return _redis_connection(app or current_app._get_current_object(), worker=worker)


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


# What RQ holds of a job, as `job_state` tells it (app/recovery.py acts on it).
JOB_QUEUED = "queued"        # waiting in its queue (however long the backlog), or scheduled for later
JOB_TAKEN = "taken"          # a worker took it and beats: about to run it, or running it
JOB_ABANDONED = "abandoned"  # a worker took it and stopped beating: it died with the job
JOB_MISSING = "missing"      # no such job: never queued (the process died after its commit), or Redis lost it
JOB_ENDED = "ended"          # RQ ran it to an end (finished, failed, stopped, canceled)
# Why work is lost, in the words the recovery notes and logs use (the states in which a job still lives need none).
JOB_STATE_WORDS = {JOB_ABANDONED: "the worker that took its job stopped",
                   JOB_MISSING: "its job is not in Redis (never queued, or lost with Redis)",
                   JOB_ENDED: "its job ended without finishing the work"}


def job_state(job_id: str | None, *, fresh: float, app: Flask | None = None) -> str | None:
    """Where the RQ job of this id is: JOB_QUEUED, JOB_TAKEN (the job's last beat, `_Pulse`'s or RQ's own, is
    younger than `fresh` seconds), JOB_ABANDONED, JOB_MISSING or JOB_ENDED. None when it cannot be told (Redis
    unreachable). Without REDIS_URL (in-process jobs) nothing is kept: JOB_MISSING."""
    app = app or current_app._get_current_object()
    if not job_id or not app.config.get("REDIS_URL"):
        return JOB_MISSING
    from redis.exceptions import RedisError
    from rq.exceptions import NoSuchJobError
    from rq.job import Job
    conn = _redis_connection(app)
    try:
        try:
            rq_job = Job.fetch(job_id, connection=conn)
        except NoSuchJobError:
            return JOB_MISSING
        status = rq_job.get_status(refresh=False)
        status = str(getattr(status, "value", status))
        if status in ("scheduled", "deferred"):
            return JOB_QUEUED
        if status in ("finished", "failed", "stopped", "canceled"):
            return JOB_ENDED
        if status == "queued" and conn.lpos(f"rq:queue:{rq_job.origin}", job_id) is not None:
            return JOB_QUEUED
    except RedisError:
        return None
    except Exception:  # noqa: BLE001 - a job hash RQ cannot read (half-deleted) holds no work
        log.warning("job %s: unreadable in Redis", job_id, exc_info=True)
        return JOB_MISSING
    beat = rq_job.last_heartbeat  # taken by a worker (no longer in its queue): does the worker still beat?
    if beat is not None:
        beat = beat if beat.tzinfo else beat.replace(tzinfo=timezone.utc)
        if (datetime.now(timezone.utc) - beat).total_seconds() < fresh:
            return JOB_TAKEN
    return JOB_ABANDONED


# ------------------------------------------------------------------ the registry

def job(queue_name: str, *, name: str | None = None, timeout: int = 600, cron: str | None = None,
        every: str | None = None, account: Callable[..., int | None] | None = None, lean: bool = False,
        background: bool = False) -> Callable:
    """Register a function as the job `name` (default: the function's name) on a queue. Jobs take ids and plain
    values, never ORM objects. A recurring job gives `cron` (UTC) or `every`, the name of the setting that holds
    its interval in seconds. `account(*args)` tells the account a run works for (asked only when a run fails, to
    show the failure to that account's admins). `lean`: a run's success leaves nothing in Redis (no result, no
    execution record, no registry entry: `worker_class`), for frequent jobs whose record is a row of ours; a failed
    run is kept as any job's, for LEAN_FAILURE_TTL. `background`: bulk work run at a lower OS priority
    (BACKGROUND_JOB_NICE) in its work horse, so that it takes the CPU the interactive paths leave (a job of an
    inline queue runs in the worker process, unniced). The function is returned unchanged, with `enqueue` /
    `enqueue_now` shortcuts for its own module and the tests; services use `enqueue(name, ...)`."""
    if queue_name not in QUEUES:
        raise ValueError(f"unknown queue {queue_name}")
    if cron and every:
        raise ValueError("a recurring job has a cron expression or an interval, not both")

    def decorate(fn: Callable) -> Callable:
        spec = JobSpec(name or fn.__name__, fn, queue_name, timeout, cron, every, account, lean, background)
        known = _registry.get(spec.name)
        if known is not None and (known.fn.__module__, known.fn.__qualname__) != (fn.__module__, fn.__qualname__):
            raise ValueError(f"job name {spec.name!r} is taken by {known.fn.__module__}.{known.fn.__qualname__}")
        _registry[spec.name] = spec
        fn.job_name = spec.name
        fn.enqueue = lambda *args, _job_id=None, **kwargs: enqueue(spec.name, *args, _job_id=_job_id, **kwargs)
        fn.enqueue_now = lambda *args, _job_id=None, **kwargs: enqueue_now(spec.name, *args, _job_id=_job_id,
                                                                           **kwargs)
        return fn

    return decorate


def spec_of(name: str) -> JobSpec:
    """The registered job `name`. A dotted path (a job queued before jobs had names, or typed in `flask jobs
    run`) is looked up by its last part."""
    spec = _registry.get(name) or _registry.get(name.rpartition(".")[2])
    if spec is None:
        raise LookupError(f"no job named {name!r} (is its module imported by the app factory?)")
    return spec


def registered() -> dict[str, JobSpec]:
    return dict(_registry)


def enqueue(name: str, *args: Any, _job_id: str | None = None, **kwargs: Any) -> None:
    """Queue the job `name` once the current transaction commits. Checks first that the queue answers: when
    Redis is down this raises ServiceUnavailable, so the caller's transaction rolls back and nothing is left
    without its job. (Should Redis fail between this check and the commit, the enqueue error is logged and the
    record's own sweeper picks it up.) `_job_id` names the RQ job, so that a sweeper can look it up."""
    spec_of(name)  # an unknown name fails here, inside the caller's transaction
    ensure_queue_available()
    after_commit(lambda: enqueue_now(name, *args, _job_id=_job_id, **kwargs))


def enqueue_many(name: str, items: list[tuple[tuple, str | None]]) -> None:
    """`enqueue` for several runs of the job `name` (one per (args, job id)): one check that the queue answers now,
    one round trip to Redis once the current transaction commits (`enqueue_many_now`)."""
    spec_of(name)
    ensure_queue_available()
    after_commit(lambda: enqueue_many_now(name, items))


def enqueue_later(name: str, when: datetime, *args: Any, _job_id: str | None = None) -> None:
    """`enqueue` for a job that is to run at `when` (UTC): scheduled once the current transaction commits."""
    spec_of(name)
    ensure_queue_available()
    after_commit(lambda: enqueue_at(name, when, *args, _job_id=_job_id))


def enqueue_now(name: str, *args: Any, _job_id: str | None = None, **kwargs: Any) -> str | None:
    """Queue the job now (no transaction to wait for); its RQ job id, or None when it runs in-process."""
    ids = enqueue_many_now(name, [(args, _job_id)], kwargs)
    return ids[0] if ids else None


def enqueue_many_now(name: str, items: list[tuple[tuple, str | None]], kwargs: dict | None = None) -> list[str]:
    """Queue the job `name` once per (args, job id) in one round trip to Redis: each job, its queue's registration
    and the push in one pipeline (RQ's `enqueue` sends two). Returns the RQ job ids ([] when jobs run
    in-process, without Redis)."""
    spec = spec_of(name)
    app = current_app._get_current_object()
    if not app.config.get("REDIS_URL"):
        for args, _job_id in items:
            _in_process(app, spec.name, args, kwargs or {})
        return []
    from rq import Queue
    jobs = queue(spec.queue, app).enqueue_many([
        Queue.prepare_data(run_job, args=(spec.name, *args), kwargs=kwargs, timeout=spec.timeout, job_id=job_id,
                           **spec.ttls)
        for args, job_id in items])
    return [j.id for j in jobs]


def enqueue_at(name: str, when: datetime, *args: Any, _job_id: str | None = None) -> None:
    """Queue the job `name` to run at `when` (UTC; RQ's scheduler, run by the workers, moves it to its queue)."""
    spec = spec_of(name)
    app = current_app._get_current_object()
    if not app.config.get("REDIS_URL"):
        delay = max(0.0, (when - datetime.now(timezone.utc)).total_seconds())
        timer = threading.Timer(delay, _in_process, args=(app, spec.name, args, {}))
        timer.daemon = True
        timer.start()
        return
    if when.microsecond:  # RQ keeps whole seconds and truncates: round up, so that a job never runs early
        when = when.replace(microsecond=0) + timedelta(seconds=1)
    queue(spec.queue, app).enqueue_at(when, run_job, spec.name, *args, job_timeout=spec.timeout, job_id=_job_id,
                                      **spec.ttls)


def warmup(*queues: str) -> Callable:
    """Register `fn(app)`, run in a worker's main process when it starts and before each job of these queues
    (a job runs in the main process, or in a work horse forked from it: either way it sees what the main process
    holds)."""
    unknown = set(queues) - set(QUEUES)
    if unknown:
        raise ValueError(f"unknown queues {sorted(unknown)}")

    def decorate(fn: Callable[[Flask], None]) -> Callable[[Flask], None]:
        if all(f is not fn for _, f in _warmups):
            _warmups.append((frozenset(queues), fn))
        return fn

    return decorate


def _warm(app: Flask, queue_name: str | None = None) -> None:
    for queues, fn in list(_warmups):
        if queue_name is None or queue_name in queues:
            try:
                fn(app)
            except Exception:  # a worker that cannot warm up still runs its jobs
                log.exception("warm-up %s failed", getattr(fn, "__qualname__", fn))


# ------------------------------------------------------------------ running

def _app_for_job() -> Flask:
    """The app a job runs in: the current one, or the worker's (`flask jobs worker` sets it)."""
    if has_app_context():
        return current_app._get_current_object()
    if _worker_app is None:
        raise RuntimeError("jobs run inside an app: start workers with `flask jobs worker`")
    return _worker_app


def run_job(name: str, *args: Any, **kwargs: Any) -> Any:
    """What RQ executes: run the registered job inside an app context. A run that raises (its timeout included)
    is recorded in job_failures (`record_failure`) before RQ marks it failed; a successful run costs nothing more."""
    app = _app_for_job()
    with app.app_context():
        try:
            return spec_of(name).fn(*args, **kwargs)
        except Exception as exc:
            db.session.remove()  # the run's transaction may be broken: the record is written on a fresh one
            record_failure(name, args, kwargs, f"{type(exc).__name__}: {exc}")
            raise
        finally:
            db.session.remove()


# ------------------------------------------------------------------ failures

def failures(*, account_id: int | None = None, job_name: str | None = None, limit: int = 100) -> list:
    """The latest recorded job failures, newest first: one account's (its admins' page), or all (the operator)."""
    from sqlalchemy import select

    from app.core.models import JobFailure
    query = select(JobFailure).order_by(JobFailure.last_failed_at.desc(), JobFailure.id.desc()).limit(limit)
    if account_id is not None:
        query = query.where(JobFailure.account_id == account_id)
    if job_name:
        query = query.where(JobFailure.job_name == job_name)
    return list(db.session.scalars(query))


def purge_failures(older_than_days: int) -> int:
    """Delete failures whose last failed run is older than this many days; how many went."""
    from sqlalchemy import delete

    from app.core.models import JobFailure
    from app.core.types import utcnow
    cutoff = utcnow() - timedelta(days=older_than_days)
    return db.session.execute(delete(JobFailure).where(JobFailure.last_failed_at < cutoff)).rowcount or 0


def _work_key(spec: JobSpec | None, args: tuple, kwargs: dict) -> list:
    """What a run works on: its arguments without the dispatch's fencing token (a parameter named `job_id`, new
    on every dispatch), so that the failures of one piece of work add up in one row."""
    import inspect
    values = list(args)
    if spec is not None:
        try:
            names = list(inspect.signature(spec.fn).parameters)
        except (TypeError, ValueError):
            names = []
        if "job_id" in names and names.index("job_id") < len(values):
            del values[names.index("job_id")]
    values += [[k, v] for k, v in sorted(kwargs.items()) if k != "job_id"]
    return values


def record_failure(name: str, args: tuple, kwargs: dict | None, error: str, *, rq_job_id: str | None = None) -> None:
    """Record a failed run of the job `name` (its work, attempts, last error and time, and the account when the job
    tells it) in job_failures, where the operator (`flask jobs failures`) and the account's admins (Admin > Failed
    jobs) see it. Called only on failure; never raises (a failure to record is logged)."""
    import json

    from sqlalchemy import select

    from app.core.models import JobFailure
    from app.core.types import utcnow
    kwargs = kwargs or {}
    try:
        spec = spec_of(name)
    except LookupError:
        spec = None
    job_name = spec.name if spec else name
    work = _work_key(spec, args, kwargs)
    key = json.dumps(work, sort_keys=True, default=str)[:500]
    error = error[:4000]
    if rq_job_id is None:
        try:
            from rq import get_current_job
            current = get_current_job()
            rq_job_id = current.id if current is not None else None
        except Exception:  # noqa: BLE001 - outside a worker
            rq_job_id = None
    for _ in range(2):  # a concurrent first failure of the same work: the second try updates its row
        try:
            account_id = None
            if spec is not None and spec.account is not None:
                try:
                    account_id = spec.account(*args)
                except Exception:  # noqa: BLE001 - the record goes in without its account
                    rollback()
            now = utcnow()
            row = db.session.scalar(select(JobFailure).where(JobFailure.job_name == job_name,
                                                             JobFailure.work_key == key).with_for_update())
            if row is None:
                row = JobFailure(job_name=job_name, work_key=key, args=json.loads(json.dumps(work, default=str)),
                                 attempts=0, first_failed_at=now)
                db.session.add(row)
            row.attempts += 1
            row.last_error, row.last_failed_at, row.rq_job_id = error, now, rq_job_id
            row.account_id = account_id if account_id is not None else row.account_id
            commit()
            log.warning("job %s%s failed (attempt %s): %s", job_name, work, row.attempts, error[:300])
            return
        except Exception:  # noqa: BLE001 - the database is what failed, or a concurrent insert won
            rollback()
    log.exception("job %s%s failed and the failure could not be recorded: %s", job_name, work, error[:300])


def _in_process(app: Flask, name: str, args: tuple, kwargs: dict) -> None:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="inproc-job")

    def run():
        try:
            with app.app_context():
                run_job(name, *args, **kwargs)
        except Exception:
            log.exception("in-process job %s failed", name)

    try:
        _executor.submit(run)
    except RuntimeError:  # the process is shutting down (a CLI command ending): run it here, now
        run()


def _after_fork_in_child() -> None:
    # A forked RQ work-horse must not share pooled database connections with its parent.
    if _worker_app is not None:
        with _worker_app.app_context():
            db.engine.dispose(close=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


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


# How often a worker writes its own heartbeat and reads the suspension flag (`rq suspend`) at most: RQ does both
# several times a job; its key lives worker_ttl + 60 s (8 minutes by default).
WORKER_BEAT_EVERY = 1.0


class _Pulse:
    """Beats a job's `last_heartbeat` every `every` seconds on a thread of the worker's main process, for both
    kinds of worker (RQ's own heartbeat starts only once a work horse runs, and a SimpleWorker has none during a
    job). A worker that dies stops beating: `job_state` then calls its job abandoned."""

    def __init__(self, job, every: float):
        self.job, self.every = job, max(0.5, float(every))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"pulse-{job.id}", daemon=True)

    def _beat(self) -> None:
        try:
            self.job.heartbeat(datetime.now(timezone.utc), 0)
        except Exception:  # noqa: BLE001 - Redis gone for a moment: the next beat tries again
            log.debug("job %s: heartbeat not written", self.job.id)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._beat()

    def __enter__(self):
        self._beat()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=5)
        return False


def worker_class(kind: str = "fork", inline: frozenset[str] | set[str] = frozenset()):
    """The worker class of `flask jobs worker`. `fork`: a work horse per job, except for the jobs of the `inline`
    queues (names without the prefix), which run in the main process as `simple` runs every job (no fork: a check
    run costs a few milliseconds, a fork and a new database connection far more; docs/decisions.md)."""
    from rq import SimpleWorker, Worker
    from rq.executions import Execution
    from rq.job import JobStatus
    from rq.utils import now

    base = SimpleWorker if kind == "simple" else Worker

    class AppWorker(base):
        """An RQ worker that runs the registered warm-ups of a job's queue in its main process first (the
        checks package keeps the screening index loaded this way).

        It spares Redis what nobody reads (docs/performance.md, "A check pipeline three times cheaper"): its own
        heartbeat and suspension check at most every WORKER_BEAT_EVERY seconds instead of several times a job
        (its key lives worker_ttl + 60 s), its state written only when it changes, and a lean job (queued with
        result_ttl=0: `job(lean=True)`) run in the main process without an execution record, a registry entry,
        a result or a worker counter: the job's hash says `started` with its worker and beat while it runs (what
        `job_state` reads) and is deleted when it succeeds. A lean job that fails is recorded as any job."""

        # RQ doubles its wait between reconnection attempts up to 60 s: after a long Redis outage the worker
        # slept up to a minute more. Capped, it takes jobs again within seconds of Redis answering.
        max_connection_wait_time = 5.0
        inline_queues = frozenset(inline)
        _inline_job = False
        _lean_job = False
        _state_written: str | None = None
        _suspension_checked = float("-inf")
        _full_beat_at = float("-inf")

        def execute_job(self, job, queue):
            # The job's pulse, from the moment the worker takes it (before the warm-up and the fork) to its end:
            # while it beats, the recovery sweeper knows a live worker holds the job (app/recovery.py).
            with _Pulse(job, self.job_monitoring_interval):
                name = queue.name
                if _worker_app is not None:
                    prefix = _worker_app.config["RQ_QUEUE_PREFIX"]
                    name = name[len(prefix):] if name.startswith(prefix) else name
                    _warm(_worker_app, name)
                if base is not SimpleWorker and name not in self.inline_queues:
                    return super().execute_job(job, queue)
                self._inline_job, self._lean_job = True, job.result_ttl == 0
                try:
                    return SimpleWorker.execute_job(self, job, queue)
                finally:
                    self._inline_job = self._lean_job = False

        # ---- a lean job in the main process: only its own hash, written once as it starts and deleted at its end

        def prepare_execution(self, job):
            if not self._lean_job:
                return super().prepare_execution(job)
            return Execution(id=os.urandom(16).hex(), job_id=job.id, connection=self.connection,
                             worker_name=self.name)  # in memory only: RQ's records of it are never written

        def prepare_job_execution(self, job, remove_from_intermediate_queue: bool = False) -> None:
            if not self._lean_job:
                return super().prepare_job_execution(job, remove_from_intermediate_queue)
            with self.connection.pipeline(transaction=False) as pipeline:
                job.prepare_for_execution(self.name, pipeline=pipeline)  # status started, worker, beat
                if remove_from_intermediate_queue:
                    from rq import Queue
                    pipeline.lrem(Queue(job.origin, connection=self.connection).intermediate_queue_key, 1, job.id)
                pipeline.execute()

        def handle_execution_ended(self, job, queue, heartbeat_ttl: int):
            if not self._lean_job:
                return super().handle_execution_ended(job, queue, heartbeat_ttl)
            job.ended_at = now()

        def handle_job_success(self, job, queue, started_job_registry, execution):
            if not self._lean_job:
                return super().handle_job_success(job, queue, started_job_registry, execution)
            self.connection.delete(job.key)  # a lean job has no dependents, result or registry entry to clean
            job._status = JobStatus.FINISHED
            self.executions.pop(execution.id, None)

        def cleanup_execution(self, job, pipeline, execution=None):
            if not self._lean_job:
                return super().cleanup_execution(job, pipeline, execution)
            if execution is not None:
                self.executions.pop(execution.id, None)

        # ---- the worker's own bookkeeping, at most once per WORKER_BEAT_EVERY seconds

        def heartbeat(self, timeout: int | None = None, pipeline=None):
            if timeout is None and pipeline is None and time.monotonic() - self._full_beat_at < WORKER_BEAT_EVERY:
                return  # the key was given its full life (worker_ttl + 60 s) less than WORKER_BEAT_EVERY s ago
            super().heartbeat(timeout, pipeline)
            # Only a beat of the full life may spare the next ones (a job's beat gives the key less).
            self._full_beat_at = time.monotonic() if timeout is None else float("-inf")

        def set_state(self, state, pipeline=None):
            if pipeline is None and state == self._state_written:
                self._state = state
                return
            super().set_state(state, pipeline)
            self._state_written = state

        def check_for_suspension(self, burst: bool):
            if time.monotonic() - self._suspension_checked < WORKER_BEAT_EVERY:
                return
            super().check_for_suspension(burst)
            self._suspension_checked = time.monotonic()

        def main_work_horse(self, job, queue):
            # In the forked horse, which ends with the job: its priority never leaks into the worker.
            nice = int(_worker_app.config.get("BACKGROUND_JOB_NICE", 0)) if _worker_app is not None else 0
            if nice > 0 and _background(job):
                os.nice(nice)
            return super().main_work_horse(job, queue)

        def handle_work_horse_killed(self, job, retpid, ret_val, rusage):
            # A work horse that died (killed, out of memory) could not record its own failure: its parent does.
            super().handle_work_horse_killed(job, retpid, ret_val, rusage)
            if _worker_app is not None and _registered_name(job) is not None:
                with _worker_app.app_context():
                    try:
                        record_failure(job.args[0], tuple(job.args[1:]), job.kwargs,
                                       f"The worker's work horse ended unexpectedly (exit status {ret_val}).",
                                       rq_job_id=job.id)
                    finally:
                        db.session.remove()

        def get_heartbeat_ttl(self, job, working_time: float = 0.0) -> int:
            # A job run in the main process has no horse monitor renewing its lease: SimpleWorker's (the job's
            # timeout and a minute), as for a simple worker.
            if self._inline_job:
                return SimpleWorker.get_heartbeat_ttl(self, job, working_time)
            return super().get_heartbeat_ttl(job, working_time)

    return AppWorker


def _registered_name(job) -> str | None:
    """The registered job an RQ job runs (`run_job(name, ...)`), or None for anything else RQ was given."""
    return str(job.args[0]) if (job.func_name or "").endswith("run_job") and job.args else None


def _background(job) -> bool:
    """Whether an RQ job runs a registered job marked `background`."""
    name = _registered_name(job)
    try:
        return name is not None and spec_of(name).background
    except LookupError:
        return False


def make_worker(app: Flask, queues: list[str] | None = None, kind: str = "fork"):
    """The worker `flask jobs worker` runs (`run_worker`), on these queues (default: all), not yet started."""
    global _worker_app
    _worker_app = app
    names = [app.config["RQ_QUEUE_PREFIX"] + q for q in (queues or QUEUES)]
    # A job's pulse (and RQ's own heartbeat) comes well within the recovery grace: a live worker never looks dead.
    monitoring = max(1, min(30, int(app.config["RECOVERY_GRACE_SECONDS"] // 3)))
    inline = {q.strip() for q in (app.config.get("RQ_INLINE_QUEUES") or "").split(",") if q.strip()}
    return worker_class(kind, inline)(names, connection=_redis_connection(app, worker=True),
                                      job_monitoring_interval=monitoring)


def run_worker(app: Flask, queues: list[str] | None = None, burst: bool = False, kind: str = "fork") -> bool:
    worker = make_worker(app, queues, kind)
    _warm(app)
    freeze_startup_heap()
    return worker.work(burst=burst, with_scheduler=True)


def queue_status(app: Flask | None = None) -> list[dict[str, Any]]:
    """Each queue, the jobs waiting in it, the live workers that take it and the workers that take it whose process
    is gone (`gone`). RQ's registry of workers keeps a worker until its key expires (minutes after it stopped
    beating); a worker of this machine whose process no longer exists (killed: no death registered) is gone at once.
    A queue no live worker takes is work that never runs: since the roles split the queues (`--light`,
    `--background`, `--heavy`), a deployment that runs only some roles leaves queues unserved."""
    from rq import Worker
    app = app or current_app
    conn = _redis_connection(app, worker=True)
    prefix = app.config["RQ_QUEUE_PREFIX"]
    workers = [(w, _process_gone(w)) for w in Worker.all(connection=conn)]
    rows = []
    for name in QUEUES:
        taking = [gone for w, gone in workers if prefix + name in w.queue_names()]
        rows.append({"queue": name, "waiting": queue(name, app).count, "workers": taking.count(False),
                     "gone": taking.count(True)})
    return rows


def _process_gone(worker) -> bool:
    """A registered worker of this machine whose process no longer exists (another machine's cannot be asked: its
    key expires)."""
    if not worker.pid or worker.hostname != socket.gethostname():
        return False
    try:
        os.kill(worker.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # a process of another user: alive
        return False
    return False


def schedule() -> list[JobSpec]:
    """The recurring jobs, by name."""
    return sorted((s for s in _registry.values() if s.cron or s.every), key=lambda s: s.name)


def build_scheduler(app: Flask):
    from rq.cron import CronScheduler
    scheduler = CronScheduler(connection=_redis_connection(app, worker=True))
    for spec in schedule():
        timing = {"cron": spec.cron} if spec.cron else {"interval": max(1, int(app.config[spec.every]))}
        scheduler.register(run_job, queue_name=app.config["RQ_QUEUE_PREFIX"] + spec.queue, args=(spec.name,),
                           name=spec.name, **timing)
    return scheduler
