"""Entity writes. Plain values and an actor in, Entity out; flush, never commit.

Rules that are not field formats (those live in `schemas.EntityIn`):
- an archived program is read-only: every write into it is 409 (`require_writable`);
- an archived entity is read-only: PATCH is 409 (archiving is a retention state, not a label; `rules.py` says
  whether an entity takes writes); it can still be deleted, and archiving it again is a no-op;
- `entity_type` never changes after creation;
- `reference_number` is unique among the live entities of a program (409);
- every write leaves an audit entry with its changes;
- archive, unarchive, delete and restore are announced (`app.signals.entity_*`): each domain with rows of the
  entity (notes, events, checks) stamps or clears its own rows, and the counts go into the audit entry."""
from __future__ import annotations

import uuid as uuid_mod
from typing import Any, Callable, Mapping

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from app import signals
from app.core import audit
from app.core.actor import Actor
from app.core.errors import Conflict, Forbidden, Invalid
from app.core.types import utcnow
from app.entities import rules
from app.entities.csv_import import MAX_ROWS, count_rows, parse_csv
from app.entities.models import Entity
from app.entities.queries import get_deleted_entity, get_entity
from app.entities.schemas import INPUT_FIELDS, EntityIn, entity_name, validate_entity
from app.extensions import db
from app.heavy import services as heavy
from app.heavy.models import HeavyJob
from app.programs.models import Program
from app.programs.queries import get_program
from app.programs.services import require_writable

BULK_DEFAULT_RISK = "low"


def _values(body: EntityIn) -> dict[str, Any]:
    values = {name: getattr(body, name) for name in INPUT_FIELDS}
    values["entity_name"] = entity_name(values)
    return values


def _reference_taken(program_id: int, reference: str | None, exclude_id: int | None = None) -> bool:
    if reference is None:
        return False
    stmt = select(Entity.id).where(Entity.program_id == program_id, Entity.reference_number == reference,
                                   Entity.deleted_at.is_(None))
    if exclude_id is not None:
        stmt = stmt.where(Entity.id != exclude_id)
    return db.session.scalar(stmt.limit(1)) is not None


def _reference_conflict(reference: str) -> Conflict:
    return Conflict(f"reference_number '{reference}' is already used by another entity of this program.")


def _flush_unique(reference: str | None) -> None:
    """Flush; a concurrent write of the same reference_number (unique index) becomes a 409."""
    try:
        with db.session.begin_nested():
            db.session.flush()
    except IntegrityError:
        raise (_reference_conflict(reference) if reference else Conflict(
            "A reference_number was taken by another request meanwhile; nothing was saved.")) from None


# ------------------------------------------------------------------ create / update

def create_entity(actor: Actor, program_uuid, data: Mapping[str, Any]) -> Entity:
    actor.require("analyst")
    program = get_program(actor, program_uuid)
    require_writable(program)
    body = validate_entity(data)
    values = _values(body)
    if "risk_level" not in body.model_fields_set:
        values["risk_level"] = program.default_risk_level
    if _reference_taken(program.id, values["reference_number"]):
        raise _reference_conflict(values["reference_number"])
    now = utcnow()
    entity = Entity(account_id=actor.account_id, program=program, created_at=now, updated_at=now, **values)
    db.session.add(entity)
    _flush_unique(values["reference_number"])
    audit.record(actor, "entity.created", "entity", entity.uuid, values)
    return entity


def update_entity(actor: Actor, entity_uuid, data: Mapping[str, Any]) -> Entity:
    """Only supplied fields change; the entity with the changes applied must pass the creation rules."""
    actor.require("analyst")
    entity = get_entity(actor, entity_uuid)
    rules.require_writable(entity)
    if "entity_type" in data and data["entity_type"] != entity.entity_type:
        raise Invalid.field("entity_type", "Cannot be changed after creation.")
    current = {name: getattr(entity, name) for name in INPUT_FIELDS}
    body = validate_entity({**current, **data})
    validated = _values(body)
    values = {name: validated[name] for name in data if name in validated}
    values["entity_name"] = validated["entity_name"]
    if "reference_number" in values and values["reference_number"] != entity.reference_number \
            and _reference_taken(entity.program_id, values["reference_number"], exclude_id=entity.id):
        raise _reference_conflict(values["reference_number"])
    changes = audit.apply_changes(entity, values)
    if changes:
        entity.updated_at = utcnow()
        _flush_unique(values.get("reference_number"))
        audit.record(actor, "entity.updated", "entity", entity.uuid, changes)
    return entity


