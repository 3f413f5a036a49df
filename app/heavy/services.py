"""Heavy jobs: asked for in a request, run by a heavy worker, swept when lost, purged when old.

The request side (`submit`) checks the account's share first (`admit`: a full backlog or an empty bucket of work
seconds is a 429 with Retry-After, Redis down a 503, nothing written), writes the row, and after the commit puts
the job in its account's pending list and dispatches (app/heavy/fair.py). A request for a document that an open job
is already making (same `cache_key`) gets that job: twenty clicks make one PDF.

The worker side (`run`) takes the row (a fencing token: the job id of the run that holds it), calls the kind's
handler as the actor who asked, and writes the outcome in one transaction with the handler's own writes (an import's
rows and its `complete` commit together, so a run that dies leaves nothing half-done and a run that ended is never
repeated). A handler's `Invalid` or `Conflict` is the job's failure, with its message and field errors; anything
else fails it with a message that tells the operator's log line apart. Then it frees its slot, takes its seconds
from the account's bucket and dispatches the next job.

Without REDIS_URL (development) jobs run in-process after the commit, without fair shares."""
from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Callable

from flask import Flask, current_app
from sqlalchemy import delete, func, select, update
from sqlalchemy.exc import IntegrityError

from app import jobs
from app.core.actor import Actor
from app.core.errors import Conflict, DomainError, Invalid, NotFound, RateLimited
from app.core.storage import BlobNotFound, blob_storage, sealed
from app.core.transactions import after_commit, commit, rollback, transaction
from app.core.types import set_actor, utcnow
from app.extensions import db
from app.heavy import fair
from app.heavy.models import COMPLETE, FAILED, OPEN, QUEUED, RUNNING, HeavyJob

log = logging.getLogger(__name__)

JOB_OF_QUEUE = {"pdf": "run_heavy_pdf", "imports": "run_heavy_import"}
ROWS_KEPT_DAYS = 30  # a job's row (its status page) outlives its file by this long
MAX_ERRORS_KEPT = 1000  # field errors kept on a failed job (an import of 50,000 bad rows reports the first ones)


@dataclass
class Outcome:
    """What a handler made: a file (data, filename, content type), a summary, and for a document the key it is
    cached under (`reuse`: an equal document is already stored under that key, nothing was rendered)."""
    data: bytes | None = None
    filename: str | None = None
    content_type: str | None = None
    summary: dict[str, Any] | None = None
    cache_key: str | None = None
    reuse: "HeavyJob | None" = None


Progress = Callable[[int, str | None], None]


@dataclass(frozen=True)
class Handler:
    kind: str
    queue: str
    fn: Callable[[HeavyJob, Actor, Progress], Outcome]
    label: str = field(default="")


_handlers: dict[str, Handler] = {}


def handler(kind: str, queue: str, label: str) -> Callable:
    """Register `fn(job, actor, progress) -> Outcome` as the work of `kind`, run on `queue` (pdf or imports)."""
    if queue not in JOB_OF_QUEUE:
        raise ValueError(f"heavy work runs on {sorted(JOB_OF_QUEUE)}, not {queue!r}")

    def decorate(fn):
        _handlers[kind] = Handler(kind, queue, fn, label)
        return fn
    return decorate


def handler_of(kind: str) -> Handler:
    try:
        return _handlers[kind]
    except KeyError:
        raise LookupError(f"no heavy handler for {kind!r} (is its module imported by the app factory?)") from None


def label_of(kind: str) -> str:
    h = _handlers.get(kind)
    return h.label if h else kind.replace("_", " ")


# ------------------------------------------------------------------ keys and the actor

