"""Entities: the list inside a program (filters, sort, search, pages; htmx table swaps), detail, create and edit
per entity type, archive and delete with confirmation, CSV import with a per-row error report."""
from __future__ import annotations

import csv
import io
import re
import uuid
from typing import Mapping

from flask import Response, current_app, flash, redirect, request, url_for
from flask_login import login_required

from app import reports
from app.core.actor import Actor
from app.core.errors import Conflict, Invalid, PayloadTooLarge, RateLimited
from app.core.pdf import attachment
from app.core.transactions import commit, rollback
from app.entities import queries, services
from app.entities import rules as entity_rules
from app.entities.schemas import INPUT_FIELDS
from app.idchecks import queries as idcheck_queries
from app.monitors import queries as monitor_queries
from app.notes import queries as note_queries
from app.notes import rules as note_rules
from app.portal import bp
from app.core.softdelete import recovery_days
from app.portal.base import (add_form_error, apply_errors, commit_and_flash, parse_listing, portal_actor, render, role_required,
                             save)
from app.portal.checks import entity_checks_context, launch_context
from app.portal.jobs import job_redirect
from app.portal.limits import heavy_limits
from app.portal.forms import (ENTITY_TYPE_LABELS, FLAG_LABELS, TYPE_FIELDS, ConfirmForm, CsvImportForm,
                              EntityForm, NoteForm)
from app.programs import queries as program_queries

LIST_ARGS = {"type": "filter[entity_type]", "risk": "filter[risk_level]", "flag": "filter[flags]",
             "archived": "archived", "q": "q", "sort": "sort", "page": "page", "per_page": "per_page"}
ARCHIVED_CHOICES = [("false", "Hide archived"), ("true", "Archived only"), ("all", "Include archived")]


# ---------------------------------------------------------------- list (rendered inside the program page)

def entity_listing(actor: Actor, program, args: Mapping[str, str]) -> dict:
    """The entity table of a program for the given portal query parameters.

    The portal hides archived entities unless asked (`archived=true` only them, `archived=all` both)."""
    portal_args = {k: args.get(k, "").strip() for k in LIST_ARGS if args.get(k, "").strip()}
    archived = portal_args.pop("archived", "false")
    if archived not in ("true", "false", "all"):
        archived = "false"
    mapping = dict(LIST_ARGS)
    if archived != "all":
        portal_args["archived"] = archived
    params, kept = parse_listing(queries.list_params, portal_args, mapping, search=True)
    page = queries.list_entities(actor, program.uuid, params)
    kept = dict(kept)
    if archived == "all":
        kept["archived"] = "all"
    elif archived == "true":
        kept["archived"] = "true"
    else:
        kept.pop("archived", None)  # the default stays out of the URL
    return {"page": page, "args": kept, "params": params, "archived": archived,
            "archived_choices": ARCHIVED_CHOICES, "type_labels": ENTITY_TYPE_LABELS, "flag_labels": FLAG_LABELS}


# ---------------------------------------------------------------- detail

@bp.get("/entities/<uuid:entity_uuid>")
@login_required
def entities_show(entity_uuid: uuid.UUID):
    actor = portal_actor()
    entity = queries.get_entity(actor, entity_uuid)
    notes = note_queries.notes_for_entity(actor, entity.uuid)
    return render("entities/show.html", entity=entity, program=entity.program, notes=notes,
                  note_form=NoteForm(formdata=None), can_edit_note=lambda n: note_rules.can_edit(actor, n),
                  can_archive_note=lambda n: note_rules.can_archive(actor, n),
                  can_write=entity_rules.can_write(actor, entity),
                  type_labels=ENTITY_TYPE_LABELS, flag_labels=FLAG_LABELS, **entity_checks_context(actor, entity),
                  monitors=monitor_queries.monitors_covering(entity.program_id),
                  screenings=monitor_queries.entity_evidence(entity.id),
                  id_checks=idcheck_queries.list_entity_id_checks(actor, entity.uuid).items,
                  **(launch_context(actor) if actor.can("analyst") else {}))


# ---------------------------------------------------------------- create / edit

def _entity_type(value: str | None) -> str:
    return value if value in TYPE_FIELDS else "individual"


def _reference_conflict(form: EntityForm, exc: Conflict) -> None:
    if "reference_number" in exc.message:
        apply_errors(form, {"reference_number": ["Already used by another entity of this program."]})
    else:
        add_form_error(form, exc.message)


