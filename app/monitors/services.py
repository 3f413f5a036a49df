"""Monitor writes and runs. Plain values and an actor in; flush, never commit.

Monitors (spec "Monitor"): create, update (config merged key by key; 409 mid-run), soft delete (409 mid-run),
restore (portal), run (`all` | `new`; 202 with the run).

A run (trigger `manual`, `schedule` or `list_update`) fixes its entities when it starts (their ids, in order) and
splits them into chunks of MONITOR_CHUNK_SIZE; each chunk is a job (`run_monitor_chunk`) that screens its entities
in the worker, in batch, and writes in one transaction everything they led to: one compact evidence row per
entity, the alert memory, a full check and its events for each entity whose result raised any (app/events/
alerts.py decides), and one ledger row for the chunk. A worker lost mid-chunk leaves nothing of it; the recovery
sweeper dispatches the chunk again (app/recovery.py), and only the job the chunk names may finish it, so every
entity is screened, charged and alerted once per run. When the balance cannot pay for a chunk's entities the
chunk does what it can pay for, and the rest waits (the run `paused`) until a top-up: the scheduler's tick, or
`POST /monitors/{uuid}/run`, resumes it. A monitor's `process_status` follows its runs that have not ended.
"""
from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping

from flask import current_app
from sqlalchemy import exists, func, insert, select

from app import recovery, signals
from app.accounts.models import Account
from app.billing import services as billing
from app.checks import services as checks
from app.core import audit
from app.core.actor import Actor
from app.core.errors import Conflict, Forbidden, InsufficientCredit, Invalid, NotFound
from app.core.listing import uuid_value
from app.core.schemas import validate
from app.core.softdelete import recovery_cutoff, restorable
from app.core.types import set_actor, utcnow
from app.entities.models import Entity
from app.events import alerts
from app.events.models import AlertState
from app.events import services as events
from app.extensions import db
from app.monitors import nominate, queries
from app.monitors.models import (CHUNK_OPEN, RUN_ENDED, Monitor, MonitorChunk, MonitorResult,
                                 MonitorRun)
from app.monitors.schedules import next_run_at
from app.monitors.schemas import MONITOR_TYPES, MonitorCreate, MonitorRunRequest, MonitorUpdate, ProgramRunRequest
from app.programs.models import Program
from app.programs.queries import get_program
from app.programs.services import require_writable
from app.providers import CHECK_TYPES, ProviderError, RunContext, Subject, provider_for, run_provider
from app.providers.screening import alert_id_for
from app.screening import store
from app.screening.models import ScreeningList

log = logging.getLogger(__name__)

MAX_CHUNK_ATTEMPTS = 3
CHUNK_TIMEOUT = 600            # seconds: RQ stops a chunk that takes longer
GIVE_UP_CHUNK = 24 * 3600      # a chunk that could not be run within a day is given up
MID_RUN_MESSAGE = ("The monitor is mid-run (process_status {status}): wait for the run to end, or pause the "
                   "monitor to stop it running on schedule.")


# ------------------------------------------------------------------ configuration and schedule

def resolve_config(check_type: str, current: Mapping[str, Any] | None, supplied: Mapping[str, Any] | None) -> dict:
    """The operation's options: the defaults, the current ones, then the supplied ones (key by key), validated as
    a launch's config section (field errors under `config.`)."""
    model = CHECK_TYPES[check_type].config
    if model is None:
        if supplied:
            raise Invalid.field("config", f"{check_type} takes no options.")
        return {}
    merged = {**(current or {}), **(supplied or {})}
    return validate(model, merged, prefix="config.").model_dump(mode="json")


def _local_time() -> tuple[int, int]:
    cfg = current_app.config
    return cfg.get("MONITOR_LOCAL_HOUR", 2), cfg.get("MONITOR_LOCAL_MINUTE", 0)


def schedule_next(monitor: Monitor, after: datetime) -> datetime | None:
    """The monitor's next scheduled run after `after` (null: manual or paused), in its account's time zone."""
    if monitor.status != "active" or monitor.schedule == "manual":
        return None
    tz = db.session.scalar(select(Account.timezone).where(Account.id == monitor.account_id)) or "UTC"
    hour, minute = _local_time()
    try:
        return next_run_at(monitor.schedule, after, tz=tz, local_hour=hour, local_minute=minute)
    except ValueError:  # an account time zone this machine does not know: UTC
        return next_run_at(monitor.schedule, after, local_hour=hour, local_minute=minute)


