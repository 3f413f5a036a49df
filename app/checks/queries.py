"""Check reads: one check (entity or adhoc), an entity's checks, the account's adhoc checks, and the open runs
the sweeper looks at. The lists honour `archived` (spec: true only archived, false only not archived, omitted
both); an entity's checks are archived with it, adhoc checks never are."""
from __future__ import annotations

from typing import Mapping

from sqlalchemy import func, select
from sqlalchemy.orm import selectinload

from app.checks.models import STATUSES, Check
from app.core.actor import Actor
from app.core.errors import Invalid, NotFound
from app.core.listing import (ListParams, Page, archived_conditions, choice, datetime_value, paginate, parse_bool,
                              parse_list_params)
from app.entities.models import Entity
from app.entities.queries import get_entity
from app.extensions import db
from app.providers.registry import CHECK_TYPES
from app.recovery import RUNNING, WAITING, OpenItem

FILTERS = {"status": choice(*STATUSES), "check_type": choice(*CHECK_TYPES, "group"),
           "outcome": choice("pass", "warning"), "created_at_from": datetime_value,
           "created_at_to": datetime_value}
SORTS = ("created_at",)


def list_params(args: Mapping[str, str]) -> ListParams:
    return parse_list_params(args, filters=FILTERS, sorts=SORTS, default_sort="-created_at")


def show_params(args: Mapping[str, str]) -> bool:
    """The options of a check's read (`GET /checks/{uuid}`, `GET /adhoc-checks/{uuid}`): whether to add its near
    misses (`near_misses`: true, false, 1 or 0, as `archived` takes them; default false). Other parameters are
    ignored, as on every read of one record."""
    raw = args.get("near_misses")
    if raw is None:
        return False
    value = parse_bool(raw)
    if value is None:
        raise Invalid(errors={"near_misses": ["Must be true, false, 1 or 0."]})
    return value


def near_misses(check: Check) -> list[dict] | None:
    """The check's near misses (the best results below its threshold, best first): [] when it kept none,
    None when it keeps none (a group, another check type, a check not complete, a monitor's record, or one run
    before near misses were kept)."""
    if check.is_group or check.status != "complete" or check.near_miss_results is None:
        return None
    return list(check.near_miss_results)


def get_check(actor: Actor, check_uuid, *, kind: str | None = None) -> Check:
    stmt = (select(Check).options(selectinload(Check.children))
            .where(Check.uuid == check_uuid, Check.account_id == actor.account_id))
    if kind is not None:
        stmt = stmt.where(Check.kind == kind)
    check = db.session.scalar(stmt)
    if check is None or (check.entity is not None and check.entity.deleted_at is not None):
        raise NotFound("Check not found.")
    return check


def _conditions(params: ListParams) -> list:
    f = params.filters
    conditions = []
    if "status" in f:
        conditions.append(Check.status == f["status"])
    if "check_type" in f:
        conditions.append(Check.check_type == f["check_type"])
    if "outcome" in f:
        conditions.append(Check.outcome == f["outcome"])
    if "created_at_from" in f:
        conditions.append(Check.created_at >= f["created_at_from"])
    if "created_at_to" in f:
        conditions.append(Check.created_at <= f["created_at_to"])
    conditions += archived_conditions(Check.archived_at, params)
    return conditions


def _page(conditions: list, params: ListParams) -> Page:
    order = (Check.created_at.desc(), Check.id.desc()) if params.descending else (Check.created_at.asc(),
                                                                                  Check.id.asc())
    return paginate(select(Check).options(selectinload(Check.children)).order_by(*order), params,
                    count_stmt=select(func.count(Check.id)).where(*conditions),
                    ids_stmt=select(Check.id).where(*conditions).order_by(*order))


def list_entity_checks(actor: Actor, entity_uuid, params: ListParams) -> Page:
    """The entity's launches, newest first: a group appears once, with its children."""
    entity: Entity = get_entity(actor, entity_uuid)
    return _page([Check.entity_id == entity.id, Check.parent_id.is_(None), *_conditions(params)], params)


def list_adhoc_checks(actor: Actor, params: ListParams) -> Page:
    return _page([Check.account_id == actor.account_id, Check.kind == "adhoc", Check.parent_id.is_(None),
                  *_conditions(params)], params)


def open_runs(limit: int = 5000) -> list[OpenItem]:
    """Checks that have not ended (group parents follow their children), least recently touched first: what
    the recovery sweeper judges (app/recovery.py), one row at a time."""
    rows = db.session.execute(
        select(Check.id, Check.status, Check.job_id, Check.created_at, Check.enqueued_at, Check.started_at,
               Check.attempts)
        .where(Check.status.in_(("pending", "processing")), Check.check_type != "group")
        .order_by(Check.updated_at).limit(limit))
    return [OpenItem(id=r.id, state=RUNNING if r.status == "processing" else WAITING, job_id=r.job_id,
                     created_at=r.created_at, enqueued_at=r.enqueued_at, started_at=r.started_at,
                     attempts=r.attempts) for r in rows]
