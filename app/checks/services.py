"""Check launches and runs. Plain values and an actor in; flush, never commit.

Launch (entity or adhoc): pre-flight before anything is written or charged (404 entity, 400 body and subject,
409 archived, 403 entitlement, 402 credit), then the checks are created and, last, charged under the account's
lock (held only until the commit, so that concurrent launches of one account wait as little as possible), and
one job per check is queued after the commit (503, and nothing written, when the queue is down).

Run (the `run_check` job calls `start_check`, `execute_check`, `finish_run`, each step in its own transaction):
pending → processing → complete | failed. The retry policy is `finish_run`'s; a run lost with a worker, with
Redis or with the web process is found by the recovery sweeper (app/recovery.py), which calls
`redispatch_check` or, after the last attempt, `give_up_check`. Each dispatch names a new job, and only that job
may start or finish the check, so a stale duplicate changes nothing. A failed check (provider error, timeout,
malformed answer, or too many lost attempts) is refunded exactly once. A group parent follows its children:
complete once every child has ended. A completed check is announced (`app.signals.check_completed`: events are
raised there).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Mapping

import uuid as uuid_mod

from sqlalchemy import insert, select, update
from sqlalchemy.orm import make_transient_to_detached
from sqlalchemy.orm.attributes import set_committed_value

from app import jobs, recovery, signals
from app.accounts.models import Account
from app.billing import services as billing
from app.checks.models import ENDED, Check
from app.checks.schemas import AdhocCheckLaunch, EntityCheckLaunch, LaunchConfig
from app.core import audit
from app.core.actor import Actor
from app.core.errors import Conflict, Forbidden, InsufficientCredit, Invalid
from app.core.schemas import validate
from app.core.types import actor_values, utcnow
from app.entities.models import Entity
from app.entities import rules as entity_rules
from app.entities.queries import get_entity
from app.extensions import db
from app.providers import CHECK_TYPES, ProviderError, RunContext, Subject, provider_for, run_provider

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3          # runs started per check: a lost or transiently failed run is retried until then
GIVE_UP_PENDING = 30 * 60  # a check still pending after this long fails (and is refunded)


# ------------------------------------------------------------------ pre-flight pieces

def resolve_configs(check_types: list[str], config: LaunchConfig | None) -> dict[str, dict | None]:
    """{check type: resolved config (defaults merged with the overrides), or None for option-less ones}."""
    given = config.model_dump(exclude_unset=True) if config is not None else {}
    stray = [name for name in given if name not in check_types]
    if stray:
        raise Invalid(errors={f"config.{name}": [f"{name} is not among check_types."] for name in stray})
    resolved: dict[str, dict | None] = {}
    for name in check_types:
        section = getattr(config, name, None) if config is not None else None
        resolved[name] = section.model_dump(mode="json") if section is not None \
            else CHECK_TYPES[name].default_config()
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
    """Field errors for the subject keys the check types need and do not have."""
    errors: dict[str, list[str]] = {}
    for name in check_types:
        for group in CHECK_TYPES[name].needs:
            if not any(subject.get(k) for k in group):
                errors.setdefault(f"{prefix}{group[0]}", []).append(f"{name} needs {' or '.join(group)}.")
    return errors


def _require_entitled(actor: Actor, check_types: list[str]) -> Account:
    account = db.session.get(Account, actor.account_id)
    missing = [name for name in check_types if name not in (account.enabled_check_types or [])]
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
    if (conflict := entity_rules.write_conflict(entity)) is not None:
        raise Conflict(f"{conflict} No checks can be launched.")
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
    account = _require_entitled(actor, check_types)
    prices, balance = billing.prices_and_balance(actor.account_id)
    total = sum(prices[name] for name in check_types)
    if balance < total:  # pre-flight: 402 before anything is written (re-checked under the lock)
        raise InsufficientCredit(f"Insufficient credit: this launch costs {total} credits and the balance is "
                                 f"{balance}.")
    now = utcnow()
    common = dict(account_id=actor.account_id, kind=kind, entity_id=entity.id if entity else None,
                  program_id=entity.program_id if entity else None, subject=subject, is_sandbox=account.is_sandbox,
                  created_at=now, updated_at=now, **actor_values("created_by", actor))
    parent = None
    if len(check_types) > 1:
        parent = _insert_checks([dict(common, check_type="group", config=None, credits=0, position=0,
                                      parent_id=None)])[0]
    children = _insert_checks([dict(common, check_type=op, config=configs[op], credits=prices[op], position=position,
                                    parent_id=parent.id if parent else None, job_id=None, enqueued_at=now)
                               for position, op in enumerate(check_types)], dispatch=True)
    if parent is not None:  # the relationships as loaded (no change to flush, nothing read back)
        set_committed_value(parent, "children", children)
        for child in children:
            set_committed_value(child, "parent", parent)
    # Each child's run is queued once the commit is done, all in one round trip (recovery: the dispatch is
    # written in the row's INSERT, so the sweeper finds it like any other).
    jobs.enqueue_many("run_check", [((c.id, c.job_id), c.job_id) for c in children])
    head = parent or children[0]
    audit.record_many(actor, "check.launched", "check", [(head.uuid, {
        "kind": kind, "check_types": check_types, "credits": total,
        "entity_uuid": entity.uuid if entity else None})])
    # Last, so that the account's lock is held only from here to the commit: concurrent launches of the account
    # queue here, and the balance read under the lock is the one charged (never below zero).
    billing.lock_account(actor.account_id)
    billing.charge_checks(actor, children, total, balance=billing.balance(actor))
    return head


# The columns a launch leaves to the database (NULL), as the ORM's INSERT did: JSON columns without a value.
_UNWRITTEN = ("details", "list_versions", "recoveries")


def _insert_checks(rows: list[dict], *, dispatch: bool = False) -> list[Check]:
    """Write new checks with one INSERT (however many), their dispatch (`job_id`, `enqueued_at`) in it when
    `dispatch`, and return them as loaded rows of the session (the identity map holds them, as if read back, so
    that a later lock or query in the same session sees these objects; no SELECT is sent)."""
    for row in rows:
        row.update(uuid=uuid_mod.uuid4(), status="pending", failed_reason=None, outcome=None, check_summary=None,
                   data_summary=None, results_overview=[], provider=None, engine_version=None, checked_at=None,
                   archived_at=None, monitor_run_id=None, started_at=None, attempts=0)
        row.setdefault("job_id", None)
        row.setdefault("enqueued_at", None)
        if dispatch:
            row["job_id"] = recovery.new_job_id("check", row["uuid"])
    ids = db.session.scalars(insert(Check).returning(Check.id, sort_by_parameter_order=True), rows).all()
    checks = []
    for row, id_ in zip(rows, ids):
        check = Check(id=id_, **row, **{name: None for name in _UNWRITTEN})
        make_transient_to_detached(check)
        db.session.add(check)
        checks.append(check)
    return checks


# ------------------------------------------------------------------ runs

@dataclass(frozen=True)
class RunInput:
    """What a run needs, read when it starts: the provider call runs outside any transaction."""
    check_id: int
    check_type: str
    sandbox: bool
    subject: dict[str, Any]
    config: dict | None
    demo: bool = False          # the demo account's run: the only one that sees demo lists


def _lock_check(check_id: int) -> Check | None:
    return db.session.scalar(select(Check).where(Check.id == check_id).with_for_update(of=Check))


def start_check(check_id: int, job_id: str | None = None) -> RunInput | None:
    """Mark the check processing (one more attempt) and return what the run needs; None when it has ended
    already, or when the check no longer names this job (`job_id`: the recovery sweeper dispatched it again, so
    this job is a stale duplicate and must not run). One statement: the UPDATE locks the row, re-reads it if a
    concurrent writer held it, and returns what the run reads (the account's demo flag with it)."""
    where = [Check.id == check_id, Check.status.notin_(ENDED)]
    if job_id is not None:
        where.append(Check.job_id == job_id)
    demo = select(Account.is_demo).where(Account.id == Check.account_id).scalar_subquery()
    row = db.session.execute(
        update(Check).where(*where).values(status="processing", attempts=Check.attempts + 1, started_at=utcnow())
        .returning(Check.id, Check.check_type, Check.is_sandbox, Check.subject, Check.config, demo)
        .execution_options(synchronize_session="fetch")).first()
    if row is None:
        return None
    return RunInput(check_id=row[0], check_type=row[1], sandbox=row[2], demo=bool(row[5]), subject=dict(row[3]),
                    config=row[4])


def index_for_run():
    """The screening index of this process (loaded once, reloaded when the lists change)."""
    from app.screening.index_holder import holder  # local: the store and numpy load only in processes that screen
    return holder.get(db.session)


def execute_check(run: RunInput, settings: Mapping[str, Any]) -> tuple[Any, ProviderError | None]:
    """Call the check's provider with the upstream settings the job passes in; (result, None) or (None, error).
    The job calls it between transactions (providers may take seconds)."""
    check_type, sandbox, subject, config, demo = run.check_type, run.sandbox, run.subject, run.config, run.demo
    try:
        index = index_for_run() if CHECK_TYPES[check_type].uses_index else None
        provider = provider_for(check_type, sandbox=sandbox, settings=settings)
        return run_provider(provider, Subject.from_dict(subject), config,
                            RunContext(sandbox=sandbox, settings=settings, index=index, demo=demo,
                                       near_misses=True)), None
    except ProviderError as exc:
        return None, exc
    except Exception as exc:  # noqa: BLE001 - e.g. the lists could not be loaded
        log.exception("check %s: provider setup failed", run.check_id)
        return None, ProviderError(f"{type(exc).__name__}: {exc}")


def finish_run(check_id: int, result: Any, error: ProviderError | None, job_id: str | None = None) -> str:
    """The retry policy: a result completes the check; a transient error queues another attempt while attempts
    remain (MAX_ATTEMPTS in all); any other error, or the last attempt's, fails it (and refunds it). A run whose
    check is no longer processing under its `job_id` (it was presumed lost and dispatched again) changes nothing.
    Returns what happened: complete | retry | failed | superseded."""
    check = _lock_check(check_id)
    if check is None or check.status != "processing" or (job_id is not None and check.job_id != job_id):
        log.warning("check %s: the run of job %s ended after it was superseded; its result is dropped",
                    check_id, job_id)
        return "superseded"
    if error is None:
        _complete(check, result)
        return "complete"
    if error.retryable and check.attempts < MAX_ATTEMPTS:
        _requeue(check)
        return "retry"
    _fail(check, str(error))
    return "failed"


def redispatch_check(check_id: int, job_id: str | None, why: str) -> bool:
    """The recovery sweeper's retry of a lost run (app/recovery.py): back to pending under a new job, with
    `why` noted on the check. Nothing when the check has ended or was dispatched again since (`job_id`)."""
    check = _lock_check(check_id)
    if check is None or check.status in ENDED or check.job_id != job_id:
        return False
    check.note_recovery(f"{why}; queued again", utcnow())
    check.status = "pending"
    _dispatch(check)
    return True


def give_up_check(check_id: int, job_id: str | None, reason: str) -> bool:
    """The recovery sweeper gives a lost check up after its last attempt: failed and refunded, once."""
    check = _lock_check(check_id)
    if check is None or check.status in ENDED or check.job_id != job_id:
        return False
    check.note_recovery(f"{reason}: given up", utcnow())
    _fail(check, reason)
    return True


def complete_check(check_id: int, result) -> Check | None:
    check = _lock_check(check_id)
    if check is None or check.status in ENDED:
        return None
    return _complete(check, result)


def _complete(check: Check, result) -> Check:
    """Complete a locked check that has not ended."""
    _store_result(check, result)
    signals.check_completed.send(check)  # events are raised here (app.events)
    signals.announce(check, "check.completed")
    _follow_parent(check)
    return check


def _store_result(check: Check, result) -> None:
    details = dict(result.details or {})
    check.status = "complete"
    check.outcome = result.outcome
    check.check_summary = result.check_summary
    check.data_summary = result.data_summary
    check.results_overview = [{"title": r.title, "status": r.status, "alert_ids": list(r.alert_ids),
                               "fingerprint": r.fingerprint} for r in result.results_overview]
    check.details = details
    check.near_miss_results = getattr(result, "near_misses", None)
    check.provider = result.provider
    check.list_versions = details.get("list_versions")
    check.engine_version = details.get("engine_version")
    check.checked_at = utcnow()
    check.failed_reason = None


def record_screened_check(*, account_id: int, entity: Entity, check_type: str, config: dict | None, subject: dict,
                          result, is_sandbox: bool, monitor_run_id: int) -> Check:
    """A complete check written by a monitor run for an entity whose result raised events: the full document
    behind the events (its page and PDF), charged with the run's chunk (credits 0 here). The caller raises the
    events from its own delta (no `check_completed`)."""
    check = Check(account_id=account_id, kind="entity", entity_id=entity.id, program_id=entity.program_id,
                  check_type=check_type, status="pending", config=config, subject=subject, credits=0,
                  is_sandbox=is_sandbox, monitor_run_id=monitor_run_id, created_by_type="system")
    db.session.add(check)
    _store_result(check, result)
    db.session.flush()
    return check


def fail_check(check_id: int, reason: str) -> Check | None:
    check = _lock_check(check_id)
    if check is None or check.status in ENDED:
        return None
    return _fail(check, reason)


def _fail(check: Check, reason: str) -> Check:
    """Fail a locked check that has not ended, and refund it (once)."""
    check.status = "failed"
    check.failed_reason = reason[:2000]
    check.checked_at = utcnow()
    billing.refund_check(check, reason)
    signals.announce(check, "check.failed")
    _follow_parent(check)
    return check


def _dispatch(check: Check) -> None:
    """Queue the check's run under a new job id (named by the check's uuid, as at its launch): the sweeper asks RQ
    about it, and the run acts only while the check names it."""
    recovery.dispatch(check, "run_check", "check", key=check.uuid)


def requeue_check(check_id: int) -> None:
    """Back to pending for another attempt (a transient upstream error, or a lost job)."""
    check = _lock_check(check_id)
    if check is None or check.status in ENDED:
        return
    _requeue(check)


def _requeue(check: Check) -> None:
    check.status = "pending"
    _dispatch(check)


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
    signals.announce(parent, "check.completed")


# ------------------------------------------------------------------ the entity's lifecycle (app.signals)

# The entity's checks (group parents and children; a check's report is its PDF) are archived with it.
signals.follow(signals.entity_archived, signals.entity_unarchived, Check.archived_at, Check.entity_id, "checks")
