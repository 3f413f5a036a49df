"""Purge of soft-deleted rows once their 30-day recovery window has passed."""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import delete

from app.core.softdelete import recovery_cutoff
from app.entities.models import Entity
from app.extensions import db
from app.notes.models import Note
from app.programs.models import Program


def soft_deletable_models() -> list:
    """Models with a deleted_at column, children first so that foreign keys hold."""
    return [Note, Entity, Program]


def purge_soft_deleted(now: datetime | None = None) -> dict[str, int]:
    cutoff = recovery_cutoff(now)
    counts: dict[str, int] = {}
    for model in soft_deletable_models():
        result = db.session.execute(
            delete(model).where(model.deleted_at.is_not(None), model.deleted_at < cutoff)
            .execution_options(synchronize_session=False))
        counts[model.__tablename__] = result.rowcount or 0
    return counts