def entitled_types(actor: Actor) -> list[str]:
    return list(db.session.scalar(select(Account.enabled_check_types).where(Account.id == actor.account_id)) or [])


def _require_entitled(actor: Actor, check_type: str) -> None:
    if check_type not in entitled_types(actor):
        raise Forbidden(f"The account is not entitled to: {check_type}.")


# ------------------------------------------------------------------ the resource

def create_monitor(actor: Actor, program_uuid, data: Any) -> Monitor:
    actor.require("analyst")
    program = get_program(actor, program_uuid)  # 404 first
    body = validate(MonitorCreate, data)
    _require_entitled(actor, body.monitor_check_type)
    require_writable(program)
    config = resolve_config(body.monitor_check_type, None, body.config)
    monitor = Monitor(account_id=actor.account_id, program_id=program.id, monitor_name=body.monitor_name,
                      monitor_check_type=body.monitor_check_type, status=body.status, schedule=body.schedule,
                      config=config, program=program)
    set_actor(monitor, "created_by", actor)
    db.session.add(monitor)
    db.session.flush()
    monitor.next_run_at = schedule_next(monitor, utcnow())
    audit.record(actor, "monitor.created", "monitor", monitor.uuid,
                 {"monitor_name": monitor.monitor_name, "monitor_check_type": monitor.monitor_check_type,
                  "status": monitor.status, "schedule": monitor.schedule, "config": config,
                  "program_uuid": program.uuid})
    return monitor


def _refuse_mid_run(monitor: Monitor) -> None:
    if monitor.is_mid_run:
        raise Conflict(MID_RUN_MESSAGE.format(status=monitor.process_status))


def update_monitor(actor: Actor, monitor_uuid, data: Any) -> Monitor:
    actor.require("analyst")
    monitor = queries.get_monitor(actor, monitor_uuid, for_update=True)
    body = validate(MonitorUpdate, data)
    supplied = body.model_fields_set
    for required in ("monitor_name", "status", "schedule"):
        if required in supplied and getattr(body, required) is None:
            raise Invalid.field(required, "May not be null.")
    _refuse_mid_run(monitor)
    require_writable(monitor.program)
    values = {name: getattr(body, name) for name in supplied if name != "config"}
    if "config" in supplied and body.config is not None:
        values["config"] = resolve_config(monitor.monitor_check_type, monitor.config, body.config)
    changes = audit.apply_changes(monitor, values)
    if changes:
        monitor.updated_at = utcnow()
        if {"status", "schedule"} & set(changes):
            monitor.next_run_at = schedule_next(monitor, utcnow())
        audit.record(actor, "monitor.updated", "monitor", monitor.uuid, changes)
    return monitor


def delete_monitor(actor: Actor, monitor_uuid) -> Monitor:
    """Soft delete (restorable in the portal for 30 days); 409 mid-run."""
    actor.require("analyst")
    monitor = queries.get_monitor(actor, monitor_uuid, for_update=True)
    _refuse_mid_run(monitor)
    monitor.deleted_at = utcnow()
    monitor.next_run_at = None
    audit.record(actor, "monitor.deleted", "monitor", monitor.uuid)
    return monitor


def restore_monitor(actor: Actor, monitor_uuid) -> Monitor:
    actor.require("analyst")
    monitor = db.session.scalar(select(Monitor).where(
        Monitor.uuid == monitor_uuid, Monitor.account_id == actor.account_id, Monitor.deleted_at.is_not(None)))
    if monitor is None or not restorable(monitor.deleted_at) or monitor.program.deleted_at is not None:
        raise NotFound("No deleted monitor to restore.")
    monitor.deleted_at = None
    monitor.next_run_at = schedule_next(monitor, utcnow())
    audit.record(actor, "monitor.restored", "monitor", monitor.uuid)
    return monitor


def list_deleted_monitors(actor: Actor, program: Program) -> list[Monitor]:
    return list(db.session.scalars(select(Monitor).where(
        Monitor.program_id == program.id, Monitor.deleted_at.is_not(None), Monitor.deleted_at >= recovery_cutoff())
        .order_by(Monitor.deleted_at.desc())))


# ------------------------------------------------------------------ starting runs

