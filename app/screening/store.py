"""Between the database and the engine: save a parsed list as a new version (with its diff), read the active
records back as `ListRecord`s, build the index of each set of list versions into its own directory (once, under
a file lock, swapped in atomically), and keep one open index per process that follows list updates.

Functions take the SQLAlchemy session explicitly; they flush but never commit (the caller's transaction
decides), so a failed import leaves nothing behind.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from flask import current_app, has_app_context
from sqlalchemy import Text, cast, func, insert, select, update
from sqlalchemy.orm import Session

from app.core.types import utcnow
from app.screening.index import DEFAULT_CACHE_BYTES, FORMAT_VERSION, ScreeningIndex
from app.screening.models import ScreeningList, ScreeningListVersion, ScreeningRecord
from app.screening.records import ListInfo, ListRecord, ParsedList, diff_hashes

log = logging.getLogger(__name__)
BATCH = 2000


@dataclass
class ImportSummary:
    list_name: str
    version: int
    created: bool  # False when the file was identical to the current version (nothing stored)
    records: int
    added: int = 0
    changed: int = 0
    removed: int = 0
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def checksum_of(path: str | Path) -> str:
    """SHA-256 of a file, or of a folder's files (sorted by name) for multi-file formats."""
    path = Path(path)
    digest = hashlib.sha256()
    files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
    for f in files:
        digest.update(f.name.encode())
        with f.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


