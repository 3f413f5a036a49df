"""The explicit actor passed to every service: who acts, for which account, with which rights."""
from __future__ import annotations

import uuid as uuid_mod
from dataclasses import dataclass, field

from app.core.errors import Forbidden

ROLES = ("admin", "analyst", "viewer")
_RANK = {"viewer": 0, "analyst": 1, "admin": 2}


def rank(role: str | None) -> int:
    """The role's rank (viewer < analyst < admin); -1 for no or an unknown role."""
    return _RANK.get(role or "", -1)


@dataclass(frozen=True)
class Actor:
    account_id: int
    kind: str  # "user" | "api_key" | "system"
    id: int | None
    uuid: uuid_mod.UUID | None
    name: str
    role: str
    api_reference: str | None = None  # the request's id: X-Request-Id, the API's `api_reference`, the audit rows
    via: str = "api"  # "api" | "portal" | "job" | "cli"
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def user_id(self) -> int | None:
        return self.id if self.kind == "user" else None

    @property
    def api_key_id(self) -> int | None:
        return self.id if self.kind == "api_key" else None

    def require(self, role: str) -> None:
        if _RANK[self.role] < _RANK[role]:
            raise Forbidden("Your role does not allow this action.")

    def can(self, role: str) -> bool:
        return _RANK[self.role] >= _RANK[role]

    def as_created_by(self) -> dict | None:
        if self.kind == "user":
            return {"type": "user", "uuid": str(self.uuid), "username": self.name}
        if self.kind == "api_key":
            return {"type": "api_key", "uuid": str(self.uuid), "label": self.name}
        return None


def actor_label(kind: str | None, who: dict | None = None, name: str | None = None) -> str:
    """The one display name of whoever did something, on pages, in PDFs and in CSV exports: a user by their
    e-mail, an API key by its label, the system as "System". `who` is the API's actor object (`created_by`);
    `name` the name kept on the record when the user or key is gone."""
    if kind == "user":
        return (who or {}).get("username") or name or "a deleted user"
    if kind == "api_key":
        return f"{(who or {}).get('label') or name or 'a deleted key'} (API key)"
    if kind == "system":
        return "System"
    return "—"


def system_actor(account_id: int, api_reference: str | None = None) -> Actor:
    return Actor(account_id=account_id, kind="system", id=None, uuid=None, name="system", role="admin",
                 api_reference=api_reference, via="job")
