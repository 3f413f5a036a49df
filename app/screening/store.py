"""Between the database and the engine: save a parsed list as a new version (with its diff), read the active
records back as `ListRecord`s (and as the JSON lines of an index build), and what is loaded now.

Functions take the SQLAlchemy session explicitly; they flush but never commit (the caller's transaction
decides), so a failed import leaves nothing behind. The indexes built from these records live in `index_dir`
(on disk, one per set of list versions) and `index_holder` (one open index per process).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from sqlalchemy import Text, cast, func, insert, select, update
from sqlalchemy.orm import Session

from app.core.types import utcnow
from app.screening.index import ScreeningIndex
from app.screening.models import ScreeningList, ScreeningListVersion, ScreeningRecord
from app.screening.records import ListInfo, ListRecord, ParsedList, diff_hashes

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
    held: bool = False  # not applied: it would remove too much of the list (`decide_held`)

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
              now: datetime | None = None, hold_fraction: float | None = None,
              hold_min: int = 10) -> ImportSummary:
    """Store a parsed publication as the list's next version; compute added / changed / removed.

    `hold_fraction`: a publication that would remove more than this share of the list's records, and at least
    `hold_min` of them (a few delistings are routine, even on a small list), a truncated or broken download, is not
    applied but held (`status` held, its records kept) until an operator accepts it
    (`accept_version`) or rejects it; nothing changes meanwhile, so nobody is delisted by a broken file."""
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
        held = session.scalar(select(ScreeningListVersion).where(
            ScreeningListVersion.list_id == lst.id, ScreeningListVersion.status == "held",
            ScreeningListVersion.checksum == checksum))
        if held is not None:  # the same file again: still held
            return ImportSummary(info.name, held.version, False, lst.record_count, held.added, held.changed,
                                 held.removed, list(parsed.warnings), held=True)
    version = (session.scalar(select(func.max(ScreeningListVersion.version))
                              .where(ScreeningListVersion.list_id == lst.id)) or 0) + 1
    new_hashes = {r.id: r.content_hash() for r in parsed.records}
    active = dict(session.execute(select(ScreeningRecord.record_id, ScreeningRecord.content_hash).where(
        ScreeningRecord.list_id == lst.id, ScreeningRecord.removed_in_version.is_(None))).all())
    diff = diff_hashes(active, new_hashes)
    row = ScreeningListVersion(
        list_id=lst.id, version=version, format=fmt, source=source[:1000], checksum=checksum,
        published_at=parsed.published_at, imported_at=now, record_count=len(parsed.records),
        added=len(diff.added), changed=len(diff.changed), removed=len(diff.removed),
        diff={"added": diff.added, "changed": diff.changed, "removed": diff.removed},
        warnings=list(parsed.warnings), status="applied")
    if hold_fraction is not None and len(diff.removed) >= hold_min and len(diff.removed) > hold_fraction * len(active):
        row.status = "held"
        row.held_records = [{"id": r.id, "schema": r.schema, "caption": r.caption, "data": r.to_data()}
                            for r in parsed.records]
        session.add(row)
        session.flush()
        return ImportSummary(info.name, version, False, lst.record_count, len(diff.added), len(diff.changed),
                             len(diff.removed), list(parsed.warnings), held=True)
    lst.title, lst.publisher, lst.kind = info.title, info.publisher, info.kind
    lst.jurisdiction, lst.url, lst.format = info.jurisdiction, info.url, fmt
    session.add(row)
    _apply(session, lst, version, parsed.records, new_hashes, diff, now)
    return ImportSummary(info.name, version, True, len(parsed.records), len(diff.added), len(diff.changed),
                         len(diff.removed), list(parsed.warnings))


def _apply(session: Session, lst: ScreeningList, version: int, records: list[ListRecord],
           new_hashes: dict[str, str], diff, now: datetime) -> None:
    """Make `records` the list's active records as `version` (the diff against the active ones given)."""
    rows = session.execute(select(ScreeningRecord.id, ScreeningRecord.record_id)
                           .where(ScreeningRecord.list_id == lst.id)).all()
    pk_of = {r.record_id: r.id for r in rows}
    removed_pks = [pk_of[rid] for rid in diff.removed]
    for chunk in _chunks(removed_pks):
        session.execute(update(ScreeningRecord).where(ScreeningRecord.id.in_(chunk))
                        .values(removed_in_version=version))
    session.execute(update(ScreeningRecord)
                    .where(ScreeningRecord.list_id == lst.id, ScreeningRecord.removed_in_version.is_(None))
                    .values(last_seen=now, last_version=version))
    by_id = {r.id: r for r in records}
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
    lst.current_version = version
    lst.record_count = len(records)
    lst.updated_at = now
    session.flush()


class HeldVersionError(ValueError):
    """No held version by that name, or a newer version came after it."""


