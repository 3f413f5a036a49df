"""Recently deleted: soft-deleted programs, entities and notes within the recovery window, with restore (portal only)."""
from __future__ import annotations

import uuid

from flask import flash, redirect, url_for
from flask_login import login_required

from app.core.softdelete import recovery_days
from app.core.transactions import commit
from app.core.types import utcnow
from app.entities import queries as entity_queries
from app.entities import services as entity_services
from app.notes import queries as note_queries
from app.notes import services as note_services
from app.portal import bp
from app.programs import queries as program_queries
from app.programs import services as program_services
from app.portal.base import commit_and_flash, portal_actor, render, role_required


@bp.get("/deleted")
@login_required
def deleted_list():
    actor = portal_actor()
    programs = program_queries.list_deleted_programs(actor)
    entities = entity_queries.list_deleted_entities(actor)
    notes = note_queries.list_deleted_notes(actor)
    days = recovery_days()
    return render("deleted/page.html", programs=programs, entities=entities, notes=notes, days=days, now=utcnow(),
                  can_restore_note=lambda n: note_services.can_restore(actor, n))


@bp.post("/deleted/entities/<uuid:entity_uuid>/restore")
@role_required("analyst")
def deleted_restore_entity(entity_uuid: uuid.UUID):
    entity = commit_and_flash(lambda: entity_services.restore_entity(portal_actor(), entity_uuid),
                              lambda e: f"“{e.entity_name}” restored with the notes deleted with it.")
    if entity is None:
        return redirect(url_for("portal.deleted_list"))
    return redirect(url_for("portal.entities_show", entity_uuid=entity.uuid))


@bp.post("/deleted/notes/<uuid:note_uuid>/restore")
@role_required("analyst")
def deleted_restore_note(note_uuid: uuid.UUID):
    note = commit_and_flash(lambda: note_services.restore_note(portal_actor(), note_uuid), lambda _: "Note restored.")
    if note is None:
        return redirect(url_for("portal.deleted_list"))
    return redirect(url_for("portal.entities_show", entity_uuid=note.entity.uuid) + f"#note-{note.uuid}")


@bp.post("/deleted/programs/<uuid:program_uuid>/restore")
@role_required("analyst")
def deleted_restore_program(program_uuid: uuid.UUID):
    program = program_services.restore_program(portal_actor(), program_uuid)
    commit()
    flash(f"“{program.program_name}” restored with the entities and notes deleted with it.", "success")
    return redirect(url_for("portal.programs_show", program_uuid=program.uuid))
