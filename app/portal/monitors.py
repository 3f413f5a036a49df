"""Monitors: a program's monitors (list, create, edit), a monitor's page (run now, pause and resume, delete and
restore, the current run's progress without reload, the run history)."""
from __future__ import annotations

import uuid

from flask import abort, current_app, flash, redirect, request, url_for
from flask_login import login_required
from werkzeug.datastructures import MultiDict

from app.accounts.services import account_of
from app.core.errors import Forbidden, InsufficientCredit
from app.core.transactions import rollback
from app.core.listing import ListParams
from app.monitors import queries, services
from app.monitors.schedules import SCHEDULES
from app.monitors.schemas import MONITOR_TYPES
from app.portal import bp
from app.portal.base import commit_and_flash, portal_actor, render, role_required, save
from app.portal.checkforms import config_fields, launch_body
from app.billing import services as billing
from app.programs.queries import get_program
from app.providers.registry import CHECK_TYPES


def _form_values(monitor=None) -> MultiDict:
    """The form's values: the posted ones, else the monitor's (config keys as `config.<type>.<key>`)."""
    if request.method == "POST":
        return request.form
    values = MultiDict()
    if monitor is not None:
        values.update({"monitor_name": monitor.monitor_name, "monitor_check_type": monitor.monitor_check_type,
                       "status": monitor.status, "schedule": monitor.schedule})
        for key, value in (monitor.config or {}).items():
            name = f"config.{monitor.monitor_check_type}.{key}"
            if isinstance(value, list):
                if key.endswith("countries"):
                    values.add(name, ", ".join(value))
                else:
                    for v in value:
                        values.add(name, v)
            else:
                values.add(name, "on" if value is True else ("" if value is False else str(value)))
    return values


def _body(form, *, check_type: str | None = None) -> dict:
    check_type = check_type or form.get("monitor_check_type", "")
    body = {k: form.get(k) for k in ("monitor_name", "status", "schedule") if form.get(k) is not None}
    if check_type in CHECK_TYPES.names:
        launch = launch_body(MultiDict([("check_types", check_type), *form.items(multi=True)]))
        body["config"] = (launch.get("config") or {}).get(check_type) or {}
    return body


def _form_context(actor, program, monitor=None, errors=None, message=None) -> dict:
    enabled = [t for t in MONITOR_TYPES if t in services.entitled_types(actor)]
    return {"program": program, "monitor": monitor, "values": _form_values(monitor), "errors": errors or {},
            "message": message, "types": [(t, CHECK_TYPES[t].label, config_fields(t)) for t in enabled],
            "schedules": SCHEDULES, "prices": billing.prices()}


def schedule_time(zone: str) -> str:
    """When an account's monitors run on schedule, e.g. "02:00 Europe/London" (its zone, MONITOR_LOCAL_HOUR)."""
    cfg = current_app.config
    return f"{cfg['MONITOR_LOCAL_HOUR']:02d}:{cfg['MONITOR_LOCAL_MINUTE']:02d} {zone}"


@bp.get("/programs/<uuid:program_uuid>/monitors")
@login_required
def monitors_list(program_uuid: uuid.UUID):
    actor = portal_actor()
    program = get_program(actor, program_uuid)
    page = queries.list_monitors(actor, program.uuid, ListParams(per_page=500, sort="-last_run_at"))
    return render("monitors/list.html", program=program, monitors=page.items,
                  deleted=services.list_deleted_monitors(actor, program),
                  runs_at=schedule_time(account_of(actor).timezone))


@bp.route("/programs/<uuid:program_uuid>/monitors/new", methods=["GET", "POST"])
@role_required("analyst")
def monitors_new(program_uuid: uuid.UUID):
    actor = portal_actor()
    program = get_program(actor, program_uuid)
    if request.method == "POST":
        body = {**_body(request.form), "monitor_check_type": request.form.get("monitor_check_type")}
        monitor, refused = _saved(lambda: services.create_monitor(actor, program.uuid, body))
        if monitor is not None:
            flash(f"Monitor “{monitor.monitor_name}” created.", "success")
            return redirect(url_for("portal.monitors_show", monitor_uuid=monitor.uuid))
        return render("monitors/form.html", status=422, **_form_context(actor, program, None, **refused))
    return render("monitors/form.html", **_form_context(actor, program))


