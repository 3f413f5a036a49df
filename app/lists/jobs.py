"""Background jobs of the lists domain."""
from __future__ import annotations

import logging

from app import jobs, signals
from app.screening.jobs import build_screening_index

log = logging.getLogger(__name__)


@jobs.job("maintenance", timeout=1800)
def announce_list_version(list_name: str, version: int) -> None:
    """After an operator accepted a held version: build the screening index that holds it (the work of the
    `build_screening_index` job, run here so that the order is certain), then announce the version, so that the
    monitors' re-screen of the customers it concerns screens against it (docs/decisions.md, "Lists page").
    A failed build is logged and the version announced all the same: the re-screen waits for an index holding it
    (`monitors.services._index_holding`), which every screening process asks to have built."""
    try:
        build_screening_index()
    except Exception:  # noqa: BLE001 - the accepted version stands; announcing it still reaches the monitors
        log.exception("screening index of %s v%s not built; announcing the version anyway", list_name, version)
    signals.list_version_stored.send(list_name, version=version)
