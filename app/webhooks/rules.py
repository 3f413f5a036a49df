"""Who may manage webhook endpoints: an integrator's API key (it owns its integration), and admins in the portal.
Analysts and viewers in the portal may not: an endpoint sends the account's data out of the platform."""
from __future__ import annotations

from app.core.actor import Actor


def can_manage(actor: Actor) -> bool:
    return actor.kind in ("api_key", "system") or actor.can("admin")


def require_manager(actor: Actor) -> None:
    if not can_manage(actor):
        actor.require("admin")