def run_monitor(actor: Actor, monitor_uuid, data: Any) -> MonitorRun:
    """`POST /monitors/{uuid}/run`: a new run (202), or the run paused for credit resumed. 409: the monitor or its
    program paused (or archived), or a run under way; 403: not entitled; 402: not even one check is paid for."""
    actor.require("analyst")
    monitor = queries.get_monitor(actor, monitor_uuid, for_update=True)
    body = validate(MonitorRunRequest, data)
    if monitor.status != "active":
        raise Conflict("The monitor is paused: set its status to active to run it.")
    if monitor.program.status != "active":
        raise Conflict(f"The program is {monitor.program.status}: its monitors do not run.")
    _require_entitled(actor, monitor.monitor_check_type)
    price = billing.prices()[monitor.monitor_check_type]
    balance = billing.balance(actor)
    if balance < price:
        raise InsufficientCredit(f"Insufficient credit: screening one entity costs {price} credits and the balance "
                                 f"is {balance}.")
    open_ = queries.open_runs(monitor.id)
    paused = [r for r in open_ if r.status == "paused"]
    if paused:
        resume_run(paused[0].id)
        audit.record(actor, "monitor.run_resumed", "monitor", monitor.uuid, {"run_uuid": paused[0].uuid})
        return paused[0]
    if any(r.trigger != "list_update" for r in open_):
        raise Conflict(MID_RUN_MESSAGE.format(status=monitor.process_status))
    run = start_run(monitor, trigger="manual", mode=body.mode)
    audit.record(actor, "monitor.run", "monitor", monitor.uuid, {"run_uuid": run.uuid, "mode": run.mode})
    return run


def _entity_ids(monitor: Monitor, mode: str) -> list[int]:
    """The run's entities: the program's live ones (not deleted, not archived), by id; `new`: those this monitor
    has never screened."""
    stmt = select(Entity.id).where(Entity.program_id == monitor.program_id, Entity.deleted_at.is_(None),
                                   Entity.archived_at.is_(None))
    if mode == "new":
        stmt = stmt.where(~exists().where(MonitorResult.entity_id == Entity.id,
                                          MonitorResult.monitor_id == monitor.id))
    return list(db.session.scalars(stmt.order_by(Entity.id)))


def start_run(monitor: Monitor, *, trigger: str, mode: str, scheduled_for: datetime | None = None,
              entity_ids: list[int] | None = None, list_update: dict | None = None) -> MonitorRun:
    """A run of the monitor over its entities (or `entity_ids`, a list update's), chunked and dispatched after the
    commit. `new` before the monitor has screened anyone is `all` (DECISIONS "Monitors")."""
    if mode == "new" and not monitor.has_run_before:
        mode = "all"
    ids = entity_ids if entity_ids is not None else _entity_ids(monitor, mode)
    run = MonitorRun(account_id=monitor.account_id, program_id=monitor.program_id, program=monitor.program,
                     monitor_id=monitor.id, monitor=monitor, trigger=trigger, mode=mode, scheduled_for=scheduled_for,
                     check_type=monitor.monitor_check_type, config=dict(monitor.config or {}), list_update=list_update)
    _launch(run, ids)
    return run


def _launch(run: MonitorRun, ids: list[int]) -> None:
    """Fix the run's entities, split them into chunks and dispatch them (after the commit)."""
    run.status, run.price, run.entities_total = "pending", billing.prices()[run.check_type], len(ids)
    run.list_versions_before, run.started_at = store.list_versions(db.session), utcnow()
    db.session.add(run)
    db.session.flush()
    size = max(1, int(current_app.config.get("MONITOR_CHUNK_SIZE", 1000)))
    chunks = [MonitorChunk(run_id=run.id, seq=n, entity_ids=ids[i:i + size], size=len(ids[i:i + size]),
                           status="pending") for n, i in enumerate(range(0, len(ids), size))]
    db.session.add_all(chunks)
    db.session.flush()
    for chunk in chunks:
        recovery.dispatch(chunk, "run_monitor_chunk", "mchunk")
    if not chunks:
        _finish_run(run)
    _settle(run)


def _settle(run: MonitorRun) -> None:
    if run.monitor is not None:
        settle_monitor(run.monitor)


# ------------------------------------------------------------------ one-off runs

@dataclass(frozen=True)
class RunPreview:
    """What a one-off run would screen and cost, shown before the launch."""
    entities: int
    selected: tuple[str, ...] | None        # the chosen entities' uuids; None: the whole program
    types: tuple[tuple[str, str, int], ...]  # (check type, label, price per entity) the account may run
    balance: int