def cache_key(kind: str, content_digest: str, actor: Actor) -> str:
    """The key of a document: what it prints (its content hash) and for whom (the footer names them)."""
    raw = json.dumps([kind, content_digest, actor.account_id, actor.kind, actor.name], separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def request_key(kind: str, target: str, actor: Actor) -> str:
    """The key of a request for a report: an open job of this key is shared by the same person's later clicks."""
    raw = json.dumps([kind, target, actor.account_id, actor.kind, actor.id], separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def _actor_snapshot(actor: Actor) -> dict[str, Any]:
    return {"account_id": actor.account_id, "kind": actor.kind, "id": actor.id,
            "uuid": str(actor.uuid) if actor.uuid else None, "name": actor.name, "role": actor.role,
            "api_reference": actor.api_reference, "via": actor.via}


def actor_of(job: HeavyJob) -> Actor:
    import uuid as uuid_mod
    a = job.requested_by or {}
    return Actor(account_id=job.account_id, kind=a.get("kind", "system"), id=a.get("id"),
                 uuid=uuid_mod.UUID(a["uuid"]) if a.get("uuid") else None, name=a.get("name") or "system",
                 role=a.get("role") or "viewer", api_reference=a.get("api_reference"), via="job")


def _storage():
    return sealed(blob_storage())


def _uses_redis(app: Flask | None = None) -> bool:
    app = app or current_app._get_current_object()
    return bool(app.config.get("REDIS_URL"))


# ------------------------------------------------------------------ the request side

def admit(actor: Actor) -> None:
    """Raise when the account may not queue heavy work now: 429 (with Retry-After) when its backlog is full or its
    bucket of work seconds is empty, 503 when the queue's Redis is down. Nothing is written before."""
    app = current_app._get_current_object()
    if not _uses_redis(app):
        return
    jobs.ensure_queue_available(app)
    waiting = db.session.scalar(select(func.count(HeavyJob.id)).where(
        HeavyJob.account_id == actor.account_id, HeavyJob.status == QUEUED))
    limit = int(app.config["HEAVY_MAX_QUEUED_PER_ACCOUNT"])
    if waiting >= limit:
        raise RateLimited(f"Your account already has {waiting} reports, imports or exports waiting (at most "
                          f"{limit}). Retry when some have finished.", headers={"Retry-After": "30"})
    try:
        wait = fair.budget_wait(actor.account_id, app)
    except Exception:  # noqa: BLE001 - the bucket's Redis stumbled: the queue answered a moment ago, let it in
        log.warning("heavy work budget unreadable: admitting", exc_info=True)
        return
    if wait:
        raise RateLimited(f"Your account has used its share of report, import and export time for now. Retry in "
                          f"{wait} seconds.", headers={"Retry-After": str(wait)})


def open_job(actor: Actor, key: str) -> HeavyJob | None:
    """The open job already asked for with this request key, if any."""
    return db.session.scalar(select(HeavyJob).where(HeavyJob.account_id == actor.account_id,
                                                    HeavyJob.request_key == key, HeavyJob.status.in_(OPEN)).limit(1))


def stored_document(actor: Actor, key: str) -> tuple[bytes, HeavyJob] | None:
    """The stored file of the document of this key (a complete job's, not purged), or None."""
    now = utcnow()
    rows = db.session.scalars(select(HeavyJob).where(
        HeavyJob.account_id == actor.account_id, HeavyJob.cache_key == key, HeavyJob.status == COMPLETE,
        HeavyJob.result_key.is_not(None), HeavyJob.purged_at.is_(None), HeavyJob.expires_at > now)
        .order_by(HeavyJob.id.desc()).limit(1))
    for row in rows:
        try:
            return _storage().get(row.result_key), row
        except BlobNotFound:
            return None
    return None


def submit(actor: Actor, kind: str, *, target_uuid=None, params: dict | None = None,
           request_key: str | None = None, input_data: bytes | None = None,
           message: str | None = None) -> HeavyJob:
    """Ask for heavy work (the caller commits). The same request while its job is open: that job."""
    spec = handler_of(kind)
    key = request_key
    if key is not None and (same := open_job(actor, key)) is not None:
        return same
    admit(actor)
    job = HeavyJob(account_id=actor.account_id, kind=kind, queue=spec.queue, status=QUEUED, progress=0,
                   message=message or "Waiting for a worker.", target_uuid=target_uuid, params=params or {},
                   requested_by=_actor_snapshot(actor), request_key=key, attempts=0, created_at=utcnow())
    set_actor(job, "created_by", actor)
    try:
        with db.session.begin_nested():  # added inside the savepoint: begin_nested flushes what is pending first
            db.session.add(job)
            db.session.flush()
    except IntegrityError:  # another request opened the job of this document meanwhile: share it
        same = open_job(actor, key) if key else None
        if same is None:
            raise Conflict("The same request is being queued by another one; retry in a moment.") from None
        return same
    if input_data is not None:
        job.input_key = f"heavy/{actor.account_id}/{job.uuid}/input"
        _storage().put(job.input_key, input_data, content_type="application/octet-stream")
    app = current_app._get_current_object()
    row_id, account_id = job.id, job.account_id
    after_commit(lambda: queue_job(app, account_id, row_id, spec.queue))
    return job


def queue_job(app: Flask, account_id: int, row_id: int, queue: str) -> None:
    """After the commit: into the account's pending list, then dispatch (in-process without Redis)."""
    if not _uses_redis(app):
        jobs.enqueue_now(JOB_OF_QUEUE[queue], row_id, None)
        return
    try:
        fair.submit(account_id, _token(row_id, queue), app)
        dispatch(app)
    except Exception:  # noqa: BLE001 - Redis failed after the commit: the sweeper queues it again
        log.warning("heavy job %s committed but not queued: the sweeper will queue it", row_id, exc_info=True)


def _token(row_id: int, queue: str) -> str:
    return f"{row_id}-{queue}"


def dispatch(app: Flask | None = None) -> int:
    """Push the jobs that may run now onto their RQ queues (see app/heavy/fair.py); how many."""
    app = app or current_app._get_current_object()
    n = 0
    for item in fair.dispatch(app):
        row_id, _, queue = item.row_token.partition("-")
        try:
            jobs.enqueue_many_now(JOB_OF_QUEUE[queue], [((int(row_id), item.job_id), item.job_id)])
            n += 1
        except Exception:  # noqa: BLE001 - its slot is held: the sweeper frees it and queues the job again
            log.warning("heavy job %s dispatched but not pushed to RQ", row_id, exc_info=True)
    return n


# ------------------------------------------------------------------ the worker side

def _progress_writer(row_id: int, job_id: str | None) -> Progress:
    """Progress written beside the handler's transaction (its own connection), so that it shows while the work
    is still uncommitted."""
    last = [0.0]

    def write(percent: int, message: str | None = None) -> None:
        now = time.monotonic()
        if now - last[0] < 0.5 and percent < 100:
            return
        last[0] = now
        values: dict[str, Any] = {"progress": max(0, min(99, int(percent)))}
        if message:
            values["message"] = message[:500]
        stmt = update(HeavyJob).where(HeavyJob.id == row_id, HeavyJob.status == RUNNING)
        if job_id is not None:
            stmt = stmt.where(HeavyJob.job_id == job_id)
        try:
            with db.engine.begin() as conn:
                conn.execute(stmt.values(**values))
        except Exception:  # noqa: BLE001 - progress is a courtesy
            log.debug("progress of heavy job %s not written", row_id, exc_info=True)
    return write


def _lock(row_id: int) -> HeavyJob | None:
    return db.session.scalar(select(HeavyJob).where(HeavyJob.id == row_id)
                             .with_for_update(of=HeavyJob).execution_options(populate_existing=True))


def _start(row_id: int, job_id: str | None) -> bool:
    with transaction():
        job = _lock(row_id)
        if job is None or job.status not in OPEN:
            return False
        job.status, job.job_id, job.started_at = RUNNING, job_id, utcnow()
        job.attempts = (job.attempts or 0) + 1
        job.progress = 0
        job.message = "Running."
    return True


def _ttl() -> timedelta:
    return timedelta(hours=float(current_app.config["HEAVY_RESULT_TTL_HOURS"]))


def _finish(row_id: int, job_id: str | None, outcome: Outcome, seconds: float) -> bool:
    """Write the outcome with the handler's own writes, in one commit, if the run still holds the row."""
    job = _lock(row_id)
    if job is None or job.status != RUNNING or job.job_id != job_id:
        rollback()  # the handler's writes and their side effects go with it
        log.warning("heavy job %s: run %s no longer holds it; its outcome is dropped", row_id, job_id)
        return False
    now = utcnow()
    if outcome.reuse is not None:
        src = outcome.reuse
        job.result_key, job.result_filename = src.result_key, src.result_filename
        job.result_content_type, job.result_size = src.result_content_type, src.result_size
    elif outcome.data is not None:
        name = outcome.cache_key or "result"
        ext = (outcome.filename or "").rpartition(".")[2] or "bin"
        job.result_key = f"heavy/{job.account_id}/{'docs' if outcome.cache_key else job.uuid}/{name}.{ext}"
        _storage().put(job.result_key, outcome.data, content_type=outcome.content_type or "application/octet-stream")
        job.result_filename, job.result_content_type = outcome.filename, outcome.content_type
        job.result_size = len(outcome.data)
    if outcome.cache_key:
        job.cache_key = outcome.cache_key
    job.result = outcome.summary
    job.status, job.progress, job.finished_at = COMPLETE, 100, now
    job.message = "Complete."
    job.cost_seconds = round(seconds, 3)
    job.expires_at = now + _ttl()
    _drop_input(job)
    commit()  # the handler's side effects (webhooks, e-mails) are released with its writes, not at a later commit
    return True


def _fail(row_id: int, job_id: str | None, message: str, errors: dict | None, seconds: float | None) -> None:
    rollback()
    with transaction():
        job = _lock(row_id)
        if job is None or job.status not in OPEN or (job_id is not None and job.job_id != job_id):
            return
        now = utcnow()
        job.status, job.finished_at, job.expires_at = FAILED, now, now + _ttl()
        job.message = message[:500]
        if errors:
            keys = list(errors)[:MAX_ERRORS_KEPT]
            job.errors = {k: errors[k] for k in keys}
        job.cost_seconds = round(seconds, 3) if seconds is not None else None
        _drop_input(job)


def _drop_input(job: HeavyJob) -> None:
    if job.input_key:
        try:
            _storage().delete(job.input_key)
        except Exception:  # noqa: BLE001 - the purge removes it later
            log.warning("heavy job %s: input not deleted", job.id, exc_info=True)
        job.input_key = None


def read_input(job: HeavyJob) -> bytes:
    if not job.input_key:
        raise Invalid("The uploaded file is gone; upload it again.", errors={"file": ["The file is gone."]})
    try:
        return _storage().get(job.input_key)
    except BlobNotFound:
        raise Invalid("The uploaded file is gone; upload it again.", errors={"file": ["The file is gone."]}) \
            from None


def run(row_id: int, job_id: str | None) -> str | None:
    """Run a heavy job (its RQ job or the in-process thread): the job's final status, or None when it was not
    this run's to do."""
    app = current_app._get_current_object()
    seconds = 0.0
    account_id = None
    try:
        if not _start(row_id, job_id):
            return None
        job = db.session.get(HeavyJob, row_id)
        account_id = job.account_id
        spec = handler_of(job.kind)
        actor = actor_of(job)
        started = time.perf_counter()
        try:
            outcome = spec.fn(job, actor, _progress_writer(row_id, job_id))
            seconds = time.perf_counter() - started
            return COMPLETE if _finish(row_id, job_id, outcome, seconds) else None
        except (Invalid, Conflict, NotFound, DomainError) as exc:
            seconds = time.perf_counter() - started
            _fail(row_id, job_id, exc.message, exc.errors, seconds)
            return FAILED
        except Exception as exc:  # noqa: BLE001 - any other failure fails the job, told in its message
            seconds = time.perf_counter() - started
            log.exception("heavy job %s (%s) failed", row_id, job_id)
            _fail(row_id, job_id, f"The job failed ({type(exc).__name__}); the operators have the details. "
                                  "Retry, or contact support quoting the job's id.", None, seconds)
            return FAILED
    finally:
        db.session.remove()
        if job_id is not None and _uses_redis(app):
            try:
                fair.release(job_id, app)
                if account_id is not None and seconds:
                    fair.spend(account_id, seconds, app)
                dispatch(app)
            except Exception:  # noqa: BLE001 - the sweeper frees the slot and dispatches
                log.warning("heavy job %s: slot not released", row_id, exc_info=True)


# ------------------------------------------------------------------ the sweeper and the purge

def sweep(grace: float | None = None) -> dict[str, int]:
    """Free the slots of dispatched jobs whose worker died (their RQ job stopped beating, or is gone), queue again
    open jobs that are neither pending nor running (lost with a worker, with Redis, or with the process that
    committed them) up to HEAVY_MAX_ATTEMPTS runs, then dispatch."""
    app = current_app._get_current_object()
    counts = {"released": 0, "requeued": 0, "failed": 0, "dispatched": 0}
    if not _uses_redis(app):
        return counts
    grace = float(app.config["RECOVERY_GRACE_SECONDS"] if grace is None else grace)
    now_unix = time.time()
    held: set[int] = set()
    for jid, (_acct, token_row, when) in fair.inflight(app).items():
        if now_unix - when < grace:
            held.add(token_row)
            continue
        state = jobs.job_state(jid, fresh=grace, app=app)
        if state is None or state in (jobs.JOB_QUEUED, jobs.JOB_TAKEN):
            held.add(token_row)
            continue
        if fair.release(jid, app):
            counts["released"] += 1
            log.warning("heavy job %s: its run %s was lost (%s); slot freed", token_row, jid,
                        jobs.JOB_STATE_WORDS.get(state, state))
    pending = fair.pending_rows(app)
    cutoff = utcnow() - timedelta(seconds=grace)
    max_attempts = int(app.config["HEAVY_MAX_ATTEMPTS"])
    with transaction():
        lost = [(j.id, j.account_id, j.queue) for j in db.session.scalars(
            select(HeavyJob).where(HeavyJob.status.in_(OPEN)))
            if j.id not in pending and j.id not in held and (j.started_at or j.created_at) < cutoff]
    for row_id, account_id, queue in lost:
        with transaction():
            job = _lock(row_id)
            if job is None or job.status not in OPEN:
                continue
            if job.attempts >= max_attempts:
                now = utcnow()
                job.status, job.finished_at, job.expires_at = FAILED, now, now + _ttl()
                job.message = (f"The job was lost with its worker {job.attempts} times and was given up. Retry "
                               "it; if it fails again, contact support quoting the job's id.")
                _drop_input(job)
                counts["failed"] += 1
                continue
            job.status, job.job_id, job.message = QUEUED, None, "Waiting for a worker (its last run was lost)."
        fair.submit(account_id, _token(row_id, queue), app)
        counts["requeued"] += 1
    counts["dispatched"] = dispatch(app)
    return counts


def purge(now=None) -> int:
    """Delete the files of jobs past their expiry (a document still kept by a younger job stays), and the rows
    whose files went ROWS_KEPT_DAYS ago; the count of files' jobs purged."""
    now = now or utcnow()
    storage = _storage()
    removed = 0
    with transaction():
        rows = list(db.session.scalars(select(HeavyJob).where(
            HeavyJob.status.in_((COMPLETE, FAILED)), HeavyJob.purged_at.is_(None), HeavyJob.expires_at < now)
            .limit(5000)))
        for job in rows:
            if job.result_key:
                kept = db.session.scalar(select(func.count(HeavyJob.id)).where(
                    HeavyJob.result_key == job.result_key, HeavyJob.purged_at.is_(None),
                    HeavyJob.expires_at >= now, HeavyJob.id != job.id))
                if not kept:
                    storage.delete(job.result_key)
            _drop_input(job)
            job.purged_at = now
            removed += 1
    with transaction():  # the rows themselves go a month after their files
        db.session.execute(delete(HeavyJob).where(HeavyJob.purged_at < now - timedelta(days=ROWS_KEPT_DAYS)))
    return removed
