"""Programs: list (status filter, archived toggle, search), create, edit, status change, delete."""
from __future__ import annotations

import uuid

from flask import flash, redirect, request, url_for
from flask_login import login_required

from app.core.actor import rank
from app.core.transactions import commit
from app.notify.services import failed_for_program as failed_report_emails
from app.portal import bp
from app.portal.base import (commit_and_flash, flash_and_redirect, is_htmx, parse_listing, portal_actor, render,
                             role_required, save)
from app.portal.dashboard import program_counts
from app.portal.entities import entity_listing
from app.portal.forms import ConfirmForm, ProgramForm, StatusForm
from app.programs import queries, services

# Portal query parameter -> API list parameter.
LIST_ARGS = {"status": "filter[status]", "q": "q", "archived": "archived", "sort": "sort", "page": "page"}
SORT_CHOICES = [("-created_at", "Newest first"), ("created_at", "Oldest first"), ("program_name", "Name A–Z"),
                ("-program_name", "Name Z–A"), ("-updated_at", "Recently updated")]


def list_args(args) -> dict[str, str]:
    """The portal's list parameters that are set (the ones kept in links and the URL)."""
    return {k: args.get(k, "").strip() for k in LIST_ARGS if args.get(k, "").strip()}


@bp.get("/programs")
@login_required
def programs_list():
    actor = portal_actor()
    args = list_args(request.args)
    if args.get("archived") and args["archived"] not in ("true", "1"):
        args.pop("archived")
    params, args = parse_listing(queries.list_params, args, LIST_ARGS, search=True)
    page = queries.list_programs(actor, params)
    return render("programs/list.html", "programs/_table.html", page=page, args=args, sort_choices=SORT_CHOICES)


@bp.route("/programs/new", methods=["GET", "POST"])
@role_required("analyst")
def programs_new():
    form = ProgramForm()
    status = 200
    if form.is_submitted():
        program = save(form, lambda: services.create_program(portal_actor(), form.to_data()))
        if program is not None:
            flash(f"Program “{program.program_name}” created.", "success")
            return redirect(url_for("portal.programs_show", program_uuid=program.uuid))
        status = 422
    return render("programs/form.html", status=status, form=form, program=None)


@bp.get("/programs/<uuid:program_uuid>")
@login_required
def programs_show(program_uuid: uuid.UUID):

    actor = portal_actor()
    program = queries.get_program(actor, program_uuid)
    listing = entity_listing(actor, program, request.args)
    failed_emails = (failed_report_emails(actor, program.id) if rank(actor.role) >= rank("admin") and not is_htmx()
                     else 0)
    return render("programs/show.html", "entities/_table.html", program=program, failed_emails=failed_emails,
                  **listing)


@bp.route("/programs/<uuid:program_uuid>/edit", methods=["GET", "POST"])
@role_required("analyst")
def programs_edit(program_uuid: uuid.UUID):
    """Settings page: the settings form, the status control and the delete link."""
    actor = portal_actor()
    program = queries.get_program(actor, program_uuid)
    form = ProgramForm()
    status = 200
    if form.is_submitted():
        here = url_for("portal.programs_edit", program_uuid=program_uuid)  # a Conflict (archived) is flashed here
        saved = save(form, lambda: services.update_program(actor, program.uuid, form.to_data(include_status=False)),
                     on_conflict=lambda exc: flash_and_redirect(exc.message, here))
        if saved is not None:
            flash("Program settings saved.", "success")
            return redirect(url_for("portal.programs_show", program_uuid=program.uuid))
        status = 422
    else:
        form.load(program)
    return render("programs/form.html", status=status, form=form, program=program,
                  status_form=StatusForm(formdata=None, status=program.status))


@bp.post("/programs/<uuid:program_uuid>/status")
@role_required("analyst")
def programs_status(program_uuid: uuid.UUID):
    form = StatusForm()
    commit_and_flash(lambda: services.update_program(portal_actor(), program_uuid, {"status": form.status.data}),
                     lambda program: f"Program is now {program.status}.")
    return redirect(url_for("portal.programs_edit", program_uuid=program_uuid))


@bp.route("/programs/<uuid:program_uuid>/delete", methods=["GET", "POST"])
@role_required("analyst")
def programs_delete(program_uuid: uuid.UUID):
    actor = portal_actor()
    program = queries.get_program(actor, program_uuid)
    form = ConfirmForm()
    if form.is_submitted():
        services.delete_program(actor, program.uuid)
        commit()
        flash(f"Program “{program.program_name}” deleted with its entities and notes.", "success")
        return redirect(url_for("portal.programs_list"))
    return render("programs/delete.html", program=program, form=form, counts=program_counts(actor, program))
