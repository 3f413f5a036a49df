"""Credit (everyone reads: the balance, the ledger with links to the checks, the prices; an operator's admins
change prices), report e-mails (admins), global search, and the entity's history as PDF."""
from __future__ import annotations

import uuid

from flask import current_app, flash, redirect, request, url_for
from flask_login import login_required

from app.billing import queries, services
from app.core.errors import DomainError, Invalid
from app.core.transactions import commit, rollback
from app.portal import bp
from app.portal.base import parse_listing, portal_actor, render, role_required
from app.providers.registry import CHECK_TYPES

LEDGER_ARGS = {"kind": "filter[kind]", "page": "page"}
KIND_LABELS = {"top_up": "Top-up", "charge": "Charge", "refund": "Refund", "adjustment": "Adjustment"}
PRICE_LABELS = {**CHECK_TYPES.labels(), "idpass_step": "IDPass (per step)"}


def _credit_page(status: int = 200, price_errors: dict | None = None):
    actor = portal_actor()
    args = {k: request.args.get(k, "").strip() for k in LEDGER_ARGS if request.args.get(k, "").strip()}
    params, args = parse_listing(queries.list_params, args, LEDGER_ARGS)
    return render("credit/page.html", "credit/_ledger.html", status=status, overview=queries.credit_overview(actor),
                  page=queries.list_ledger(actor, params), args=args, kind_labels=KIND_LABELS,
                  price_labels=PRICE_LABELS, can_set_prices=services.is_operator(actor),
                  price_errors=price_errors or {})


@bp.get("/credit")
@login_required
def credit():
    return _credit_page()


@bp.post("/credit/prices")
@role_required("admin")
def credit_prices():
    """Every price of the form in one transaction; nothing is saved when one is refused."""
    changes = {k[len("price."):]: v for k, v in request.form.items() if k.startswith("price.")}
    try:
        changed = services.set_prices(portal_actor(), changes)
        commit()
    except Invalid as exc:
        rollback()
        return _credit_page(status=422, price_errors=exc.errors or {})
    except DomainError as exc:
        rollback()
        flash(exc.message, "error")
        return redirect(url_for("portal.credit"))
    flash(f"{changed} price{'s' if changed != 1 else ''} changed; they apply to every launch from now on."
          if changed else "No price changed.", "success")
    return redirect(url_for("portal.credit") + "#prices")


@bp.get("/admin/report-emails")
@role_required("admin")
def admin_report_emails():
    from app.notify.services import list_report_emails
    return render("admin/report_emails.html", emails=list_report_emails(portal_actor()),
                  outbox=current_app.config.get("MAIL_OUTBOX_DIR") if not current_app.config.get("MAIL_SERVER")
                  else None)


@bp.get("/search")
@login_required
def search():
    from app.search.queries import search as run_search
    results = run_search(portal_actor(), request.args.get("q", ""))
    only = results.only
    if only is not None and request.args.get("go", "1") == "1":
        return redirect(_record_url(only))
    return render("search/page.html", results=results, record_url=_record_url)


def _record_url(record) -> str:
    from app.checks.models import Check
    from app.entities.models import Entity
    if isinstance(record, Entity):
        return url_for("portal.entities_show", entity_uuid=record.uuid)
    if isinstance(record, Check):
        return url_for("portal.checks_show" if record.kind == "entity" else "portal.adhoc_checks_show",
                       check_uuid=record.uuid)
    return url_for("portal.events_show", event_uuid=record.uuid)


@bp.get("/entities/<uuid:entity_uuid>/history.pdf")
@login_required
def entity_history_pdf(entity_uuid: uuid.UUID):
    from app.checks.reports import entity_history_pdf as build
    from app.core.pdf import attachment
    return attachment(*build(portal_actor(), entity_uuid))
