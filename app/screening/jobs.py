"""Background jobs of the screening engine."""
from __future__ import annotations

import logging
from typing import Any

from app.extensions import db
from app.jobs import job
from app.screening import index_dir

log = logging.getLogger(__name__)


@job("maintenance", timeout=1800)
def build_screening_index() -> dict[str, Any] | None:
    """Build the index of the lists loaded now into SCREENING_INDEX_DIR, unless it is built already (enqueued
    when a process notices list versions without a built index; `flask lists import/update` build it too)."""
    if index_dir.index_root() is None:
        return None
    report = index_dir.build_current_index(db.session)
    db.session.rollback()  # read-only: end the transaction the build read in
    log.info("screening index: %s", report.to_dict())
    return report.to_dict()
