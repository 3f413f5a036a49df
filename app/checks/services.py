"""Check launches and runs. Plain values and an actor in; flush, never commit.

Launch (entity or adhoc): pre-flight before anything is written or charged (404 entity, 400 body and subject,
409 archived, 403 entitlement, 402 credit), then the checks are created and, last, charged under the account's
lock (held only until the commit, so that concurrent launches of one account wait as little as possible), and
one job per check is queued after the commit (503, and nothing written, when the queue is down).

Run (`run_check`, called by the job with the check's id): pending → processing → complete | failed. A failed
check (provider error, timeout, malformed answer, or too many lost attempts) is refunded exactly once. A group
parent follows its children: complete once every child has ended.
"""
from __future__ import annotations

import logging
import secrets
from typing import Any

from flask import current_app
from sqlalchemy import select

from app.accounts.models import CHECK_TYPES, Account
from app.billing import services as billing
from app.checks.models import ENDED, Check
from app.checks.schemas import (CONFIG_SCHEMAS, SUBJECT_REQUIREMENTS, AdhocCheckLaunch, EntityCheckLaunch,
                                LaunchConfig)
from app.core import audit
from app.core.actor import Actor
from app.core.errors import Conflict, Forbidden, Invalid
from app.core.schemas import validate
from app.core.types import utcnow
from app.entities.models import Entity
from app.entities.queries import get_entity
from app.extensions import db
from app.providers import ProviderError, RunContext, Subject, provider_for, run_provider

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3


# ------------------------------------------------------------------ pre-flight pieces

def resolve_configs(check_types: list[str], config: LaunchConfig | None) -> dict[str, dict | None]:
    """{operation: resolved config (defaults merged with the overrides), or None for option-less ones}."""
    given = config.model_dump(exclude_unset=True) if config is not None else {}
    stray = [op for op in given if op not in check_types]
    if stray:
        raise Invalid(errors={f"config.{op}": [f"{op} is not among check_types."] for op in stray})
    resolved: dict[str, dict | None] = {}
    for op in check_types:
        schema = CONFIG_SCHEMAS.get(op)
        if schema is None:
            resolved[op] = None
            continue
        section = getattr(config, op, None) if config is not None else None
        resolved[op] = (section or schema()).model_dump(mode="json")
    return resolved


def entity_subject(entity: Entity) -> dict[str, Any]:
    """What the providers see of an entity (a snapshot stored on the check)."""
    address = ", ".join(p for p in (entity.address_line1, entity.address_line2, entity.address_suburb,
                                    entity.address_state, entity.address_postcode) if p) or None
    subject = {"address": address, "address_state": entity.address_state,
               "address_country": entity.address_country,
               "phone": next((p for p in (entity.phone1, entity.phone2, entity.phone3, entity.phone4) if p), None),
               "email": next((e for e in (entity.email1, entity.email2, entity.email3, entity.email4) if e), None)}
    if entity.entity_type == "individual":
        subject.update(first_name=entity.first_name, middle_name=entity.middle_name, last_name=entity.last_name,
                       dob=entity.birth_date.isoformat() if entity.birth_date else None)
    elif entity.entity_type == "business":
        subject.update(business_name=entity.business_name, business_number=entity.business_number,
                       business_number_type=entity.business_number_type)
    elif entity.entity_type == "vessel":
        subject.update(vessel_name=entity.vessel_name)
    else:
        subject.update(full_name=entity.property_name)
    return {k: v for k, v in subject.items() if v}


def missing_subject(check_types: list[str], subject: dict[str, Any], prefix: str) -> dict[str, list[str]]:
    """Field errors for the subject keys the operations need and do not have."""
    errors: dict[str, list[str]] = {}
    for op in check_types:
        for group in SUBJECT_REQUIREMENTS[op]:
            if not any(subject.get(k) for k in group):
                key = f"{prefix}{group[0]}"
                need = " or ".join(group)
                errors.setdefault(key, []).append(f"{op} needs {need}.")
    return errors


def _require_entitled(actor: Actor, check_types: list[str]) -> Account:
    account = db.session.get(Account, actor.account_id)
    missing = [op for op in check_types if op not in (account.enabled_check_types or [])]
    if missing:
        raise Forbidden(f"The account is not entitled to: {', '.join(missing)}.")
    return account


