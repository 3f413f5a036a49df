"""Recurring housekeeping jobs (run by the scheduler; times are UTC)."""
from __future__ import annotations

import logging

from app.core import idempotency
from app.core.transactions import commit
from app.jobs import job
from app.maintenance import services

log = logging.getLogger(__name__)


@job("maintenance", cron="17 3 * * *")
def purge_soft_deleted() -> dict[str, int]:
    counts = services.purge_soft_deleted()
    commit()
    log.info("purged soft-deleted rows: %s", counts)
    return counts


@job("maintenance", cron="*/30 * * * *")
def purge_idempotency_records() -> int:
    n = idempotency.purge_expired()
    commit()
    return n