@bp.route("/monitors/<uuid:monitor_uuid>/edit", methods=["GET", "POST"])
@role_required("analyst")
def monitors_edit(monitor_uuid: uuid.UUID):
    actor = portal_actor()
    monitor = queries.get_monitor(actor, monitor_uuid)
    if request.method == "POST":
        body = _body(request.form, check_type=monitor.monitor_check_type)
        saved, refused = _saved(lambda: services.update_monitor(actor, monitor.uuid, body))
        if saved is not None:
            flash("Monitor saved.", "success")
            return redirect(url_for("portal.monitors_show", monitor_uuid=monitor.uuid))
        monitor = queries.get_monitor(actor, monitor_uuid)
        return render("monitors/form.html", status=422, **_form_context(actor, monitor.program, monitor, **refused))
    return render("monitors/form.html", **_form_context(actor, monitor.program, monitor))


def _saved(write) -> tuple[object | None, dict]:
    """`save` (one commit) for the monitor form: the record, or None and {"errors", "message"} to show, with the
    service's `config.<key>` errors named as the form's `config.<type>.<key>` inputs."""
    refused: dict = {}
    kind = request.form.get("monitor_check_type") or ""

    def keep(exc):
        errors = {(k.replace("config.", f"config.{kind}.", 1) if kind and k.startswith("config.") else k): v
                  for k, v in (exc.errors or {}).items()}
        refused.update(errors=errors, message=exc.message)

    return save(None, write, on_invalid=keep, on_conflict=keep), refused


def _show_context(actor, monitor) -> dict:
    runs = queries.list_runs(actor, monitor.uuid, ListParams(per_page=30, sort="-created_at")).items
    current = next((r for r in runs if not r.is_ended), None)
    return {"monitor": monitor, "program": monitor.program, "runs": runs, "current": current,
            "price": billing.prices()[monitor.monitor_check_type],
            "runs_at": schedule_time(account_of(actor).timezone)}


@bp.get("/monitors/<uuid:monitor_uuid>")
@login_required
def monitors_show(monitor_uuid: uuid.UUID):
    actor = portal_actor()
    monitor = queries.get_monitor(actor, monitor_uuid)
    return render("monitors/show.html", "monitors/_progress.html", **_show_context(actor, monitor))


@bp.post("/monitors/<uuid:monitor_uuid>/run")
@role_required("analyst")
def monitors_run(monitor_uuid: uuid.UUID):
    mode = request.form.get("mode", "all")
    try:
        commit_and_flash(lambda: services.run_monitor(portal_actor(), monitor_uuid, {"mode": mode}),
                         lambda run: f"Run started: {run.entities_total:,} entities to screen."
                         if run.status != "paused" else "The paused run goes on.")
    except (InsufficientCredit, Forbidden) as exc:  # shown on the monitor's page, like a refusal
        rollback()
        flash(exc.message, "error")
    return redirect(url_for("portal.monitors_show", monitor_uuid=monitor_uuid))


@bp.post("/monitors/<uuid:monitor_uuid>/status")
@role_required("analyst")
def monitors_status(monitor_uuid: uuid.UUID):
    queries.get_monitor(portal_actor(), monitor_uuid)  # another account's monitor: 404 first
    status = request.form.get("status")
    if status not in ("active", "paused"):
        abort(400)
    commit_and_flash(lambda: services.update_monitor(portal_actor(), monitor_uuid, {"status": status}),
                     lambda m: f"Monitor {'resumed' if m.status == 'active' else 'paused'}.")
    return redirect(url_for("portal.monitors_show", monitor_uuid=monitor_uuid))


@bp.post("/monitors/<uuid:monitor_uuid>/delete")
@role_required("analyst")
def monitors_delete(monitor_uuid: uuid.UUID):
    actor = portal_actor()
    program_uuid = queries.get_monitor(actor, monitor_uuid).program.uuid
    deleted = commit_and_flash(lambda: services.delete_monitor(actor, monitor_uuid),
                               lambda m: f"Monitor “{m.monitor_name}” deleted; restore it below within 30 days.")
    if deleted is None:
        return redirect(url_for("portal.monitors_show", monitor_uuid=monitor_uuid))
    return redirect(url_for("portal.monitors_list", program_uuid=program_uuid))


@bp.post("/monitors/<uuid:monitor_uuid>/restore")
@role_required("analyst")
def monitors_restore(monitor_uuid: uuid.UUID):
    restored = commit_and_flash(lambda: services.restore_monitor(portal_actor(), monitor_uuid),
                                lambda m: f"Monitor “{m.monitor_name}” restored.")
    if restored is None:
        abort(404)
    return redirect(url_for("portal.monitors_show", monitor_uuid=monitor_uuid))


@bp.app_template_global("now_utc")
def now_utc():
    from app.core.types import utcnow
    return utcnow()
