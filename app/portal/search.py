"""Global search: one box for entities (name, number, reference), checks and events by their public numbers."""
from __future__ import annotations

from flask import redirect, request, url_for
from flask_login import login_required

from app.checks.models import Check
from app.entities.models import Entity
from app.portal import bp
from app.portal.base import portal_actor, render
from app.search.queries import search as run_search


@bp.get("/search")
@login_required
def search():
    results = run_search(portal_actor(), request.args.get("q", ""))
    only = results.only
    if only is not None and request.args.get("go", "1") == "1":
        return redirect(_record_url(only))
    return render("search/page.html", results=results, record_url=_record_url)


def _record_url(record) -> str:
    if isinstance(record, Entity):
        return url_for("portal.entities_show", entity_uuid=record.uuid)
    if isinstance(record, Check):
        return url_for("portal.checks_show" if record.kind == "entity" else "portal.adhoc_checks_show",
                       check_uuid=record.uuid)
    return url_for("portal.events_show", event_uuid=record.uuid)