def preview_program_run(actor: Actor, program_uuid, entity_uuids: list[str] | None) -> RunPreview:
    program = get_program(actor, program_uuid)
    live = select(func.count()).select_from(Entity).where(
        Entity.program_id == program.id, Entity.deleted_at.is_(None), Entity.archived_at.is_(None))
    selected = None
    if entity_uuids is not None:
        selected = tuple(dict.fromkeys(entity_uuids))
        live = live.where(Entity.uuid.in_([u for u in selected if _parses(uuid_value, u)]))
    prices = billing.prices()
    types = tuple((t, CHECK_TYPES[t].label, prices[t]) for t in MONITOR_TYPES if t in entitled_types(actor))
    return RunPreview(entities=db.session.scalar(live) or 0, selected=selected, types=types,
                      balance=billing.balance(actor))


def _parses(parse, value: str) -> bool:
    try:
        parse(value)
    except ValueError:
        return False
    return True


def screen_program(actor: Actor, program_uuid, data: Any) -> MonitorRun:
    """`POST /programs/{uuid}/runs` and the entities list's "Screen now": one run of a screening over the program's
    live entities, or a selection of them, with no monitor: chunked, charged and alerted like a monitor's run
    (the same alert memory: an unchanged match already raised stays quiet). 404 an unknown program; 400 entities
    not of the program; 403 not entitled; 409 a paused or archived program; 402 when the balance does not pay
    for every entity (the cost is shown before the launch)."""
    actor.require("analyst")
    program = get_program(actor, program_uuid)
    body = validate(ProgramRunRequest, data)
    _require_entitled(actor, body.check_type)
    config = resolve_config(body.check_type, None, body.config)
    if program.status != "active":
        raise Conflict(f"The program is {program.status}: activate it to screen its entities.")
    require_writable(program)
    live = select(Entity.id).where(Entity.program_id == program.id, Entity.deleted_at.is_(None),
                                   Entity.archived_at.is_(None))
    if body.entity_uuids is None:
        ids = list(db.session.scalars(live.order_by(Entity.id)))
    else:
        wanted = set(body.entity_uuids)
        found = dict(db.session.execute(select(Entity.uuid, Entity.id).where(
            Entity.program_id == program.id, Entity.deleted_at.is_(None), Entity.archived_at.is_(None),
            Entity.uuid.in_(wanted))).all())
        if len(found) < len(wanted):
            missing = sorted(str(u) for u in wanted - set(found))
            raise Invalid.field("entity_uuids", f"{len(missing)} of these are not live entities of this program: "
                                                f"{', '.join(missing[:5])}{' …' if len(missing) > 5 else ''}")
        ids = sorted(found.values())
    if not ids:
        raise Invalid.field("entity_uuids", "The program has no live entities to screen.")
    price = billing.prices()[body.check_type]
    balance = billing.balance(actor)
    if balance < price * len(ids):
        raise InsufficientCredit(f"Insufficient credit: screening {len(ids):,} entities costs {price * len(ids):,} "
                                 f"credits ({price} each) and the balance is {balance:,}.")
    run = MonitorRun(account_id=actor.account_id, program_id=program.id, program=program, monitor_id=None,
                     trigger="manual", mode="all" if body.entity_uuids is None else "selected",
                     check_type=body.check_type, config=config, requested_by=actor.name[:255])
    _launch(run, ids)
    audit.record(actor, "program.screened", "program", program.uuid,
                 {"run_uuid": run.uuid, "check_type": run.check_type, "entities": run.entities_total,
                  "mode": run.mode})
    return run


def settle_monitor(monitor: Monitor) -> None:
    """`process_status` from the monitor's runs: paused / processing / pending while one has not ended; else null,
    or `failed` (with the reason) when the latest run failed."""
    open_ = queries.open_runs(monitor.id)
    if open_:
        statuses = {r.status for r in open_}
        monitor.process_status = next(s for s in ("paused", "processing", "pending") if s in statuses)
        paused = next((r for r in open_ if r.status == "paused"), None)
        monitor.process_status_comment = paused.error if paused is not None else None
        return
    latest = db.session.scalar(select(MonitorRun).where(MonitorRun.monitor_id == monitor.id)
                               .order_by(MonitorRun.id.desc()).limit(1))
    if latest is not None and latest.status == "failed":
        monitor.process_status, monitor.process_status_comment = "failed", latest.error
    else:
        monitor.process_status, monitor.process_status_comment = None, None


# ------------------------------------------------------------------ the scheduler's tick