@bp.route("/programs/<uuid:program_uuid>/entities/new", methods=["GET", "POST"])
@role_required("analyst")
def entities_new(program_uuid: uuid.UUID):
    actor = portal_actor()
    program = program_queries.get_program(actor, program_uuid)
    if program.is_archived:
        flash("This program is archived and read-only: no entities can be added.", "warning")
        return redirect(url_for("portal.programs_show", program_uuid=program.uuid))
    entity_type = _entity_type(request.values.get("entity_type"))
    if request.method == "GET" and request.args.get("keep"):
        form = EntityForm(formdata=request.args)  # type switch: keep what was typed
    else:
        form = EntityForm()
    if request.method == "GET" and not request.args.get("keep"):
        form.risk_level.data = program.default_risk_level or ""
    status = 200
    if form.is_submitted():
        data = {"entity_type": entity_type, **form.to_data(entity_type)}
        entity = save(form, lambda: services.create_entity(actor, program.uuid, data),
                      on_conflict=lambda exc: _reference_conflict(form, exc))
        if entity is not None:
            flash(f"{ENTITY_TYPE_LABELS[entity_type]} “{entity.entity_name}” added.", "success")
            return redirect(url_for("portal.entities_show", entity_uuid=entity.uuid))
        status = 422
    return render("entities/form.html", "entities/_form.html", status=status, form=form, program=program,
                  entity=None, entity_type=entity_type, type_labels=ENTITY_TYPE_LABELS, type_fields=TYPE_FIELDS)


@bp.route("/entities/<uuid:entity_uuid>/edit", methods=["GET", "POST"])
@role_required("analyst")
def entities_edit(entity_uuid: uuid.UUID):
    actor = portal_actor()
    entity = queries.get_entity(actor, entity_uuid)
    if (conflict := entity_rules.write_conflict(entity)) is not None:
        flash(conflict, "warning")
        return redirect(url_for("portal.entities_show", entity_uuid=entity.uuid))
    form = EntityForm()
    status = 200
    if form.is_submitted():
        saved = save(form, lambda: services.update_entity(actor, entity.uuid, form.to_data(entity.entity_type)),
                     on_conflict=lambda exc: _reference_conflict(form, exc))
        if saved is not None:
            flash("Entity saved.", "success")
            return redirect(url_for("portal.entities_show", entity_uuid=entity.uuid))
        status = 422
    else:
        form.load(entity)
    return render("entities/form.html", status=status, form=form, program=entity.program, entity=entity,
                  entity_type=entity.entity_type, type_labels=ENTITY_TYPE_LABELS, type_fields=TYPE_FIELDS)


# ---------------------------------------------------------------- archive / delete

@bp.post("/entities/<uuid:entity_uuid>/unarchive")
@role_required("admin")
def entities_unarchive(entity_uuid: uuid.UUID):
    commit_and_flash(lambda: services.unarchive_entity(portal_actor(), entity_uuid),
                     lambda e: f"“{e.entity_name}” unarchived, with the notes and events archived with it.")
    return redirect(url_for("portal.entities_show", entity_uuid=entity_uuid))


@bp.route("/entities/<uuid:entity_uuid>/archive", methods=["GET", "POST"])
@role_required("analyst")
def entities_archive(entity_uuid: uuid.UUID):
    actor = portal_actor()
    entity = queries.get_entity(actor, entity_uuid)
    form = ConfirmForm()
    if form.is_submitted():
        commit_and_flash(lambda: services.archive_entity(actor, entity.uuid),
                         lambda _: "Entity archived. It stays visible and read-only, with its notes.")
        return redirect(url_for("portal.entities_show", entity_uuid=entity_uuid))
    return render("entities/confirm.html", entity=entity, form=form, action="archive")


@bp.route("/entities/<uuid:entity_uuid>/delete", methods=["GET", "POST"])
@role_required("analyst")
def entities_delete(entity_uuid: uuid.UUID):
    actor = portal_actor()
    entity = queries.get_entity(actor, entity_uuid)
    program_uuid = entity.program.uuid
    form = ConfirmForm()
    if form.is_submitted():
        done = commit_and_flash(lambda: services.delete_entity(actor, entity.uuid),
                                lambda _: f"“{entity.entity_name}” deleted. It can be restored from Recently deleted "
                                          f"for {recovery_days()} days.")
        if done is not None:
            return redirect(url_for("portal.programs_show", program_uuid=program_uuid))
        return redirect(url_for("portal.entities_show", entity_uuid=entity_uuid))
    return render("entities/confirm.html", entity=entity, form=form, action="delete")


