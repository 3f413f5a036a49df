"""Monitor and run reads shared by the portal and the API, and what the recovery sweeper and the scheduler read."""
from __future__ import annotations

from datetime import datetime
from typing import Mapping

from sqlalchemy import select

from app.checks.models import Check
from app.core.actor import Actor
from app.core.errors import NotFound
from app.core.listing import ListParams, Page, choice, paginate, parse_list_params
from app.extensions import db
from app.monitors.models import (CHUNK_OPEN, PROCESS_STATUSES, RUN_ENDED, STATUSES, Monitor, MonitorChunk,
                                 MonitorResult, MonitorRun)
from app.monitors.schedules import SCHEDULES
from app.monitors.schemas import MONITOR_TYPES
from app.programs.models import Program
from app.programs.queries import get_program
from app.recovery import RUNNING, WAITING, OpenItem

FILTERS = {"status": choice(*STATUSES), "process_status": choice(*PROCESS_STATUSES),
           "monitor_check_type": choice(*MONITOR_TYPES), "schedule": choice(*SCHEDULES)}
SORTS = ("created_at", "last_run_at", "monitor_name")


def list_params(args: Mapping[str, str], **kw) -> ListParams:
    return parse_list_params(args, filters=FILTERS, sorts=SORTS, default_sort="-last_run_at", archived=False, **kw)


def run_list_params(args: Mapping[str, str], **kw) -> ListParams:
    return parse_list_params(args, filters={}, sorts=("created_at",), default_sort="-created_at", archived=False,
                             **kw)


def get_monitor(actor: Actor, monitor_uuid, *, for_update: bool = False) -> Monitor:
    """A live monitor of the actor's account in a live program, or NotFound."""
    stmt = (select(Monitor).join(Program, Program.id == Monitor.program_id)
            .where(Monitor.uuid == monitor_uuid, Monitor.account_id == actor.account_id, Monitor.deleted_at.is_(None),
                   Program.deleted_at.is_(None)))
    if for_update:
        stmt = stmt.with_for_update(of=Monitor)
    monitor = db.session.scalar(stmt)
    if monitor is None:
        raise NotFound("Monitor not found.")
    return monitor


def list_monitors(actor: Actor, program_uuid, params: ListParams) -> Page:
    program = get_program(actor, program_uuid)
    stmt = select(Monitor).where(Monitor.program_id == program.id, Monitor.deleted_at.is_(None))
    for name in ("status", "process_status", "monitor_check_type", "schedule"):
        if params.filters.get(name):
            stmt = stmt.where(getattr(Monitor, name) == params.filters[name])
    column = getattr(Monitor, params.sort_key)
    order = column.desc() if params.descending else column.asc()
    if params.sort_key == "last_run_at":
        order = order.nulls_last()  # never-run monitors sort last either way (spec)
    stmt = stmt.order_by(order, Monitor.id.desc() if params.descending else Monitor.id.asc())
    return paginate(stmt, params)


def get_run(actor: Actor, run_uuid) -> MonitorRun:
    """A run of the actor's account: a live monitor's, or a one-off run of a live program."""
    run = db.session.scalar(
        select(MonitorRun).join(Program, Program.id == MonitorRun.program_id)
        .outerjoin(Monitor, Monitor.id == MonitorRun.monitor_id).where(
            MonitorRun.uuid == run_uuid, MonitorRun.account_id == actor.account_id, Program.deleted_at.is_(None),
            Monitor.deleted_at.is_(None)))
    if run is None:
        raise NotFound("Monitor run not found.")
    return run


def list_runs(actor: Actor, monitor_uuid, params: ListParams) -> Page:
    monitor = get_monitor(actor, monitor_uuid)
    stmt = select(MonitorRun).where(MonitorRun.monitor_id == monitor.id)
    stmt = stmt.order_by(MonitorRun.created_at.desc() if params.descending else MonitorRun.created_at.asc(),
                         MonitorRun.id.desc() if params.descending else MonitorRun.id.asc())
    return paginate(stmt, params)