# ------------------------------------------------------------------ archive / delete / restore

def archive_entity(actor: Actor, entity_uuid) -> Entity:
    """Archive once; archiving an archived entity returns it unchanged (no audit entry, no cascade)."""
    actor.require("analyst")
    entity = get_entity(actor, entity_uuid)
    if entity.archived_at is not None:
        return entity
    require_writable(entity.program)
    now = utcnow()
    entity.archived_at = now
    entity.updated_at = now
    cascaded = signals.merged(signals.entity_archived.send(entity, when=now))
    audit.record(actor, "entity.archived", "entity", entity.uuid,
                 {"archived_at": [None, now], "cascaded": cascaded})
    return entity


def unarchive_entity(actor: Actor, entity_uuid) -> Entity:
    """Portal only, administrators only: undo an archive (audited). The API's archive stays one-way, as the
    spec has it; a mistaken archive is corrected by an admin who can see why in the audit log."""
    if actor.kind != "user":
        raise Forbidden("Unarchiving is done by an administrator in the portal.")
    actor.require("admin")
    entity = get_entity(actor, entity_uuid)
    if entity.archived_at is None:
        return entity
    require_writable(entity.program)
    when = entity.archived_at
    now = utcnow()
    entity.archived_at = None
    entity.updated_at = now
    restored = signals.merged(signals.entity_unarchived.send(entity, when=when))
    audit.record(actor, "entity.unarchived", "entity", entity.uuid,
                 {"archived_at": [when, None], "restored": restored})
    return entity


def delete_entity(actor: Actor, entity_uuid) -> Entity:
    """Soft-delete the entity and its notes (restorable in the portal for 30 days)."""
    actor.require("analyst")
    entity = get_entity(actor, entity_uuid)
    require_writable(entity.program)
    now = utcnow()
    entity.deleted_at = now
    entity.updated_at = now
    cascaded = signals.merged(signals.entity_deleted.send(entity, when=now))
    audit.record(actor, "entity.deleted", "entity", entity.uuid, {"deleted_at": [None, now], "cascaded": cascaded})
    return entity


def restore_entity(actor: Actor, entity_uuid) -> Entity:
    """Portal-only: bring back an entity deleted within the recovery window, with the notes deleted with it."""
    actor.require("analyst")
    entity = get_deleted_entity(actor, entity_uuid)
    program = entity.program
    if program.deleted_at is not None:
        raise Conflict("The entity's program is deleted: restore the program instead.")
    require_writable(program)
    if _reference_taken(program.id, entity.reference_number, exclude_id=entity.id):
        raise Conflict(f"reference_number '{entity.reference_number}' is now used by another entity of this "
                       "program: change that entity's reference first.")
    deleted_at = entity.deleted_at
    entity.deleted_at = None
    _flush_unique(entity.reference_number)
    cascaded = signals.merged(signals.entity_restored.send(entity, when=deleted_at))
    audit.record(actor, "entity.restored", "entity", entity.uuid,
                 {"deleted_at": [deleted_at, None], "cascaded": cascaded})
    return entity


# A deleted program takes its entities with it (stamped with its deleted_at; a restore brings back exactly those).
signals.follow(signals.program_deleted, signals.program_restored, Entity.deleted_at, Entity.program_id, "entities")


# ------------------------------------------------------------------ bulk CSV import

def bulk_import_request(actor: Actor, program_uuid, csv_text: str, *, max_rows: int = MAX_ROWS,
                        sync_rows: int = 200) -> list[Entity] | HeavyJob:
    """A CSV import as a request asks for it: a file of at most `sync_rows` rows (HEAVY_IMPORT_SYNC_ROWS,
    measured: docs/decisions.md) is imported now (`bulk_import`); a larger one becomes a heavy job on the
    `imports` queue that runs `bulk_import` with the same rules (its errors are the job's). The rights, the
    program, the row count (413) and the header are checked here, before anything is queued."""
    actor.require("analyst")
    program = get_program(actor, program_uuid)
    require_writable(program)
    rows = count_rows(csv_text, max_rows=max_rows)
    if rows <= sync_rows:
        return bulk_import(actor, program_uuid, csv_text, max_rows=max_rows)
    return heavy.submit(actor, "entity_import", target_uuid=program.uuid,
                        params={"program_uuid": str(program.uuid), "rows": rows, "max_rows": max_rows},
                        input_data=csv_text.encode("utf-8"),
                        message=f"Waiting for a worker to import {rows:,} rows.")