# ---------------------------------------------------------------- CSV import

_ROW_KEY = re.compile(r"^rows\.(\d+)(?:\.(.+))?$")


def error_report(errors: Mapping[str, list[str]]) -> tuple[list[dict], list[str]]:
    """`rows.<line>.<field>` errors as rows of (line, field, message), sorted by line; other keys apart."""
    rows: list[dict] = []
    other: list[str] = []
    for key, messages in errors.items():
        m = _ROW_KEY.match(key)
        for message in messages:
            if m:
                rows.append({"line": int(m.group(1)), "field": m.group(2) or "", "message": message})
            else:
                other.append(message if key in ("file", "body") else f"{key}: {message}")
    rows.sort(key=lambda r: (r["line"], r["field"]))
    return rows, other


@bp.route("/programs/<uuid:program_uuid>/entities/import", methods=["GET", "POST"])
@role_required("analyst")
@heavy_limits
def entities_import(program_uuid: uuid.UUID):
    actor = portal_actor()
    program = program_queries.get_program(actor, program_uuid)
    form = CsvImportForm()
    context = {"program": program, "form": form, "report": [], "problems": [], "message": None,
               "columns": INPUT_FIELDS}
    if not form.is_submitted():
        return render("entities/import.html", **context)
    upload = form.file.data
    limit = int(current_app.config["CSV_MAX_BYTES"])
    raw = upload.read(limit + 1) if upload else b""
    try:
        if not upload or not upload.filename:
            raise Invalid("Choose a CSV file to upload.", errors={"file": ["Choose a CSV file to upload."]})
        if len(raw) > limit:
            raise Invalid(f"The file is larger than {limit // (1024 * 1024)} MiB; split it into smaller files.",
                          errors={"file": [f"The file is larger than {limit // (1024 * 1024)} MiB."]})
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise Invalid("The file must be UTF-8 encoded.", errors={"file": ["Must be UTF-8 encoded CSV."]}) \
                from None
        entities = services.bulk_import_request(actor, program.uuid, text,
                                                max_rows=int(current_app.config["CSV_MAX_ROWS"]),
                                                sync_rows=int(current_app.config["HEAVY_IMPORT_SYNC_ROWS"]))
        commit()
    except PayloadTooLarge as exc:
        rollback()
        context["report"], context["problems"] = error_report({"file": [exc.message]})
        context["message"] = exc.message
        return render("entities/import.html", **context), 413
    except Invalid as exc:
        rollback()
        context["report"], context["problems"] = error_report(exc.errors or {})
        context["message"] = exc.message
        return render("entities/import.html", **context), 422
    except Conflict as exc:
        rollback()
        context["message"] = exc.message
        return render("entities/import.html", **context), 409
    except RateLimited as exc:
        rollback()
        context["message"] = exc.message
        return render("entities/import.html", **context), 429, exc.headers
    if not isinstance(entities, list):  # a large file: imported by a job, whose page shows its progress
        flash(f"The file is being imported into “{program.program_name}”; this page shows its progress.", "info")
        return job_redirect(entities)
    flash(f"Imported {len(entities)} entit{'y' if len(entities) == 1 else 'ies'} into “{program.program_name}”.",
          "success")
    return redirect(url_for("portal.programs_show", program_uuid=program.uuid))


@bp.get("/entities/import-template.csv")
@login_required
def entities_import_template():
    out = io.StringIO()
    csv.writer(out).writerow(INPUT_FIELDS)
    return Response(out.getvalue(), mimetype="text/csv",
                    headers={"Content-Disposition": 'attachment; filename="entities-template.csv"'})


@bp.get("/entities/<uuid:entity_uuid>/history.pdf")
@login_required
@heavy_limits
def entity_history_pdf(entity_uuid: uuid.UUID):
    """A small history downloads now; a large one is rendered by a job, whose page shows its progress (303)."""
    outcome = reports.pdf_download(portal_actor(), "history_pdf", entity_uuid)
    if isinstance(outcome, tuple):
        return attachment(*outcome)
    commit()
    return job_redirect(outcome)
