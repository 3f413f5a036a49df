"""Notes on the entity page, added and edited through htmx fragment swaps (full-page fallbacks without JS).

Portal rules come from the notes service: API-key notes and immutable notes are read-only here; a user edits
their own notes, an admin any user's note."""
from __future__ import annotations

import uuid
from urllib.parse import quote

from flask import abort, flash, redirect, url_for
from flask_login import login_required

from app.core.transactions import commit
from app.entities import queries as entity_queries
from app.entities import rules as entity_rules
from app.notes import queries, rules, services
from app.portal import bp
from app.portal.base import (commit_and_flash, error_text, flash_and_redirect, is_htmx, portal_actor, render,
                             role_required, save, to_error_page)
from app.portal.forms import NoteForm


def _entity_url(entity_uuid, note=None) -> str:
    return url_for("portal.entities_show", entity_uuid=entity_uuid) + (f"#note-{note.uuid}" if note else "#notes")


def _panel(actor, entity, form: NoteForm | None = None, status: int = 200, notice: str | None = None):
    notes = queries.notes_for_entity(actor, entity.uuid)
    response = render("notes/_panel.html", "notes/_panel.html", status=status, entity=entity, notes=notes,
                      note_form=form or NoteForm(formdata=None), can_write=entity_rules.can_write(actor, entity),
                      **_note_rules(actor))
    if notice:
        response.headers["X-Portal-Notice"] = quote(notice)
    return response


def _note_rules(actor) -> dict:
    """What the note templates ask of each note (notes/rules.py)."""
    return {"can_edit_note": lambda n: rules.can_edit(actor, n), "can_archive_note": lambda n: rules.can_archive(actor, n)}


def _note_fragment(actor, note, status: int = 200):
    return render("notes/_note.html", "notes/_note.html", status=status, note=note, **_note_rules(actor))


@bp.post("/entities/<uuid:entity_uuid>/notes")
@role_required("analyst")
def notes_create(entity_uuid: uuid.UUID):
    actor = portal_actor()
    entity = entity_queries.get_entity(actor, entity_uuid)
    form = NoteForm()
    # htmx shows the errors in the panel's form; without it they are flashed on the entity page.
    back = None if is_htmx() else lambda exc: flash_and_redirect(error_text(exc), _entity_url(entity.uuid))
    note = save(form, lambda: services.create_note(actor, entity.uuid, form.to_data()),
                on_invalid=back, on_conflict=back)
    if note is None:
        return _panel(actor, entity, form, status=422)
    if is_htmx():
        return _panel(actor, entity, notice="Note added.")
    flash("Note added.", "success")
    return redirect(_entity_url(entity.uuid, note))


@bp.get("/notes/<uuid:note_uuid>")
@login_required
def notes_show(note_uuid: uuid.UUID):
    actor = portal_actor()
    note = queries.get_note(actor, note_uuid)
    if is_htmx():
        return _note_fragment(actor, note)
    return redirect(_entity_url(note.entity.uuid, note))


@bp.get("/notes/<uuid:note_uuid>/history")
@login_required
def notes_history(note_uuid: uuid.UUID):
    actor = portal_actor()
    note = queries.get_note(actor, note_uuid)
    return render("notes/history.html", note=note, entity=note.entity,
                  revisions=services.note_revisions(actor, note_uuid))


@bp.get("/notes/<uuid:note_uuid>/edit")
@role_required("analyst")
def notes_edit(note_uuid: uuid.UUID):
    actor = portal_actor()
    note = queries.get_note(actor, note_uuid)
    if not rules.can_edit(actor, note):
        abort(403)
    form = NoteForm(formdata=None, note_text=note.note_text)
    return render("notes/edit.html", "notes/_edit.html", note=note, form=form, entity=note.entity)


@bp.post("/notes/<uuid:note_uuid>")
@role_required("analyst")
def notes_update(note_uuid: uuid.UUID):
    actor = portal_actor()
    note = queries.get_note(actor, note_uuid)
    form = NoteForm()
    # The edit fragment shows field errors only: a Conflict (the entity was archived meanwhile) is a toast.
    saved = save(form, lambda: services.update_note(actor, note.uuid, form.to_data()), on_conflict=to_error_page)
    if saved is None:
        note = queries.get_note(actor, note_uuid)  # again, after the rollback
        return render("notes/edit.html", "notes/_edit.html", status=422, note=note, form=form, entity=note.entity)
    note = saved
    if is_htmx():
        return _note_fragment(actor, note)
    flash("Note saved.", "success")
    return redirect(_entity_url(note.entity.uuid, note))


@bp.post("/notes/<uuid:note_uuid>/delete")
@role_required("analyst")
def notes_delete(note_uuid: uuid.UUID):
    actor = portal_actor()
    note = queries.get_note(actor, note_uuid)
    entity = note.entity
    services.delete_note(actor, note.uuid)
    commit()
    if is_htmx():
        return _panel(actor, entity, notice="Note deleted. Restore it from Recently deleted within 30 days.")
    flash("Note deleted. Restore it from Recently deleted within 30 days.", "success")
    return redirect(_entity_url(entity.uuid))


def _set_archived(note_uuid: uuid.UUID, archive: bool):
    """Archive or unarchive a note (portal only, spec "Note": `archived_at` is set in the portal only)."""
    actor = portal_actor()
    write = services.archive_note if archive else services.unarchive_note
    notice = "Note archived: it stays visible, read-only." if archive else "Note unarchived."
    if is_htmx():  # a refusal (409) is the error toast; done, the note is swapped in place
        note = write(actor, note_uuid)
        commit()
        response = _note_fragment(actor, note)
        response.headers["X-Portal-Notice"] = quote(notice)
        return response
    commit_and_flash(lambda: write(actor, note_uuid), lambda _: notice)
    return redirect(_entity_url(queries.get_note(actor, note_uuid).entity.uuid))


@bp.post("/notes/<uuid:note_uuid>/archive")
@role_required("analyst")
def notes_archive(note_uuid: uuid.UUID):
    return _set_archived(note_uuid, True)


@bp.post("/notes/<uuid:note_uuid>/unarchive")
@role_required("analyst")
def notes_unarchive(note_uuid: uuid.UUID):
    return _set_archived(note_uuid, False)
