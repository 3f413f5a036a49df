"""Lists: the screening lists every account screens against, each with its versions and what each changed; held
versions stand out, and the platform operator accepts or rejects them here."""
from __future__ import annotations

from urllib.parse import quote

from flask import current_app, flash, redirect, request, url_for
from flask_login import login_required

from app.lists import queries, services
from app.portal import bp
from app.portal.base import commit_and_flash, portal_actor, render


def _back(list_name: str | None = None):
    return redirect(url_for("portal.screening_lists") + (f"#list-{quote(list_name, safe='')}" if list_name else ""))


@bp.get("/lists")
@login_required
def screening_lists():
    actor = portal_actor()
    return render("lists/list.html", lists=queries.visible_lists(actor), can_decide=services.can_decide(actor),
                  hold_fraction=current_app.config.get("LIST_HOLD_REMOVED_FRACTION"),
                  hold_min=current_app.config.get("LIST_HOLD_MIN_REMOVED"))


@bp.post("/lists/<list_name>/versions/<int:version>/accept")
@login_required
def screening_lists_accept(list_name: str, version: int):
    commit_and_flash(lambda: services.decide_held_version(portal_actor(), list_name, version, True),
                     lambda s: f"{s.list_name} v{s.version} accepted and applied: {s.records:,} records (+{s.added:,} "
                               f"added, ~{s.changed:,} changed, −{s.removed:,} removed). The screening index is "
                               "rebuilt in the background; monitors then re-screen the customers it concerns.")
    return _back(list_name)


@bp.route("/lists/<list_name>/versions/<int:version>/reject", methods=["GET", "POST"])
@login_required
def screening_lists_reject(list_name: str, version: int):
    """A confirmation page, then the rejection (its records are dropped: importing the file again holds it again)."""
    actor = portal_actor()
    if request.method == "POST":
        commit_and_flash(lambda: services.decide_held_version(actor, list_name, version, False),
                         lambda s: f"{s.list_name} v{s.version} rejected; the list stays at the version in use.")
        return _back(list_name)
    services.require_decider(actor)
    found = queries.held_version(actor, list_name, version)
    if found is None:
        flash(f"{list_name} has no held version {version}; nothing to reject.", "error")
        return _back()
    entry, held = found
    return render("lists/reject.html", entry=entry, held=held)
