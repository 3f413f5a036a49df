"""The built indexes on disk: one directory per set of list versions, built once (under a file lock) and swapped
in atomically; one open index per process is `index_holder`'s.

    <root>/<key>/       one directory per set of list versions (key: a digest of every list's name, version,
                        checksum and import time, the database and the index format)
    <root>/current      a symlink to the newest complete directory (what a process opens when the version it
                        needs is not built yet: the previous version serves until then)
    <root>/.build.lock  held (flock) by the one process that builds

`<root>` is the database's own folder in SCREENING_INDEX_DIR (`index_root()`). A build writes into
`.tmp-<key>-<pid>`, fsyncs every file, then renames it to `<key>` (atomic), then repoints `current`. Readers
only ever open complete directories.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from flask import current_app, has_app_context
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.screening.index import DEFAULT_CACHE_BYTES, ScreeningIndex
from app.screening.index_writer import FORMAT_VERSION, fsync
from app.screening.models import ScreeningList, ScreeningListVersion
from app.screening.store import iter_index_rows

log = logging.getLogger(__name__)

KEEP_BUILT = 3  # complete directories kept (older ones are removed; processes still mapping them keep working)


@dataclass
class Stamp:
    versions: dict[str, str]
    key: str


def current_stamp(session: Session) -> Stamp:
    """What is loaded now, as {list: "v<N>"} and as a directory key (one small query)."""
    rows = session.execute(
        select(ScreeningList.name, ScreeningList.current_version, ScreeningListVersion.checksum,
               ScreeningListVersion.imported_at, ScreeningListVersion.id)
        .outerjoin(ScreeningListVersion, (ScreeningListVersion.list_id == ScreeningList.id)
                   & (ScreeningListVersion.version == ScreeningList.current_version))
        .order_by(ScreeningList.name)).all()
    versions = {r.name: f"v{r.current_version}" for r in rows}
    bind = session.get_bind()
    ident = [FORMAT_VERSION, bind.url.render_as_string(hide_password=True) if bind is not None else "",
             [(r.name, r.current_version, r.checksum, _iso_us(r.imported_at), r.id) for r in rows]]
    key = hashlib.sha256(json.dumps(ident, default=str).encode()).hexdigest()[:24]
    return Stamp(versions, key)


def _iso_us(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def index_root() -> Path | None:
    """This database's folder in the configured SCREENING_INDEX_DIR (None: indexes are built in memory, per
    process). One folder per database (`db-<digest of its URL>`), so that processes of another database sharing
    the directory (a benchmark, a second environment) never serve each other's `current` index."""
    if not has_app_context():
        return None
    value = current_app.config.get("SCREENING_INDEX_DIR")
    if not value:
        return None
    from app.extensions import db  # local: glue; the engine's modules load without the app
    url = db.engine.url.render_as_string(hide_password=True)
    return Path(value) / f"db-{hashlib.sha256(url.encode()).hexdigest()[:12]}"


def cache_bytes() -> int:
    if has_app_context():
        return int(current_app.config.get("SCREENING_INDEX_CACHE_BYTES") or DEFAULT_CACHE_BYTES)
    return DEFAULT_CACHE_BYTES


def is_complete(path: Path) -> bool:
    return (path / "meta.json").is_file()


@contextmanager
def _build_lock(root: Path, blocking: bool = True) -> Iterator[bool]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".build.lock", "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@dataclass
class BuildReport:
    key: str
    path: str
    built: bool  # False: it was already built (by this or another process)
    records: int
    names: int
    seconds: float
    cpu_seconds: float  # of this process (the build is one thread): what the machine's load does not inflate
    bytes: int
    list_versions: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def build_current_index(session: Session, root: Path | None = None, *, force: bool = False) -> BuildReport:
    """Build the index of what is loaded now into `root` (SCREENING_INDEX_DIR), unless it is built already.

    Only one process builds (file lock); the others wait for it and find the directory complete."""
    root = root or index_root()
    if root is None:
        raise RuntimeError("SCREENING_INDEX_DIR is not configured")
    started, cpu_started = time.perf_counter(), time.process_time()
    stamp = current_stamp(session)
    target = root / stamp.key
    with _build_lock(root):
        built = False
        if force and is_complete(target):
            shutil.rmtree(target)
        if not is_complete(target):
            tmp = root / f".tmp-{stamp.key}-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            ScreeningIndex.write(iter_index_rows(session), stamp.versions, tmp)
            os.rename(tmp, target)
            fsync(root)
            built = True
        link = root / f".current-{os.getpid()}"
        if link.is_symlink():
            link.unlink()
        os.symlink(stamp.key, link)
        os.replace(link, root / "current")
        fsync(root)
        _prune(root, keep=stamp.key)
    meta = json.loads((target / "meta.json").read_text())
    stats = meta["stats"]
    log.info("screening index %s %s", stamp.key, "built" if built else "already built")
    return BuildReport(key=stamp.key, path=str(target), built=built, records=stats["records"],
                       names=stats["names"], seconds=round(time.perf_counter() - started, 3),
                       cpu_seconds=round(time.process_time() - cpu_started, 3), bytes=stats["bytes"], list_versions=stamp.versions)


def _prune(root: Path, keep: str) -> None:
    built = sorted((p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
                    and is_complete(p)),
                   key=lambda p: p.stat().st_mtime, reverse=True)
    for p in [p for p in built if p.name != keep][KEEP_BUILT - 1:]:
        shutil.rmtree(p, ignore_errors=True)
    for p in root.glob(".tmp-*"):  # left by a build that died (its pid is gone)
        try:
            pid = int(p.name.rsplit("-", 1)[1])
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(p, ignore_errors=True)
        except (ValueError, PermissionError):
            pass


def open_current(root: Path) -> ScreeningIndex | None:
    link = root / "current"
    try:
        target = root / os.readlink(link)
    except OSError:
        return None
    return ScreeningIndex.open(target, cache_bytes=cache_bytes()) if is_complete(target) else None