def start_scheduled_run(monitor_id: int, now: datetime) -> MonitorRun | None:
    """Start the due run of one monitor, once: the monitor row is locked and its slot re-read (a second scheduler
    finds it moved on), and (monitor, slot) is unique. Slots missed while down give one run, not one per slot; a
    paused monitor or program does not run and its missed slots are not replayed."""
    monitor = db.session.scalar(select(Monitor).where(Monitor.id == monitor_id).with_for_update(of=Monitor))
    if monitor is None or monitor.next_run_at is None or monitor.next_run_at > now or monitor.deleted_at:
        return None
    slot = monitor.next_run_at
    monitor.next_run_at = schedule_next(monitor, now)
    if monitor.status != "active" or monitor.program.status != "active" or monitor.program.deleted_at:
        return None
    if any(r.trigger != "list_update" for r in queries.open_runs(monitor.id)):
        log.warning("monitor %s: the run due at %s is skipped, the previous run has not ended", monitor.id, slot)
        return None
    try:
        with db.session.begin_nested():
            return start_run(monitor, trigger="schedule", mode="all", scheduled_for=slot)
    except Exception as exc:  # noqa: BLE001 - the unique slot: another scheduler started it
        if "uq_monitor_runs_slot" in str(exc):
            return None
        raise


def resume_run(run_id: int) -> bool:
    """A run paused for credit goes on from where it stopped, when the balance pays for at least one entity."""
    run = db.session.scalar(select(MonitorRun).where(MonitorRun.id == run_id).with_for_update(of=MonitorRun))
    if run is None or run.status != "paused":
        return False
    if billing.affordable(run.account_id, run.price) < 1:
        return False
    waiting = list(db.session.scalars(select(MonitorChunk).where(MonitorChunk.run_id == run.id,
                                                                 MonitorChunk.status == "paused")))
    for chunk in waiting:
        chunk.status = "pending"
        recovery.dispatch(chunk, "run_monitor_chunk", "mchunk")
    run.status = "processing"
    run.error = None
    _settle(run)
    return True


# ------------------------------------------------------------------ a chunk's job

@dataclass(frozen=True)
class ChunkWork:
    """What a chunk's job needs, read when it starts."""
    chunk_id: int
    run_id: int
    monitor_id: int | None
    account_id: int
    check_type: str
    config: dict
    entity_ids: tuple[int, ...]
    sandbox: bool
    demo: bool
    needs: tuple[str, int] | None = None   # a list update's run: (list, version) the index must hold


def start_chunk(chunk_id: int, job_id: str | None) -> ChunkWork | None:
    """Mark the chunk processing (one more attempt); None when it has ended, is paused, or no longer names this
    job (a stale duplicate)."""
    chunk = _lock_chunk(chunk_id)
    if chunk is None or chunk.status not in CHUNK_OPEN or (job_id is not None and chunk.job_id != job_id):
        return None
    chunk.status = "processing"
    chunk.attempts += 1
    chunk.started_at = utcnow()
    run = _lock_run(chunk.run_id)
    if run.status == "pending":
        run.status = "processing"
        _settle(run)
    account = db.session.get(Account, run.account_id)
    return ChunkWork(chunk_id=chunk.id, run_id=run.id, monitor_id=run.monitor_id, account_id=run.account_id,
                     check_type=run.check_type, config=dict(run.config or {}), entity_ids=tuple(chunk.entity_ids),
                     sandbox=account.is_sandbox, demo=account.is_demo,
                     needs=(run.list_update["list"], int(run.list_update["version"])) if run.list_update else None)


def _lock_chunk(chunk_id: int) -> MonitorChunk | None:
    return db.session.scalar(select(MonitorChunk).where(MonitorChunk.id == chunk_id).with_for_update(of=MonitorChunk))


def _lock_run(run_id: int) -> MonitorRun:
    return db.session.scalar(select(MonitorRun).where(MonitorRun.id == run_id).with_for_update(of=MonitorRun))


@dataclass
class Screened:
    entity: Entity
    subject: dict
    result: Any                 # ProviderResult, or None when it could not be screened
    error: str | None = None


