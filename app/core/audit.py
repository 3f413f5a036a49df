"""The audit trail: who did what to which record, under which api_reference, with which changes."""
from __future__ import annotations

import json
import uuid as uuid_mod
from datetime import date, datetime
from typing import Any

from sqlalchemy import insert

from app.core.actor import Actor
from app.core.models import AuditLog
from app.core.types import utcnow
from app.extensions import db


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, uuid_mod.UUID):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def record(actor: Actor, action: str, target_type: str, target_uuid: uuid_mod.UUID | None,
           changes: dict | None = None) -> None:
    db.session.add(AuditLog(
        account_id=actor.account_id,
        actor_type=actor.kind,
        actor_uuid=actor.uuid,
        actor_name=actor.name,
        action=action,
        target_type=target_type,
        target_uuid=target_uuid,
        api_reference=actor.api_reference,
        changes=json.loads(json.dumps(_plain(changes))) if changes else None,
    ))


def record_many(actor: Actor, action: str, target_type: str,
                items: list[tuple[uuid_mod.UUID, dict | None]]) -> None:
    """Many audit rows in one executemany (bulk imports): one row per (target uuid, changes)."""
    if not items:
        return
    now = utcnow()
    db.session.execute(insert(AuditLog), [{
        "account_id": actor.account_id, "actor_type": actor.kind, "actor_uuid": actor.uuid,
        "actor_name": actor.name, "action": action, "target_type": target_type, "target_uuid": target_uuid,
        "api_reference": actor.api_reference, "created_at": now,
        "changes": json.loads(json.dumps(_plain(changes))) if changes else None,
    } for target_uuid, changes in items])


def apply_changes(obj: Any, values: dict[str, Any]) -> dict[str, list[Any]]:
    """Set attributes and return {field: [old, new]} for the ones that really changed."""
    diff: dict[str, list[Any]] = {}
    for name, new in values.items():
        old = getattr(obj, name)
        if old != new:
            setattr(obj, name, new)
            diff[name] = [_plain(old), _plain(new)]
    return diff
