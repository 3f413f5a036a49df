"""Reads of the screening lists, shared by the API (`GET /api/v1/lists`) and the portal's Lists page."""
from __future__ import annotations

from typing import Any

from sqlalchemy import select

from app.accounts.models import Account
from app.core.actor import Actor
from app.extensions import db
from app.screening import store
from app.screening.records import DEMO_KIND


def visible_lists(actor: Actor) -> list[dict[str, Any]]:
    """Each list the actor's account screens against, with its newest versions (newest first): the imported lists
    for every account, the demo's invented lists for the demo account only."""
    demo = bool(db.session.scalar(select(Account.is_demo).where(Account.id == actor.account_id)))
    return [r for r in store.lists_with_versions(db.session) if demo or r["kind"] != DEMO_KIND]


def held_version(actor: Actor, list_name: str, version: int) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(the list, its held version) as `visible_lists` shows them, or None when the list has no such held version."""
    entry = next((e for e in visible_lists(actor) if e["list"] == list_name), None)
    held = next((v for v in (entry or {}).get("versions", ()) if v["version"] == version and v["status"] == "held"),
                None)
    return (entry, held) if entry is not None and held is not None else None