def screen_entities(work: ChunkWork, settings: Mapping[str, Any]) -> tuple[list[Screened], dict, str | None]:
    """Screen the chunk's live entities in the worker, in batch (no transaction is written). Returns them, the
    list versions and the engine version the screening used."""
    # by primary key alone, the live ones kept here: with the deleted/archived conditions in SQL the planner may
    # pick a partial index of the program's live entities and filter all of them, per chunk (measured: 0.3 s a
    # chunk at 30k entities, growing with the program)
    entities = [e for e in db.session.scalars(select(Entity).where(Entity.id.in_(work.entity_ids)).order_by(Entity.id))
                if e.deleted_at is None and e.archived_at is None]
    index = _index_holding(work.needs)
    provider = provider_for(work.check_type, sandbox=work.sandbox, settings=settings)
    ctx = RunContext(sandbox=work.sandbox, settings=dict(settings), index=index, demo=work.demo)
    out: list[Screened] = []
    versions: dict = {}
    engine = None
    for entity in entities:
        subject = checks.entity_subject(entity)
        try:
            result = run_provider(provider, Subject.from_dict(subject), work.config, ctx)
        except ProviderError as exc:
            out.append(Screened(entity, subject, None, str(exc)))
            continue
        versions = versions or dict((result.details or {}).get("list_versions") or {})
        engine = engine or (result.details or {}).get("engine_version")
        out.append(Screened(entity, subject, result))
    return out, versions, engine


INDEX_WAIT_SECONDS = 120


def _index_holding(needs: tuple[str, int] | None):
    """The screening index, once it holds the list version a list update's run is for (the worker may still be
    opening it): waits up to INDEX_WAIT_SECONDS, then screens with what it has (a later version is fine)."""
    index = checks.index_for_run()
    if needs is None:
        return index
    deadline = time.monotonic() + INDEX_WAIT_SECONDS
    while int(str(index.list_versions.get(needs[0], "v0")).lstrip("v") or 0) < needs[1] and \
            time.monotonic() < deadline:
        time.sleep(1.0)
        index = checks.index_for_run()
    return index


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


class BalanceMoved(Exception):
    """The balance read without the account's lock paid for the chunk, and no longer did under it: the caller rolls
    the transaction back and writes the chunk again with `lock_first`."""


def finish_chunk(work: ChunkWork, job_id: str | None, screened: list[Screened], versions: dict,
                 engine_version: str | None, *, lock_first: bool = False) -> str:
    """Write what the chunk's screening led to, in the job's one transaction, if the chunk still names this job:
    evidence, alert memory, checks and events, and one charge. Pays for what the balance allows; the rest of the
    chunk waits (paused) for a top-up. Returns done | paused | superseded.

    The account's lock serializes its charges (every check launch takes it) and is held to the commit. Writing a
    chunk (a thousand evidence rows, its checks, events and webhook deliveries) takes far longer than a launch, so
    when the balance, read without the lock, pays for the whole chunk, the lock is taken only for the charge, after
    the writes; should the balance have fallen below the chunk's cost meanwhile, BalanceMoved is raised and the
    caller writes the chunk again, `lock_first`: under the lock from the balance read on, as when it is short."""
    chunk = _lock_chunk(work.chunk_id)
    if chunk is None or chunk.status != "processing" or (job_id is not None and chunk.job_id != job_id):
        log.warning("monitor chunk %s: job %s ended after it was superseded; its work is dropped", work.chunk_id,
                    job_id)
        return "superseded"
    run = _lock_run(work.run_id)
    done = [s for s in screened if s.result is not None]
    late_lock = not lock_first and billing.balance_of(work.account_id) >= len(done) * run.price
    can_pay = len(done) if late_lock else billing.affordable(work.account_id, run.price)
    paused_ids: list[int] = []
    if len(done) > can_pay:
        done = done[:can_pay]
        boundary = done[-1].entity.id if done else None
        paused_ids = [i for i in chunk.entity_ids if boundary is None or i > boundary]
    if paused_ids and not done:  # nothing paid for: the whole chunk waits for a top-up
        chunk.status = "paused"
        _pause(run)
        _settle(run)
        return "paused"
    waiting = set(paused_ids)
    covered = [i for i in chunk.entity_ids if i not in waiting]
    failed = [s for s in screened if s.result is None and s.entity.id not in waiting]
    raised = _write_results(work, run, done)
    if late_lock and done and billing.affordable(work.account_id, run.price) < len(done):
        raise BalanceMoved(f"monitor chunk {work.chunk_id}: the balance fell below its cost while it was written")
    charged = billing.charge_monitor_chunk(
        work.account_id, chunk.id, len(done), run.price,
        _ledger_text(run, len(done))) if done else 0
    run.entities_processed += len(done)
    run.credits_charged += charged
    run.events_raised += raised
    run.entities_skipped += len(covered) - len(done)  # deleted or archived since the start, or not screenable
    if versions:
        run.list_versions_after = versions
        run.engine_version = engine_version
    if failed:
        run.error = (f"{len(failed)} entit{'y' if len(failed) == 1 else 'ies'} could not be screened "
                     f"(not charged): {failed[0].error}")[:2000]
    chunk.status = "done"
    chunk.entity_ids, chunk.size = covered, len(covered)
    if paused_ids:
        db.session.add(MonitorChunk(run_id=run.id, seq=chunk.seq, entity_ids=paused_ids, size=len(paused_ids),
                                    status="paused"))
        _pause(run)
    db.session.flush()
    _maybe_finish(run)
    _settle(run)
    return "paused" if paused_ids else "done"