def bulk_import(actor: Actor, program_uuid, csv_text: str, *, max_rows: int = MAX_ROWS,
                progress: Callable[[int, str | None], None] | None = None) -> list[Entity]:
    """Create every row of the CSV or none: all row errors in one 400 (`rows.<line>.<field>`), a
    reference_number used twice in the file or already used in the program is a 409.
    Rows without a risk_level take the program default, or `low` when the program has none."""
    progress = progress or (lambda percent, message=None: None)
    actor.require("analyst")
    program = get_program(actor, program_uuid)
    require_writable(program)
    rows, errors = parse_csv(csv_text, max_rows=max_rows)
    progress(10, f"Validating {len(rows):,} rows.")
    validated: list[tuple[int, EntityIn]] = []
    for i, (line, row) in enumerate(rows, 1):
        try:
            validated.append((line, validate_entity(row, prefix=f"rows.{line}.")))
        except Invalid as exc:
            errors.update(exc.errors or {f"rows.{line}": [exc.message]})
        if i % 500 == 0:
            progress(10 + 50 * i // len(rows), f"Validated {i:,} of {len(rows):,} rows.")
    if errors:
        bad_lines = sorted({int(key.split(".")[1]) for key in errors})
        errors = {key: errors[key] for key in sorted(errors, key=lambda k: int(k.split(".")[1]))}
        rows = f"{len(bad_lines):,} row" + ("" if len(bad_lines) == 1 else "s")
        raise Invalid(f"The file has errors in {rows}; nothing was imported.", errors=errors)
    progress(60, "Checking reference numbers.")
    _check_bulk_references(program, validated)
    progress(70, f"Saving {len(validated):,} entities.")
    return _insert_rows(actor, program, [body for _line, body in validated])


def _insert_rows(actor: Actor, program: Program, bodies: list[EntityIn]) -> list[Entity]:
    """Insert validated rows in one executemany per table (a 10,000-row file stays a few round trips), with
    one `entity.imported` audit row per entity (the trail of each record) and one `entity.bulk_imported` row on
    the program with the row count (the one entry the activity feed shows)."""
    default_risk = program.default_risk_level or BULK_DEFAULT_RISK
    records = []
    for body in bodies:
        values = _values(body)
        if "risk_level" not in body.model_fields_set:
            values["risk_level"] = default_risk
        now = utcnow()  # one per row: the file's order is kept by (created_at, id)
        records.append({**values, "uuid": uuid_mod.uuid4(), "account_id": actor.account_id, "program_id": program.id,
                        "created_at": now, "updated_at": now, "archived_at": None, "deleted_at": None})
    try:
        with db.session.begin_nested():
            db.session.execute(insert(Entity), records)
    except IntegrityError:
        raise Conflict("A reference_number of the file was taken by another request meanwhile; nothing was "
                       "imported.") from None
    audit.record_many(actor, "entity.imported", "entity", [
        (r["uuid"], {**{k: r[k] for k in INPUT_FIELDS if r[k] not in (None, [])}, "source": "bulk_import"})
        for r in records])
    audit.record(actor, "entity.bulk_imported", "program", program.uuid, {"created_count": len(records)})
    by_uuid: dict[uuid_mod.UUID, Entity] = {}
    uuids = [r["uuid"] for r in records]
    for start in range(0, len(uuids), 1000):
        by_uuid.update((e.uuid, e) for e in db.session.scalars(
            select(Entity).where(Entity.uuid.in_(uuids[start:start + 1000]))).unique())
    return [by_uuid[u] for u in uuids]


def _check_bulk_references(program: Program, validated: list[tuple[int, EntityIn]]) -> None:
    first_line: dict[str, int] = {}
    problems: list[str] = []
    for line, body in validated:
        ref = body.reference_number
        if ref is None:
            continue
        if ref in first_line:
            problems.append(f"line {line}: reference_number '{ref}' repeats line {first_line[ref]}")
        else:
            first_line[ref] = line
    if first_line:
        taken: set[str] = set()
        refs = list(first_line)
        for start in range(0, len(refs), 1000):
            taken.update(db.session.scalars(select(Entity.reference_number).where(
                Entity.program_id == program.id, Entity.deleted_at.is_(None),
                Entity.reference_number.in_(refs[start:start + 1000]))))
        problems += [f"line {first_line[ref]}: reference_number '{ref}' is already used in this program"
                     for ref in refs if ref in taken]
    if problems:
        raise Conflict("reference_number must be unique among the program's entities; nothing was imported: "
                       + "; ".join(problems[:50]) + ("; ..." if len(problems) > 50 else "") + ".")
