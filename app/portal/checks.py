"""Checks in the portal: "Run checks" on the entity page (the entitled check types with their config, the cost
and the balance), the entity's checks list that updates itself until every check has ended, the check page
(every result; a PEP/sanctions hit side by side with the subject), adhoc checks, and the PDF reports.

Launches go through the same service as `POST /entities/{uuid}/checks` and `POST /adhoc-checks`: the form is
turned into the API's body (`checkforms.launch_body`), so the service's field errors land on the form's inputs."""
from __future__ import annotations

import uuid
from urllib.parse import quote

from flask import flash, redirect, request, url_for
from flask_login import login_required

from app import reports
from app.checks import queries, services
from app.checks.models import ENDED
from app.core.errors import DomainError, Invalid
from app.core.pdf import attachment
from app.core.transactions import commit, rollback
from app.entities import queries as entity_queries
from app.events.queries import list_entity_events, list_events, list_params as event_params
from app.portal import bp
from app.portal.base import is_htmx, portal_actor, render, role_required
from app.portal.jobs import job_redirect
from app.portal.limits import heavy_limits
from app.portal.checkforms import ADHOC_CHOICES, ADHOC_FIELDS, check_type_choices, launch_body
from app.providers import vocabulary
from app.providers.registry import check_type_label, results_view
from app.screening.engine import near_miss_floor, near_miss_name_floor

ENTITY_CHECKS_PER_PAGE = 10

# One vocabulary for a check on its page and in its PDF (both rendered with these): labels, not codes.
for _name, _function in {"config_rows": vocabulary.config_rows, "subject_rows": vocabulary.subject_rows,
                         "score_text": vocabulary.score_text, "titled": vocabulary.titled,
                         "score_band": vocabulary.score_band, "read_as": vocabulary.read_as,
                         "effect_text": vocabulary.effect_text, "qualifier_outcome": vocabulary.qualifier_outcome,
                         "result_label": vocabulary.result_label, "value_label": vocabulary.value_label,
                         "check_type_label": check_type_label, "results_view": results_view}.items():
    bp.add_app_template_global(_function, _name)
bp.add_app_template_global(near_miss_floor, "near_miss_floor")
bp.add_app_template_global(near_miss_name_floor, "near_miss_name_floor")


def launch_context(actor, *, errors: dict | None = None, message: str | None = None, values=None) -> dict:
    """What the run form needs: the entitled check types with prices and config, the balance, the last post."""
    options = services.launch_options(actor)
    return {"check_type_choices": check_type_choices(options["enabled"], options["prices"]), "balance": options["balance"],
            "launch_errors": errors or {}, "launch_message": message, "launch_values": values}


def entity_checks_context(actor, entity) -> dict:
    params = queries.list_params({"per_page": str(ENTITY_CHECKS_PER_PAGE)})
    page = queries.list_entity_checks(actor, entity.uuid, params)
    running = any(c.status not in ENDED or any(ch.status not in ENDED for ch in c.children) for c in page.items)
    events = list_entity_events(actor, entity.uuid, event_params({"per_page": str(ENTITY_CHECKS_PER_PAGE)}))
    return {"checks_page": page, "checks_running": running, "entity_events": events}


def _launch_failed(template: str, status: int, **context):
    response = render(template, template, status=status, **context)
    if is_htmx():
        response.headers["HX-Retarget"] = "#run-checks"
        response.headers["HX-Reswap"] = "innerHTML"
    return response


@bp.post("/entities/<uuid:entity_uuid>/checks")
@role_required("analyst")
def checks_launch(entity_uuid: uuid.UUID):
    actor = portal_actor()
    entity = entity_queries.get_entity(actor, entity_uuid)
    body = launch_body(request.form)
    try:
        check = services.launch_entity_checks(actor, entity.uuid, body)
        commit()
    except DomainError as exc:
        rollback()
        context = launch_context(actor, errors=dict(exc.errors or {}) if isinstance(exc, Invalid) else {},
                                 message=exc.message, values=request.form)
        if not is_htmx():
            flash(exc.message, "error")
            return redirect(url_for("portal.entities_show", entity_uuid=entity.uuid) + "#run-checks")
        return _launch_failed("checks/_run_card.html", 422, entity=entity, **context)
    credits = check.total_credits
    what = check.check_type_name if not check.is_group else f"{len(check.children)} checks"
    notice = f"{what} launched: {credits} credit{'s' if credits != 1 else ''} charged."
    if not is_htmx():
        flash(notice, "success")
        return redirect(url_for("portal.entities_show", entity_uuid=entity.uuid) + "#checks")
    response = render("checks/_launched.html", "checks/_launched.html", entity=entity,
                      **entity_checks_context(actor, entity), **launch_context(actor))
    response.headers["X-Portal-Notice"] = quote(notice)
    return response