def _ledger_text(run: MonitorRun, n: int) -> str:
    what = f"{n} × {CHECK_TYPES[run.check_type].label}"
    if run.monitor is None:
        return f"One-off screening of {run.program.program_name[:80]}: {what}"
    return f"Monitor {run.monitor.monitor_number} ({run.monitor.monitor_name[:80]}): {what}"


def _pause(run: MonitorRun) -> None:
    run.status = "paused"
    run.error = (f"Insufficient credit: the run paused after {run.entities_processed} of {run.entities_total} "
                 f"entities (each costs {run.price} credits). It goes on by itself once credit is topped up, or on "
                 "“Run now”.")


def _write_results(work: ChunkWork, run: MonitorRun, done: list[Screened]) -> int:
    """Evidence rows in bulk, the alert memory, and a check with its events for each entity whose result raised
    any. Returns the events raised."""
    states = alerts.states_for([s.entity.id for s in done], work.check_type)
    rows = []
    raised = 0
    for s in done:
        found = alerts.result_alerts([_row_dict(r) for r in s.result.results_overview], s.result.details)
        memory = states.get(s.entity.id, {})
        check_id = None
        n_events = 0
        if found or any(st.present for st in memory.values()):
            fresh = alerts.judge(s.entity.id, work.check_type, found, memory)
            if fresh:
                check = checks.record_screened_check(
                    account_id=work.account_id, entity=s.entity, check_type=work.check_type, config=work.config,
                    subject=s.subject, result=s.result, is_sandbox=work.sandbox, monitor_run_id=run.id)
                check_id = check.id
                n_events = len(events.raise_events(check, fresh, monitor_run_id=run.id))
                raised += n_events
        rows.append({"run_id": run.id, "entity_id": s.entity.id, "monitor_id": work.monitor_id,
                     "alerts": len(found), "events": n_events, "subject_digest": _digest(s.subject),
                     "result_digest": _digest(sorted(a.row.get("fingerprint") or "" for a in found)) if found else None,
                     "check_id": check_id})
    if rows:
        db.session.execute(insert(MonitorResult), rows)
    return raised


def _row_dict(row) -> dict:
    return {"title": row.title, "status": row.status, "alert_ids": list(row.alert_ids), "fingerprint": row.fingerprint}


def _maybe_finish(run: MonitorRun) -> None:
    left = db.session.scalar(select(func.count()).select_from(MonitorChunk).where(
        MonitorChunk.run_id == run.id, MonitorChunk.status.not_in(("done", "failed"))))
    if not left and run.status not in RUN_ENDED:
        _finish_run(run)


def _finish_run(run: MonitorRun) -> None:
    failed_chunks = db.session.scalar(select(func.count()).select_from(MonitorChunk).where(
        MonitorChunk.run_id == run.id, MonitorChunk.status == "failed")) or 0
    now = utcnow()
    run.status = "failed" if failed_chunks else "complete"
    run.ended_at = now
    if failed_chunks and not run.error:
        run.error = f"{failed_chunks} chunk(s) of entities could not be screened."
    signals.announce(run, "monitor_run.completed")
    monitor = run.monitor
    if monitor is None:  # a one-off run
        return
    if run.trigger != "list_update" or run.entities_processed:
        monitor.last_run_at = now
        monitor.last_events_raised = run.events_raised
    if run.entities_processed:
        monitor.has_run_before = True


def fail_chunk(chunk_id: int, job_id: str | None, reason: str) -> bool:
    """The recovery sweeper gives a lost chunk up after its last attempt: nothing of it was charged; the run ends
    failed once its other chunks end."""
    chunk = _lock_chunk(chunk_id)
    if chunk is None or chunk.status not in CHUNK_OPEN or chunk.job_id != job_id:
        return False
    chunk.note_recovery(f"{reason}: given up", utcnow())
    chunk.status = "failed"
    chunk.error = reason[:2000]
    run = _lock_run(chunk.run_id)
    run.error = f"{chunk.size} entities could not be screened: {reason}"[:2000]
    run.entities_skipped += chunk.size
    db.session.flush()
    _maybe_finish(run)
    _settle(run)
    return True


