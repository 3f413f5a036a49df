"""Runs over a program's entities: "Screen now" from the entities list (the selected entities, or the whole
program: the cost shown first, one launch), a run's page with its progress without reload (one-off runs and
monitors' runs alike), and the program's run history."""
from __future__ import annotations

import uuid

from flask import flash, redirect, request, url_for
from flask_login import login_required

from app.core.errors import Conflict, Forbidden, InsufficientCredit, Invalid
from app.core.listing import ListParams
from app.core.transactions import commit, rollback
from app.monitors import queries, services
from app.portal import bp
from app.portal.base import error_text, portal_actor, render, role_required
from app.programs.queries import get_program


def _selection() -> list[str] | None:
    """The entities chosen on the list (`entity`, repeated), or None for the whole program (`all=1`)."""
    source = request.form if request.method == "POST" else request.args
    if source.get("all") == "1":
        return None
    return [v for v in source.getlist("entity") if v.strip()]


def _confirm_page(program, selection, *, status: int = 200, message: str | None = None,
                  errors: dict | None = None):
    preview = services.preview_program_run(portal_actor(), program.uuid, selection)
    chosen = request.form.get("check_type") or (preview.types[0][0] if preview.types else "")
    return render("runs/confirm.html", status=status, program=program, preview=preview, chosen=chosen,
                  message=message, errors=errors or {})


@bp.route("/programs/<uuid:program_uuid>/screen", methods=["GET", "POST"])
@role_required("analyst")
def runs_screen(program_uuid: uuid.UUID):
    actor = portal_actor()
    program = get_program(actor, program_uuid)
    selection = _selection()
    if selection == []:
        flash("Select the entities to screen first (the boxes in the list), or screen the whole program.", "error")
        return redirect(url_for("portal.programs_show", program_uuid=program.uuid))
    if request.method == "GET":
        return _confirm_page(program, selection)
    body = {"check_type": request.form.get("check_type", "")}
    if selection is not None:
        body["entity_uuids"] = selection
    try:
        run = services.screen_program(actor, program.uuid, body)
        commit()
    except Invalid as exc:
        rollback()
        return _confirm_page(program, selection, status=422, message=error_text(exc), errors=exc.errors or {})
    except (InsufficientCredit, Forbidden, Conflict) as exc:
        rollback()
        return _confirm_page(program, selection, status=422, message=exc.message)
    flash(f"Screening started: {run.entities_total:,} entities.", "success")
    return redirect(url_for("portal.runs_show", run_uuid=run.uuid))


@bp.get("/runs/<uuid:run_uuid>")
@login_required
def runs_show(run_uuid: uuid.UUID):
    run = queries.get_run(portal_actor(), run_uuid)
    return render("runs/show.html", "runs/_run.html", run=run, program=run.program)


@bp.get("/programs/<uuid:program_uuid>/runs")
@login_required
def runs_list(program_uuid: uuid.UUID):
    actor = portal_actor()
    program = get_program(actor, program_uuid)
    page = queries.list_program_runs(actor, program.uuid, ListParams(per_page=50, sort="-created_at"))
    return render("runs/list.html", program=program, runs=page.items)
