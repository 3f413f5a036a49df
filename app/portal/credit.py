"""Credit: everyone reads the balance, the ledger with links to the checks and the prices; an operator's admins
change prices."""
from __future__ import annotations

from flask import flash, redirect, request, url_for
from flask_login import login_required

from app.billing import queries, services
from app.core.errors import DomainError, Invalid
from app.core.transactions import commit, rollback
from app.portal import bp
from app.portal.base import parse_listing, portal_actor, render, role_required
from app.providers.id_types import ID_TYPES, IDPASS_PRICE_LABELS
from app.providers.registry import CHECK_TYPES

LEDGER_ARGS = {"kind": "filter[kind]", "page": "page"}
KIND_LABELS = {"top_up": "Top-up", "charge": "Charge", "refund": "Refund", "adjustment": "Adjustment"}
PRICE_LABELS = {**CHECK_TYPES.labels(), **ID_TYPES.labels(), **IDPASS_PRICE_LABELS}


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
