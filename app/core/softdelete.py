"""The soft-delete recovery window (spec: 30 days, portal-only restore), read in one place."""
from __future__ import annotations

from datetime import datetime, timedelta

from flask import current_app, has_app_context

from app.core.types import utcnow

DEFAULT_RECOVERY_DAYS = 30


def recovery_days() -> int:
    if has_app_context():
        return int(current_app.config.get("SOFT_DELETE_RECOVERY_DAYS", DEFAULT_RECOVERY_DAYS))
    return DEFAULT_RECOVERY_DAYS


def recovery_cutoff(now: datetime | None = None) -> datetime:
    """Rows deleted before this instant are past the window (not restorable; purged by the maintenance job)."""
    return (now or utcnow()) - timedelta(days=recovery_days())


def restorable(deleted_at: datetime | None, now: datetime | None = None) -> bool:
    return deleted_at is not None and deleted_at >= recovery_cutoff(now)