def redispatch_chunk(chunk_id: int, job_id: str | None, why: str) -> bool:
    """The recovery sweeper's retry of a lost chunk: pending again under a new job."""
    chunk = _lock_chunk(chunk_id)
    if chunk is None or chunk.status not in CHUNK_OPEN or chunk.job_id != job_id:
        return False
    chunk.note_recovery(f"{why}; queued again", utcnow())
    chunk.status = "pending"
    recovery.dispatch(chunk, "run_monitor_chunk", "mchunk")
    return True


def chunk_failed(chunk_id: int, job_id: str | None, reason: str) -> None:
    """A chunk whose job raised: back to pending under a new job while attempts remain, else failed."""
    chunk = _lock_chunk(chunk_id)
    if chunk is None or chunk.status not in CHUNK_OPEN or (job_id is not None and chunk.job_id != job_id):
        return
    if chunk.attempts < MAX_CHUNK_ATTEMPTS:
        redispatch_chunk(chunk_id, chunk.job_id, f"its job failed ({reason[:200]})")
    else:
        fail_chunk(chunk_id, chunk.job_id, f"its job failed {chunk.attempts} times ({reason[:300]})")



# ------------------------------------------------------------------ list updates

LIST_KIND_TYPES = {"banned": ("banned_disqualified_persons",)}   # other kinds: sanctions, PEPs (and demo lists)


def rescreen_for_list_update(list_name: str, version: int) -> list[MonitorRun]:
    """After a new version of a list is stored: for every active monitor of an operation the list feeds, a run
    (`list_update`, mode `delta`) over just the entities the change may concern: those whose names may match an
    added or changed record (looked up in an index of the program's customer names: `nominate`), and those whose
    alerts name a changed or removed record. The run applies the usual event rules (new_match,
    match_changed, delisted)."""
    kind = db.session.scalar(select(ScreeningList.kind).where(ScreeningList.name == list_name))
    diff = store.version_diff(db.session, list_name, version)
    if kind is None or not diff or not any(diff.get(k) for k in ("added", "changed", "removed")):
        return []
    types = LIST_KIND_TYPES.get(kind, ("pep_sanction_check",))
    monitors = list(db.session.scalars(select(Monitor).join(Program, Program.id == Monitor.program_id).where(
        Monitor.monitor_check_type.in_(types), Monitor.status == "active", Monitor.deleted_at.is_(None),
        Program.status == "active", Program.deleted_at.is_(None)).order_by(Monitor.id)))
    if not monitors:
        return []
    touched = list(diff.get("added") or []) + list(diff.get("changed") or [])
    named = list(diff.get("changed") or []) + list(diff.get("removed") or [])
    records = [r for _, r in store.iter_records(db.session, list_name, touched)] if touched else []
    update = {"list": list_name, "version": version, "added": len(diff.get("added") or []),
              "changed": len(diff.get("changed") or []), "removed": len(diff.get("removed") or [])}
    candidates: dict[int, set[int]] = {m.id: set() for m in monitors}
    for monitor in monitors:
        if named:
            ids = [alert_id_for(monitor.monitor_check_type, rid) for rid in named]
            for i in range(0, len(ids), 5000):
                candidates[monitor.id].update(db.session.scalars(select(AlertState.entity_id).join(
                    Entity, Entity.id == AlertState.entity_id).where(
                    AlertState.check_type == monitor.monitor_check_type, AlertState.alert_id.in_(ids[i:i + 5000]),
                    Entity.program_id == monitor.program_id, Entity.deleted_at.is_(None),
                    Entity.archived_at.is_(None))))
    if records:
        for program_id in dict.fromkeys(m.program_id for m in monitors):
            thresholds = {m.id: int((m.config or {}).get("similarity_threshold") or 80)
                          for m in monitors if m.program_id == program_id}
            for monitor_id, near in nominate.nominate(db.session, program_id, records, thresholds).items():
                candidates[monitor_id] |= near
    runs = []
    for monitor in monitors:
        if candidates[monitor.id]:
            runs.append(start_run(monitor, trigger="list_update", mode="delta",
                                  entity_ids=sorted(candidates[monitor.id]), list_update=update))
    return runs