def launch_options(actor: Actor) -> dict[str, Any]:
    """What a launch form offers: the operations the account is entitled to, their prices and the balance."""
    account = db.session.get(Account, actor.account_id)
    return {"enabled": list(account.enabled_check_types or []), "prices": billing.prices(),
            "balance": billing.balance(actor)}


# ------------------------------------------------------------------ launches

def launch_entity_checks(actor: Actor, entity_uuid, data: Any) -> Check:
    actor.require("analyst")
    entity = get_entity(actor, entity_uuid)  # 404 first (spec)
    body = validate(EntityCheckLaunch, data)
    configs = resolve_configs(body.check_types, body.config)
    subject = entity_subject(entity)
    errors = missing_subject(body.check_types, subject, "entity.")
    if errors:
        raise Invalid("The entity lacks data these checks need; add it to the entity first.", errors=errors)
    if entity.archived_at is not None:
        raise Conflict("The entity is archived: no checks can be launched on it.")
    if entity.program.status == "archived":
        raise Conflict("The entity's program is archived: no checks can be launched in it.")
    return _launch(actor, kind="entity", entity=entity, subject=subject, check_types=body.check_types,
                   configs=configs)


def launch_adhoc_checks(actor: Actor, data: Any) -> Check:
    actor.require("analyst")
    body = validate(AdhocCheckLaunch, data)
    configs = resolve_configs(body.check_types, body.config)
    subject = {k: v for k, v in body.data.model_dump().items() if v is not None}
    errors = missing_subject(body.check_types, subject, "data.")
    if errors:
        raise Invalid(errors=errors)
    return _launch(actor, kind="adhoc", entity=None, subject=subject, check_types=body.check_types,
                   configs=configs)


def _launch(actor: Actor, *, kind: str, entity: Entity | None, subject: dict, check_types: list[str],
            configs: dict[str, dict | None]) -> Check:
    from app.core.errors import InsufficientCredit
    account = _require_entitled(actor, check_types)
    prices = billing.prices()
    total = sum(prices[op] for op in check_types)
    if billing.balance(actor) < total:  # pre-flight: 402 before anything is written (re-checked under the lock)
        raise InsufficientCredit(f"Insufficient credit: this launch costs {total} credits and the balance is "
                                 f"{billing.balance(actor)}.")
    common = dict(account_id=actor.account_id, kind=kind, entity_id=entity.id if entity else None,
                  program_id=entity.program_id if entity else None, subject=subject,
                  is_sandbox=account.is_sandbox, created_by_type=actor.kind,
                  created_by_user_id=actor.user_id, created_by_api_key_id=actor.api_key_id)
    parent = None
    if len(check_types) > 1:
        parent = Check(check_type="group", status="pending", config=None, credits=0, **common)
        db.session.add(parent)
    children = []
    for position, op in enumerate(check_types):
        child = Check(check_type=op, status="pending", config=configs[op], credits=prices[op], parent=parent,
                      position=position, **common)
        db.session.add(child)
        children.append(child)
    db.session.flush()
    now = utcnow()
    for child in children:
        _enqueue(child, now)  # 503 here (before commit) when the queue is down
    head = parent or children[0]
    audit.record(actor, "check.launched", "check", head.uuid, {
        "kind": kind, "check_types": check_types, "credits": total,
        "entity_uuid": entity.uuid if entity else None})
    # Last, so that the account's lock is held only from here to the commit: concurrent launches of the account
    # queue here, and the balance read under the lock is the one charged (never below zero).
    billing.lock_account(actor.account_id)
    billing.charge_checks(actor, children, total, balance=billing.balance(actor))
    return head


# ------------------------------------------------------------------ runs

def _lock_check(check_id: int) -> Check | None:
    return db.session.scalar(select(Check).where(Check.id == check_id).with_for_update(of=Check))


def start_check(check_id: int) -> bool:
    """Mark the check processing (one more attempt). False when it has ended already (a duplicate job)."""
    check = _lock_check(check_id)
    if check is None or check.status in ENDED:
        return False
    check.status = "processing"
    check.attempts += 1
    check.started_at = utcnow()
    return True