def decide_held(session: Session, list_name: str, version: int, accept: bool,
                now: datetime | None = None) -> ImportSummary:
    """Apply (accept) or drop (reject) a held version of a list. Only the list's newest version can be applied."""
    now = now or utcnow()
    lst = session.scalar(select(ScreeningList).where(ScreeningList.name == list_name))
    row = session.scalar(select(ScreeningListVersion).where(
        ScreeningListVersion.list_id == (lst.id if lst else None), ScreeningListVersion.version == version)
        .with_for_update()) if lst is not None else None
    if row is None or row.status != "held":
        raise HeldVersionError(f"{list_name} has no held version {version}")
    newest = session.scalar(select(func.max(ScreeningListVersion.version)).where(
        ScreeningListVersion.list_id == lst.id, ScreeningListVersion.status != "rejected"))
    if accept and newest != version:
        raise HeldVersionError(f"{list_name} v{version} is not the newest version (v{newest}): import again")
    if not accept:
        row.status, row.held_records = "rejected", None
        session.flush()
        return ImportSummary(list_name, version, False, lst.record_count, row.added, row.changed, row.removed)
    records = [ListRecord.from_data(id=r["id"], schema=r["schema"], caption=r["caption"], data=r["data"])
               for r in row.held_records or []]
    new_hashes = {r.id: r.content_hash() for r in records}
    active = dict(session.execute(select(ScreeningRecord.record_id, ScreeningRecord.content_hash).where(
        ScreeningRecord.list_id == lst.id, ScreeningRecord.removed_in_version.is_(None))).all())
    diff = diff_hashes(active, new_hashes)
    row.added, row.changed, row.removed = len(diff.added), len(diff.changed), len(diff.removed)
    row.diff = {"added": diff.added, "changed": diff.changed, "removed": diff.removed}
    row.status, row.held_records, row.imported_at = "applied", None, now
    _apply(session, lst, version, records, new_hashes, diff, now)
    return ImportSummary(list_name, version, True, len(records), row.added, row.changed, row.removed)


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


def iter_records(session: Session, list_name: str, record_ids: list[str]) -> Iterator[tuple[ListInfo, ListRecord]]:
    """The active records of one list among `record_ids`, with the list's description (a list update's changed
    records, for an index of just them)."""
    lst = session.scalar(select(ScreeningList).where(ScreeningList.name == list_name))
    if lst is None:
        return
    info = ListInfo(name=lst.name, title=lst.title, publisher=lst.publisher, kind=lst.kind,
                    jurisdiction=lst.jurisdiction, url=lst.url)
    for chunk in _chunks(sorted(set(record_ids))):
        rows = session.execute(select(ScreeningRecord.record_id, ScreeningRecord.schema, ScreeningRecord.caption,
                                      ScreeningRecord.data).where(
            ScreeningRecord.list_id == lst.id, ScreeningRecord.record_id.in_(chunk),
            ScreeningRecord.removed_in_version.is_(None)))
        for row in rows:
            yield info, ListRecord.from_data(id=row.record_id, schema=row.schema, caption=row.caption, data=row.data)


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


def still_listed(session: Session, record_ids: list[str]) -> set[str]:
    """Which of these listed parties (record ids) are still on a list with what made them listed: a sanction
    programme or a PEP position on a sanctions or PEP list, or simply still there on any other register. A
    record removed from its list, or kept with neither, has been delisted (monitors raise `delisted` for it)."""
    wanted = sorted({r for r in record_ids if r})
    out: set[str] = set()
    for chunk in _chunks(wanted):
        rows = session.execute(select(ScreeningRecord.record_id, ScreeningRecord.schema, ScreeningRecord.caption,
                                      ScreeningRecord.data, ScreeningList.kind)
                               .join(ScreeningList, ScreeningList.id == ScreeningRecord.list_id)
                               .where(ScreeningRecord.record_id.in_(chunk),
                                      ScreeningRecord.removed_in_version.is_(None)))
        for row in rows:
            if row.kind not in ("sanction", "pep"):
                out.add(row.record_id)
                continue
            record = ListRecord.from_data(id=row.record_id, schema=row.schema, caption=row.caption, data=row.data)
            programmes = any(s.get("programs") for s in record.sanctions)
            if record.is_pep or record.positions or programmes or (record.is_sanctioned and not record.sanctions):
                out.add(row.record_id)
    return out


def lists_with_versions(session: Session, per_list: int = 20) -> list[dict[str, Any]]:
    """Each list with its newest versions (applied, held or rejected): when fetched, from where, the delta."""
    out = []
    for lst in session.scalars(select(ScreeningList).order_by(ScreeningList.name)):
        versions = session.scalars(select(ScreeningListVersion).where(ScreeningListVersion.list_id == lst.id)
                                   .order_by(ScreeningListVersion.version.desc()).limit(per_list))
        out.append({"list": lst.name, "title": lst.title, "publisher": lst.publisher, "kind": lst.kind,
                    "jurisdiction": lst.jurisdiction.upper() if lst.jurisdiction else None,
                    "version": lst.current_version, "records": lst.record_count,
                    "versions": [{"version": v.version, "status": v.status, "imported_at": v.imported_at,
                                  "published_at": v.published_at, "records": v.record_count, "added": v.added,
                                  "changed": v.changed, "removed": v.removed, "source": v.source}
                                 for v in versions]})
    return out