def list_program_runs(actor: Actor, program_uuid, params: ListParams) -> Page:
    """Every run over the program's entities: its monitors' and the one-off ones, newest first by default."""
    program = get_program(actor, program_uuid)
    stmt = select(MonitorRun).outerjoin(Monitor, Monitor.id == MonitorRun.monitor_id).where(
        MonitorRun.program_id == program.id, Monitor.deleted_at.is_(None))
    stmt = stmt.order_by(MonitorRun.created_at.desc() if params.descending else MonitorRun.created_at.asc(),
                         MonitorRun.id.desc() if params.descending else MonitorRun.id.asc())
    return paginate(stmt, params)


def monitors_covering(program_id: int) -> list[Monitor]:
    """The monitors that screen an entity of the program (every live entity of it), active ones first."""
    return list(db.session.scalars(select(Monitor).where(Monitor.program_id == program_id,
                                                         Monitor.deleted_at.is_(None))
                                   .order_by(Monitor.status, Monitor.monitor_name, Monitor.id)))


def entity_evidence(entity_id: int, limit: int = 50) -> list[dict]:
    """The entity's screenings by runs (monitors' and one-off), newest first, as plain values: when, by what,
    with which lists and engine, and the outcome (alerts, events, the full check when it raised any), also when
    nothing was found. The caller has read the entity within the actor's account."""
    rows = db.session.execute(
        select(MonitorResult, MonitorRun, Check.uuid).join(MonitorRun, MonitorRun.id == MonitorResult.run_id)
        .outerjoin(Check, Check.id == MonitorResult.check_id)
        .where(MonitorResult.entity_id == entity_id)
        .order_by(MonitorRun.started_at.desc(), MonitorRun.id.desc()).limit(limit)).all()
    return [{"run_uuid": run.uuid, "title": run.title, "monitor_uuid": run.monitor_uuid, "trigger": run.trigger,
             "mode": run.mode, "check_type": run.check_type, "check_type_name": run.check_type_name,
             "config": run.config,
             "screened_at": run.started_at or run.created_at,
             "list_versions": run.list_versions_after or run.list_versions_before or {},
             "engine_version": run.engine_version, "alerts": result.alerts, "events": result.events,
             "check_uuid": check_uuid} for result, run, check_uuid in rows]


def open_runs(monitor_id: int) -> list[MonitorRun]:
    """The monitor's runs that have not ended, oldest first (a list update's run may overlap another run)."""
    return list(db.session.scalars(select(MonitorRun).where(
        MonitorRun.monitor_id == monitor_id, MonitorRun.status.not_in(RUN_ENDED)).order_by(MonitorRun.id)))


def open_chunks(limit: int = 5000) -> list[OpenItem]:
    """Chunks that have not ended, least recently touched first: what the recovery sweeper judges."""
    rows = db.session.execute(
        select(MonitorChunk.id, MonitorChunk.status, MonitorChunk.job_id, MonitorChunk.created_at,
               MonitorChunk.enqueued_at, MonitorChunk.started_at, MonitorChunk.attempts)
        .where(MonitorChunk.status.in_(CHUNK_OPEN)).order_by(MonitorChunk.updated_at).limit(limit))
    return [OpenItem(id=r.id, state=RUNNING if r.status == "processing" else WAITING, job_id=r.job_id,
                     created_at=r.created_at, enqueued_at=r.enqueued_at, started_at=r.started_at,
                     attempts=r.attempts) for r in rows]


def due_monitors(now: datetime, limit: int = 500) -> list[int]:
    """Ids of the monitors whose next scheduled run is due."""
    return list(db.session.scalars(select(Monitor.id).where(
        Monitor.next_run_at.is_not(None), Monitor.next_run_at <= now, Monitor.deleted_at.is_(None))
        .order_by(Monitor.next_run_at).limit(limit)))


def paused_runs(limit: int = 500) -> list[int]:
    return list(db.session.scalars(select(MonitorRun.id).where(MonitorRun.status == "paused")
                                   .order_by(MonitorRun.id).limit(limit)))