def index_for_run():
    """The screening index of this process (loaded once, reloaded when the lists change)."""
    from app.screening.store import holder
    return holder.get(db.session)


def execute_check(check_id: int) -> tuple[Any, ProviderError | None]:
    """Call the check's provider outside any transaction; (result, None) or (None, error)."""
    check = db.session.get(Check, check_id)
    settings = {k: current_app.config.get(k) for k in ("ABR_GUID", "COMPANIES_HOUSE_API_KEY", "PROVIDER_CLASSES",
                                                      "PROVIDER_TIMEOUT", "EMAIL_DNS_TIMEOUT")}
    check_type, sandbox, subject, config = check.check_type, check.is_sandbox, dict(check.subject), check.config
    demo = bool(db.session.scalar(select(Account.is_demo).where(Account.id == check.account_id)))
    db.session.close()  # end the read-only transaction (nothing to commit): providers may take seconds
    try:
        index = index_for_run() if check_type in ("pep_sanction_check", "banned_disqualified_persons") else None
        provider = provider_for(check_type, sandbox=sandbox, settings=settings)
        return run_provider(provider, Subject.from_dict(subject), config,
                            RunContext(sandbox=sandbox, settings=settings, index=index, demo=demo)), None
    except ProviderError as exc:
        return None, exc
    except Exception as exc:  # noqa: BLE001 - e.g. the lists could not be loaded
        log.exception("check %s: provider setup failed", check_id)
        return None, ProviderError(f"{type(exc).__name__}: {exc}")


def complete_check(check_id: int, result) -> Check | None:
    from app.events.services import raise_events
    check = _lock_check(check_id)
    if check is None or check.status in ENDED:
        return None
    details = dict(result.details or {})
    check.status = "complete"
    check.outcome = result.outcome
    check.check_summary = result.check_summary
    check.data_summary = result.data_summary
    check.results_overview = [{"title": r.title, "status": r.status, "alert_ids": list(r.alert_ids),
                               "fingerprint": r.fingerprint} for r in result.results_overview]
    check.details = details
    check.provider = result.provider
    check.list_versions = details.get("list_versions")
    check.engine_version = details.get("engine_version")
    check.checked_at = utcnow()
    check.failed_reason = None
    if check.kind == "entity":
        raise_events(check)
    _follow_parent(check)
    return check


def fail_check(check_id: int, reason: str) -> Check | None:
    check = _lock_check(check_id)
    if check is None or check.status in ENDED:
        return None
    check.status = "failed"
    check.failed_reason = reason[:2000]
    check.checked_at = utcnow()
    billing.refund_check(check, reason)
    _follow_parent(check)
    return check


def _enqueue(check: Check, now) -> None:
    from app.checks.jobs import run_check
    check.enqueued_at = now
    check.job_id = f"check-{check.id}-{secrets.token_hex(4)}"
    run_check.enqueue(check.id, _job_id=check.job_id)


def requeue_check(check_id: int) -> None:
    """Back to pending for another attempt (a transient upstream error, or a lost job)."""
    check = _lock_check(check_id)
    if check is None or check.status in ENDED:
        return
    check.status = "pending"
    _enqueue(check, utcnow())


def _follow_parent(check: Check) -> None:
    if check.parent_id is None:
        return
    parent = _lock_check(check.parent_id)
    children = list(db.session.scalars(select(Check).where(Check.parent_id == parent.id)))
    if any(c.status not in ENDED for c in children):
        if parent.status == "pending":
            parent.status = "processing"
        return
    parent.status = "complete"
    parent.checked_at = max(c.checked_at for c in children if c.checked_at)
    done = [c for c in children if c.status == "complete"]
    parent.outcome = "warning" if any(c.outcome == "warning" for c in done) else ("pass" if done else None)
    failed = [c for c in children if c.status == "failed"]
    parts = [f"{len(done)} complete"] + ([f"{len(failed)} failed"] if failed else [])
    warnings = sum(1 for c in done if c.outcome == "warning")
    parent.check_summary = f"{len(children)} checks: " + ", ".join(parts) + (
        f"; {warnings} with alerts" if warnings else "") + "."


def check_type_name(check_type: str) -> str:
    return CHECK_TYPES.get(check_type, "Group" if check_type == "group" else check_type)
