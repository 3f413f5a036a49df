"""One open screening index per process, following list updates (`holder`), and its warm-up at a worker's start.
"""
from __future__ import annotations

import logging
import threading
import time

from sqlalchemy.orm import Session

from app import jobs

from app.screening.index import ScreeningIndex
from app.screening.index_dir import (Stamp, build_current_index, cache_bytes, current_stamp, index_root,
                                     is_complete, open_current)
from app.screening.store import iter_index_items

log = logging.getLogger(__name__)


class IndexHolder:
    """One index per process, following list updates.

    Every `check_interval` seconds it compares the list versions in the database (one small query) with the
    index it holds. With SCREENING_INDEX_DIR configured (the default), a changed version is opened from its
    built directory (memory-mapped: cheap, shared with every other process). If that directory is not built
    yet, the process keeps serving the index it holds and asks for a build (the `build_screening_index` job);
    a process holding none opens the previous complete version (`current`), and only when no index was ever
    built does it build one itself, under the file lock (once for all processes). Without SCREENING_INDEX_DIR
    the index is built in memory in each process (development, tests)."""

    def __init__(self, check_interval: float = 2.0):
        self.check_interval = check_interval
        self._index: ScreeningIndex | None = None
        self._key: str | None = None
        self._requested: str | None = None
        self._checked_at = 0.0
        self._lock = threading.Lock()

    def get(self, session: Session) -> ScreeningIndex:
        now = time.monotonic()
        if self._index is not None and now - self._checked_at < self.check_interval:
            return self._index
        stamp = current_stamp(session)
        with self._lock:
            if self._index is None or stamp.key != self._key:
                self._load(session, stamp)
            self._checked_at = time.monotonic()
            return self._index  # type: ignore[return-value]

    def _load(self, session: Session, stamp: Stamp) -> None:
        root = index_root()
        if root is None:
            log.info("building the screening index in memory for %s", stamp.versions)
            self._index, self._key = ScreeningIndex(iter_index_items(session), stamp.versions, cache_bytes=cache_bytes()), stamp.key
            return
        target = root / stamp.key
        if is_complete(target):
            self._index, self._key = ScreeningIndex.open(target, cache_bytes=cache_bytes()), stamp.key
            return
        if self._index is None:
            previous = open_current(root)
            if previous is not None:
                self._index, self._key = previous, None
        if self._index is not None:
            self._request_build(stamp.key)
            return
        log.warning("no screening index built for %s: building it now (once, under a lock)", stamp.versions)
        report = build_current_index(session, root)
        self._index, self._key = ScreeningIndex.open(report.path, cache_bytes=cache_bytes()), report.key

    def _request_build(self, key: str) -> None:
        if self._requested == key:
            return
        self._requested = key
        try:
            jobs.enqueue_now("build_screening_index")
        except Exception:  # the previous index keeps serving; the next check asks again
            self._requested = None
            log.exception("could not request a screening index build")

    def reset(self) -> None:
        with self._lock:
            self._index, self._key, self._requested, self._checked_at = None, None, None, 0.0


holder = IndexHolder()