@bp.get("/entities/<uuid:entity_uuid>/checks")
@login_required
def checks_entity_list(entity_uuid: uuid.UUID):
    """The entity's checks (an htmx fragment that polls itself while a check runs); the full list otherwise."""
    actor = portal_actor()
    entity = entity_queries.get_entity(actor, entity_uuid)
    if is_htmx():
        return render("checks/_entity_checks.html", "checks/_entity_checks.html", entity=entity,
                      **entity_checks_context(actor, entity))
    params = queries.list_params({k: v for k, v in request.args.items() if k in ("page",)})
    page = queries.list_entity_checks(actor, entity.uuid, params)
    return render("checks/entity_list.html", entity=entity, page=page, args={"page": params.page})


def _check_page(check, actor):
    events = list_events(actor, event_params({"filter[check_uuid]": str(check.uuid), "per_page": "100"})) \
        if check.kind == "entity" else None
    running = check.status not in ENDED
    # `?near_misses=1`: the page with its near misses shown (the "Show near misses" link without JavaScript), read
    # as the API reads it; a value it refuses (an address edited by hand) shows the page as usual
    try:
        shown = queries.show_params(request.args)
    except Invalid:
        shown = False
    return render("checks/show.html", "checks/_body.html", check=check, events=events, running=running,
                  show_near_misses=shown)


@bp.get("/checks/<uuid:check_uuid>")
@login_required
def checks_show(check_uuid: uuid.UUID):
    actor = portal_actor()
    return _check_page(queries.get_check(actor, check_uuid, kind="entity"), actor)


@bp.get("/adhoc-checks/<uuid:check_uuid>")
@login_required
def adhoc_checks_show(check_uuid: uuid.UUID):
    actor = portal_actor()
    return _check_page(queries.get_check(actor, check_uuid, kind="adhoc"), actor)


def _near_misses(check_uuid: uuid.UUID, kind: str):
    """The check's near misses: the fragment "Show near misses" loads (htmx); otherwise the check page with them
    shown."""
    check = queries.get_check(portal_actor(), check_uuid, kind=kind)
    if not is_htmx():
        page = "portal.checks_show" if kind == "entity" else "portal.adhoc_checks_show"
        return redirect(url_for(page, check_uuid=check.uuid, near_misses=1) + f"#near-misses-{check.uuid}")
    return render("checks/_near_misses.html", check=check)


@bp.get("/checks/<uuid:check_uuid>/near-misses")
@login_required
def checks_near_misses(check_uuid: uuid.UUID):
    return _near_misses(check_uuid, "entity")


@bp.get("/adhoc-checks/<uuid:check_uuid>/near-misses")
@login_required
def adhoc_checks_near_misses(check_uuid: uuid.UUID):
    return _near_misses(check_uuid, "adhoc")


def _pdf(check_uuid, kind: str):
    """A small report downloads now; a large one is rendered by a job, whose page shows its progress (303)."""
    outcome = reports.pdf_download(portal_actor(), "check_pdf", check_uuid, check_kind=kind)
    if isinstance(outcome, tuple):
        return attachment(*outcome)
    commit()
    return job_redirect(outcome)


@bp.get("/checks/<uuid:check_uuid>/pdf")
@login_required
@heavy_limits
def checks_pdf(check_uuid: uuid.UUID):
    return _pdf(check_uuid, "entity")


@bp.get("/adhoc-checks/<uuid:check_uuid>/pdf")
@login_required
@heavy_limits
def adhoc_checks_pdf(check_uuid: uuid.UUID):
    return _pdf(check_uuid, "adhoc")


# ---------------------------------------------------------------- adhoc checks

def _adhoc_page(actor, status: int = 200, launch: dict | None = None):
    args = {k: v for k, v in request.args.items() if k in ("page", "status", "check_type") and v}
    params = queries.list_params({("page" if k == "page" else f"filter[{k}]"): v for k, v in args.items()})
    page = queries.list_adhoc_checks(actor, params)
    return render("checks/adhoc.html", status=status, page=page, args=args, fields=ADHOC_FIELDS,
                  choices=ADHOC_CHOICES, **(launch or launch_context(actor)))


@bp.get("/adhoc-checks")
@login_required
def adhoc_checks():
    return _adhoc_page(portal_actor())


@bp.post("/adhoc-checks")
@role_required("analyst")
def adhoc_checks_launch():
    actor = portal_actor()
    body = launch_body(request.form, with_data=True)
    try:
        check = services.launch_adhoc_checks(actor, body)
        commit()
    except DomainError as exc:
        rollback()
        errors = dict(exc.errors or {}) if isinstance(exc, Invalid) else {}
        return _adhoc_page(actor, status=422, launch=launch_context(actor, errors=errors, message=exc.message,
                                                                    values=request.form))
    flash("Adhoc check launched." if not check.is_group else f"{len(check.children)} adhoc checks launched.",
          "success")
    return redirect(url_for("portal.adhoc_checks_show", check_uuid=check.uuid))


@bp.get("/go/checks/<uuid:check_uuid>")
@login_required
def check_redirect(check_uuid: uuid.UUID):
    """A check by uuid whatever its kind (the ledger's links): to its entity or adhoc check page."""
    check = queries.get_check(portal_actor(), check_uuid)
    return redirect(url_for("portal.checks_show" if check.kind == "entity" else "portal.adhoc_checks_show",
                            check_uuid=check.uuid))
