"""ID checks in the portal: "Check a document" for an entity or adhoc (the form generated from the ID type's data
schema, one source with the API; consent asserted with its wording), an ID check's page, the account's adhoc ID
checks. The ID-check service does the work, as for the API."""
from __future__ import annotations

import uuid

from flask import abort, flash, redirect, request, url_for
from flask_login import login_required

from app.accounts.models import Account
from app.billing import services as billing
from app.core.errors import Conflict, Forbidden, InsufficientCredit, Invalid, NotFound, ServiceUnavailable
from app.core.listing import ListParams
from app.core.transactions import commit, rollback
from app.entities.queries import get_entity
from app.extensions import db
from app.idchecks import queries, rules, services
from app.idchecks.fields import CHOICE_LABELS, data_fields
from app.portal import bp
from app.portal.base import error_text, portal_actor, render, role_required
from app.providers.id_types import ID_TYPES


def _prefill(entity) -> dict[str, str]:
    if entity is None or entity.entity_type != "individual":
        return {}
    return {k: v for k, v in {"first_name": entity.first_name, "middle_name": entity.middle_name,
                              "last_name": entity.last_name,
                              "birth_date": entity.birth_date.isoformat() if entity.birth_date else None}.items() if v}


def _form_page(actor, entity, *, status: int = 200, values: dict | None = None, errors: dict | None = None,
               message: str | None = None):
    id_type = request.values.get("id_type") or "drivers_licence"
    if id_type not in ID_TYPES:
        abort(404)
    account = db.session.get(Account, actor.account_id)
    return render("idchecks/form.html", status=status, entity=entity, program=entity.program if entity else None,
                  id_type=id_type, entry=ID_TYPES[id_type], types=ID_TYPES.entries(), fields=data_fields(id_type),
                  values=values if values is not None else _prefill(entity), errors=errors or {}, message=message,
                  enabled=set(account.id_types or []), identities=list(account.dvs_identities),
                  price=billing.prices()[id_type], balance=billing.balance(actor),
                  wording=services.CONSENT_WORDING)


def _submit(actor, entity):
    id_type = request.form.get("id_type", "")
    values = {f.name: request.form.get(f"data.{f.name}", "").strip() for f in data_fields(id_type)} \
        if id_type in ID_TYPES else {}
    body = {"id_type": id_type, "consent_obtained": request.form.get("consent_obtained") == "yes",
            "data": {k: v for k, v in values.items() if v}}
    if request.form.get("oac"):
        body["oac"] = request.form["oac"]
    try:
        if entity is not None:
            check = services.run_entity_id_check(actor, entity.uuid, body, channel="portal")
        else:
            check = services.run_adhoc_id_check(actor, body, channel="portal")
        commit()
    except Invalid as exc:
        rollback()
        return _form_page(actor, entity, status=422, values=values, errors=exc.errors or {},
                          message=exc.message if not exc.errors else "Some details need attention.")
    except (InsufficientCredit, Forbidden, Conflict, ServiceUnavailable) as exc:
        rollback()
        return _form_page(actor, entity, status=422, values=values, message=exc.message)
    verdict = "verified" if check.outcome == "pass" else "not verified"
    flash(f"{check.id_type_name}: {verdict}. {check.outcome_summary or ''}",
          "success" if check.outcome == "pass" else "error")
    return redirect(url_for("portal.id_checks_show", id_check_uuid=check.uuid))


@bp.route("/entities/<uuid:entity_uuid>/id-checks/new", methods=["GET", "POST"])
@role_required("analyst")
def id_checks_new(entity_uuid: uuid.UUID):
    actor = portal_actor()
    entity = get_entity(actor, entity_uuid)
    return _submit(actor, entity) if request.method == "POST" else _form_page(actor, entity)


@bp.route("/id-checks/adhoc/new", methods=["GET", "POST"])
@role_required("analyst")
def id_checks_adhoc_new():
    actor = portal_actor()
    return _submit(actor, None) if request.method == "POST" else _form_page(actor, None)


@bp.get("/id-checks/adhoc")
@login_required
def id_checks_adhoc():
    page = queries.list_adhoc_id_checks(portal_actor(), ListParams(per_page=100, sort="-checked_at"))
    return render("idchecks/adhoc.html", checks=page.items, total=page.total)


@bp.post("/id-checks/<uuid:id_check_uuid>/recheck")
@role_required("analyst")
def id_checks_recheck(id_check_uuid: uuid.UUID):
    """Run it again on the data it kept: the new check's page, or back with why not."""
    body = {"consent_obtained": request.form.get("consent_obtained") == "yes"}
    try:
        check = services.recheck_id_check(portal_actor(), id_check_uuid, body, channel="portal")
        commit()
    except (Invalid, Conflict, Forbidden, InsufficientCredit, ServiceUnavailable) as exc:
        rollback()
        flash(f"Not checked again: {error_text(exc)}", "error")
        return redirect(url_for("portal.id_checks_show", id_check_uuid=id_check_uuid))
    flash(f"Checked again as {check.check_number}: {check.outcome}.", "success")
    return redirect(url_for("portal.id_checks_show", id_check_uuid=check.uuid))


@bp.get("/id-checks/<uuid:id_check_uuid>")
@login_required
def id_checks_show(id_check_uuid: uuid.UUID):
    actor = portal_actor()
    try:
        check = queries.get_id_check(actor, id_check_uuid, kind="entity")
    except NotFound:
        check = queries.get_id_check(actor, id_check_uuid, kind="adhoc")
    return render("idchecks/show.html", check=check, entity=check.entity, program=check.program,
                  wording=services.CONSENT_WORDING, price=billing.prices().get(check.id_type),
                  can_recheck=rules.recheck_conflict(check) is None,
                  data={k: CHOICE_LABELS.get(v, v) if isinstance(v, str) else v for k, v in check.data_masked.items()},
                  labels={f.name: f.label for f in data_fields(check.id_type)} if check.id_type in ID_TYPES else {})