@lru_cache(maxsize=4096)  # rows imported together share their timestamps; strftime is slow
def _iso(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


def save_list(session: Session, parsed: ParsedList, *, fmt: str, source: str, checksum: str,
              now: datetime | None = None) -> ImportSummary:
    """Store a parsed publication as the list's next version; compute added / changed / removed."""
    now = now or utcnow()
    info = parsed.info
    lst = session.scalar(select(ScreeningList).where(ScreeningList.name == info.name))
    if lst is None:
        lst = ScreeningList(name=info.name, title=info.title, publisher=info.publisher, kind=info.kind,
                            jurisdiction=info.jurisdiction, url=info.url, format=fmt, current_version=0,
                            record_count=0, created_at=now, updated_at=now)
        session.add(lst)
        session.flush()
    else:
        latest = session.scalar(select(ScreeningListVersion).where(
            ScreeningListVersion.list_id == lst.id, ScreeningListVersion.version == lst.current_version))
        if latest is not None and latest.checksum == checksum:
            return ImportSummary(info.name, lst.current_version, False, lst.record_count,
                                 warnings=list(parsed.warnings))
        lst.title, lst.publisher, lst.kind = info.title, info.publisher, info.kind
        lst.jurisdiction, lst.url, lst.format = info.jurisdiction, info.url, fmt

    version = lst.current_version + 1
    new_hashes = {r.id: r.content_hash() for r in parsed.records}
    rows = session.execute(select(ScreeningRecord.id, ScreeningRecord.record_id, ScreeningRecord.content_hash,
                                  ScreeningRecord.removed_in_version)
                           .where(ScreeningRecord.list_id == lst.id)).all()
    active = {r.record_id: r.content_hash for r in rows if r.removed_in_version is None}
    pk_of = {r.record_id: r.id for r in rows}
    diff = diff_hashes(active, new_hashes)

    removed_pks = [pk_of[rid] for rid in diff.removed]
    for chunk in _chunks(removed_pks):
        session.execute(update(ScreeningRecord).where(ScreeningRecord.id.in_(chunk))
                        .values(removed_in_version=version))
    session.execute(update(ScreeningRecord)
                    .where(ScreeningRecord.list_id == lst.id, ScreeningRecord.removed_in_version.is_(None))
                    .values(last_seen=now, last_version=version))
    by_id = {r.id: r for r in parsed.records}
    changed_rows = [{"id": pk_of[rid], "schema": by_id[rid].schema, "caption": by_id[rid].caption,
                     "data": by_id[rid].to_data(), "content_hash": new_hashes[rid], "last_change": now}
                    for rid in diff.changed]
    for chunk in _chunks(changed_rows):
        session.execute(update(ScreeningRecord), chunk)
    # added: new rows, or rows of parties that had been removed earlier and are back
    returning, fresh = [], []
    for rid in diff.added:
        r = by_id[rid]
        values = {"schema": r.schema, "caption": r.caption, "data": r.to_data(), "content_hash": new_hashes[rid],
                  "last_seen": now, "last_change": now, "last_version": version, "removed_in_version": None}
        if rid in pk_of:
            returning.append({"id": pk_of[rid], **values})
        else:
            fresh.append({"list_id": lst.id, "record_id": rid, "first_seen": now, "first_version": version,
                          **values})
    for chunk in _chunks(returning):
        session.execute(update(ScreeningRecord), chunk)
    for chunk in _chunks(fresh):
        session.execute(insert(ScreeningRecord), chunk)

    session.add(ScreeningListVersion(
        list_id=lst.id, version=version, format=fmt, source=source[:1000], checksum=checksum,
        published_at=parsed.published_at, imported_at=now, record_count=len(parsed.records),
        added=len(diff.added), changed=len(diff.changed), removed=len(diff.removed),
        diff={"added": diff.added, "changed": diff.changed, "removed": diff.removed},
        warnings=list(parsed.warnings)))
    lst.current_version = version
    lst.record_count = len(parsed.records)
    lst.updated_at = now
    session.flush()
    return ImportSummary(info.name, version, True, len(parsed.records), len(diff.added), len(diff.changed),
                         len(diff.removed), list(parsed.warnings))


def _chunks(items: list, size: int = BATCH) -> Iterator[list]:
    for i in range(0, len(items), size):
        yield items[i:i + size]


def list_status(session: Session) -> list[dict[str, Any]]:
    out = []
    for lst in session.scalars(select(ScreeningList).order_by(ScreeningList.name)):
        latest = session.scalar(select(ScreeningListVersion).where(
            ScreeningListVersion.list_id == lst.id, ScreeningListVersion.version == lst.current_version))
        out.append({
            "list": lst.name, "title": lst.title, "kind": lst.kind, "format": lst.format,
            "jurisdiction": lst.jurisdiction.upper() if lst.jurisdiction else None,
            "version": lst.current_version, "records": lst.record_count,
            "imported_at": _iso(latest.imported_at) if latest else None,
            "published_at": latest.published_at if latest else None,
            "source": latest.source if latest else None,
            "last_diff": {"added": latest.added, "changed": latest.changed, "removed": latest.removed}
            if latest else None,
        })
    return out


def list_versions(session: Session) -> dict[str, str]:
    """{list name: "v<N>"} of what is loaded now; also the cheap stamp the index holder compares."""
    rows = session.execute(select(ScreeningList.name, ScreeningList.current_version)
                           .order_by(ScreeningList.name)).all()
    return {name: f"v{version}" for name, version in rows}


def version_diff(session: Session, list_name: str, version: int) -> dict[str, list[str]] | None:
    """What version N of a list added, changed and removed (for monitors)."""
    row = session.execute(select(ScreeningListVersion.diff).join(
        ScreeningList, ScreeningList.id == ScreeningListVersion.list_id).where(
        ScreeningList.name == list_name, ScreeningListVersion.version == version)).first()
    return row[0] if row else None


def iter_index_items(session: Session) -> Iterator[tuple[ListInfo, ListRecord]]:
    """Every active record of every list, with its list's description, in a stable order."""
    lists = {lst.id: lst for lst in session.scalars(select(ScreeningList))}
    infos = {lid: ListInfo(name=l.name, title=l.title, publisher=l.publisher, kind=l.kind,
                           jurisdiction=l.jurisdiction, url=l.url) for lid, l in lists.items()}
    stmt = (select(ScreeningRecord.list_id, ScreeningRecord.record_id, ScreeningRecord.schema,
                   ScreeningRecord.caption, ScreeningRecord.data, ScreeningRecord.first_seen,
                   ScreeningRecord.last_seen, ScreeningRecord.last_change)
            .where(ScreeningRecord.removed_in_version.is_(None))
            .order_by(ScreeningRecord.list_id, ScreeningRecord.record_id)
            .execution_options(yield_per=5000))
    for row in session.execute(stmt):
        yield infos[row.list_id], ListRecord.from_data(
            id=row.record_id, schema=row.schema, caption=row.caption, data=row.data,
            first_seen=_iso(row.first_seen), last_seen=_iso(row.last_seen), last_change=_iso(row.last_change))


def build_index(session: Session) -> ScreeningIndex:
    """An in-memory index of what is loaded now (no files; the benchmark and tests use it)."""
    versions = list_versions(session)
    return ScreeningIndex(iter_index_items(session), versions)


def iter_index_rows(session: Session) -> Iterator[tuple[ListInfo, ListRecord, bytes]]:
    """As `iter_index_items`, with each record's JSON line for the index built from the stored JSON text
    (what `ScreeningIndex` would write, without encoding the record again: the build's largest cost)."""
    lists = {lst.id: lst for lst in session.scalars(select(ScreeningList))}
    infos = {lid: ListInfo(name=l.name, title=l.title, publisher=l.publisher, kind=l.kind,
                           jurisdiction=l.jurisdiction, url=l.url) for lid, l in lists.items()}
    if session.get_bind().dialect.name == "postgresql":
        # the ISO strings of `_iso` straight from the server: no aware datetime built per timestamp
        def stamp(column):
            return func.to_char(func.timezone("UTC", column), 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
        as_iso = None
    else:
        def stamp(column):
            return column
        as_iso = _iso
    stmt = (select(ScreeningRecord.list_id, ScreeningRecord.record_id, ScreeningRecord.schema,
                   ScreeningRecord.caption, cast(ScreeningRecord.data, Text).label("data"),
                   stamp(ScreeningRecord.first_seen).label("first_seen"),
                   stamp(ScreeningRecord.last_seen).label("last_seen"),
                   stamp(ScreeningRecord.last_change).label("last_change"))
            .where(ScreeningRecord.removed_in_version.is_(None))
            .order_by(ScreeningRecord.list_id, ScreeningRecord.record_id)
            .execution_options(yield_per=5000))
    loads = json.loads
    head = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    @lru_cache(maxsize=4096)  # rows imported together share their timestamps
    def tail(first_seen, last_seen, last_change) -> str:
        return json.dumps({"first_seen": first_seen, "last_seen": last_seen, "last_change": last_change},
                          separators=(",", ":"))[1:]

    for row in session.execute(stmt):
        first_seen, last_seen, last_change = row.first_seen, row.last_seen, row.last_change
        if as_iso is not None:
            first_seen, last_seen, last_change = as_iso(first_seen), as_iso(last_seen), as_iso(last_change)
        record = ListRecord.from_data(id=row.record_id, schema=row.schema, caption=row.caption,
                                      data=loads(row.data), first_seen=first_seen, last_seen=last_seen,
                                      last_change=last_change)
        # {"id":…,"schema":…,"caption":…,"data":<stored JSON text>,"first_seen":…,"last_seen":…,"last_change":…}
        line = (head({"id": row.record_id, "schema": row.schema, "caption": row.caption})[:-1]
                + ',"data":' + row.data + "," + tail(first_seen, last_seen, last_change))
        yield infos[row.list_id], record, line.encode()


def active_record_count(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(ScreeningRecord)
                          .where(ScreeningRecord.removed_in_version.is_(None))) or 0


# --- built indexes on disk ----------------------------------------------------------------------------------
#
# (<SCREENING_INDEX_DIR> below is the database's own folder in it: index_root())
# <SCREENING_INDEX_DIR>/<key>/   one directory per set of list versions (key: a digest of every list's name,
#                                version, checksum and import time, the database and the index format)
# <SCREENING_INDEX_DIR>/current  a symlink to the newest complete directory (what a process opens when the
#                                version it needs is not built yet: the previous version serves until then)
# <SCREENING_INDEX_DIR>/.build.lock  held (flock) by the one process that builds
#
# A build writes into `.tmp-<key>-<pid>`, fsyncs every file, then renames it to `<key>` (atomic), then
# repoints `current`. Readers only ever open complete directories.

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
    from app.extensions import db
    url = db.engine.url.render_as_string(hide_password=True)
    return Path(value) / f"db-{hashlib.sha256(url.encode()).hexdigest()[:12]}"


def _cache_bytes() -> int:
    if has_app_context():
        return int(current_app.config.get("SCREENING_INDEX_CACHE_BYTES") or DEFAULT_CACHE_BYTES)
    return DEFAULT_CACHE_BYTES


def _complete(path: Path) -> bool:
    return (path / "meta.json").is_file()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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
        if force and _complete(target):
            shutil.rmtree(target)
        if not _complete(target):
            tmp = root / f".tmp-{stamp.key}-{os.getpid()}"
            shutil.rmtree(tmp, ignore_errors=True)
            ScreeningIndex.write(iter_index_rows(session), stamp.versions, tmp)
            os.rename(tmp, target)
            _fsync_dir(root)
            built = True
        link = root / f".current-{os.getpid()}"
        if link.is_symlink():
            link.unlink()
        os.symlink(stamp.key, link)
        os.replace(link, root / "current")
        _fsync_dir(root)
        _prune(root, keep=stamp.key)
    meta = json.loads((target / "meta.json").read_text())
    stats = meta["stats"]
    log.info("screening index %s %s", stamp.key, "built" if built else "already built")
    return BuildReport(key=stamp.key, path=str(target), built=built, records=stats["records"],
                       names=stats["names"], seconds=round(time.perf_counter() - started, 3),
                       cpu_seconds=round(time.process_time() - cpu_started, 3), bytes=stats["bytes"], list_versions=stamp.versions)


def _prune(root: Path, keep: str) -> None:
    built = sorted((p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")
                    and _complete(p)),
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


def _open_current(root: Path) -> ScreeningIndex | None:
    link = root / "current"
    try:
        target = root / os.readlink(link)
    except OSError:
        return None
    return ScreeningIndex.open(target, cache_bytes=_cache_bytes()) if _complete(target) else None


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
            self._index, self._key = ScreeningIndex(iter_index_items(session), stamp.versions, cache_bytes=_cache_bytes()), stamp.key
            return
        target = root / stamp.key
        if _complete(target):
            self._index, self._key = ScreeningIndex.open(target, cache_bytes=_cache_bytes()), stamp.key
            return
        if self._index is None:
            previous = _open_current(root)
            if previous is not None:
                self._index, self._key = previous, None
        if self._index is not None:
            self._request_build(stamp.key)
            return
        log.warning("no screening index built for %s: building it now (once, under a lock)", stamp.versions)
        report = build_current_index(session, root)
        self._index, self._key = ScreeningIndex.open(report.path, cache_bytes=_cache_bytes()), report.key

    def _request_build(self, key: str) -> None:
        if self._requested == key:
            return
        self._requested = key
        try:
            from app.screening.jobs import build_screening_index
            build_screening_index.enqueue_now()
        except Exception:  # the previous index keeps serving; the next check asks again
            self._requested = None
            log.exception("could not request a screening index build")

    def reset(self) -> None:
        with self._lock:
            self._index, self._key, self._requested, self._checked_at = None, None, None, 0.0


holder = IndexHolder()


def load_current_index(app=None) -> ScreeningIndex:
    """Open (or, if none was ever built, build) the index of the loaded lists into this process's holder.

    Call it at the start of a process that screens, e.g. an RQ worker before it forks its work horses: the
    children inherit the open index (its pages are shared through the page cache either way)."""
    from app.extensions import db
    if app is None:
        return holder.get(db.session)
    with app.app_context():
        try:
            return holder.get(db.session)
        finally:
            db.session.remove()
