from __future__ import annotations

from datetime import datetime, timedelta, timezone

from sqlalchemy import func, select

from app.core.transactions import transaction
from app.extensions import db
from app.screening import index_dir, index_holder, screen, store
from app.screening.importers import parse_list
from app.screening.models import ScreeningList, ScreeningListVersion, ScreeningRecord

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _save(path, fmt="ofac-csv", now=T0):
    parsed = parse_list(fmt, path)
    with transaction():
        return store.save_list(db.session, parsed, fmt=fmt, source=str(path), checksum=store.checksum_of(path),
                               now=now)


def test_first_import_then_identical_reimport(app_ctx, lists_dir):
    first = _save(lists_dir / "ofac")
    assert (first.created, first.version, first.records, first.added) == (True, 1, 5, 5)
    again = _save(lists_dir / "ofac")
    assert (again.created, again.version) == (False, 1)
    assert db.session.scalar(select(func.count()).select_from(ScreeningListVersion)) == 1
    row = db.session.scalar(select(ScreeningRecord).where(ScreeningRecord.record_id == "ofac-1001"))
    assert row.caption == "Dmitri Anatolyevich KORVAL" and row.schema == "Person"
    assert row.data["birth_dates"] == ["1961-03-14"] and row.first_version == 1 and row.removed_in_version is None


def test_new_version_diff(app_ctx, lists_dir):
    _save(lists_dir / "ofac")
    later = T0 + timedelta(days=1)
    summary = _save(lists_dir / "ofac_v2", now=later)
    assert (summary.version, summary.added, summary.changed, summary.removed) == (2, 1, 1, 1)
    version = db.session.scalar(select(ScreeningListVersion).where(ScreeningListVersion.version == 2))
    assert version.diff == {"added": ["ofac-1006"], "changed": ["ofac-1001"], "removed": ["ofac-1003"]}
    assert store.version_diff(db.session, "us_ofac_sdn", 2) == version.diff
    rows = {r.record_id: r for r in db.session.scalars(select(ScreeningRecord))}
    assert rows["ofac-1003"].removed_in_version == 2 and rows["ofac-1003"].last_version == 1
    changed = rows["ofac-1001"]
    assert changed.data["birth_dates"] == ["1962-03-14"]
    assert changed.first_seen == T0 and changed.last_change == later and changed.last_seen == later
    unchanged = rows["ofac-1005"]
    assert unchanged.last_change == T0 and unchanged.last_seen == later and unchanged.last_version == 2
    assert rows["ofac-1006"].first_version == 2
    lst = db.session.scalar(select(ScreeningList))
    assert (lst.current_version, lst.record_count) == (2, 5)
    # back to the first publication: the removed vessel returns as "added", the DOB change is undone
    third = _save(lists_dir / "ofac", now=later + timedelta(days=1))
    assert (third.version, third.added, third.changed, third.removed) == (3, 1, 1, 1)
    returned = db.session.scalar(select(ScreeningRecord).where(ScreeningRecord.record_id == "ofac-1003"))
    assert returned.removed_in_version is None and returned.first_seen == T0


def test_index_follows_list_updates_without_restart(app_ctx, lists_dir):
    _save(lists_dir / "ofac")
    assert screen({"full_name": "Petra Nova"}).results == []
    first = index_holder.holder.get(db.session)
    assert index_holder.holder.get(db.session) is first         # loaded once, reused
    _save(lists_dir / "ofac_v2", now=T0 + timedelta(days=1))
    # v2 has no built index yet: the v1 index keeps serving (and a build is requested)
    assert screen({"full_name": "Petra Nova"}).list_versions == {"us_ofac_sdn": "v1"}
    report = index_dir.build_current_index(db.session)         # what the job / `flask lists import` run
    assert report.built and report.records == 5 and report.list_versions == {"us_ofac_sdn": "v2"}
    result = screen({"full_name": "Petra Nova"})
    assert [r["record"]["id"] for r in result.results] == ["ofac-1006"]
    assert result.list_versions == {"us_ofac_sdn": "v2"}
    assert screen({"vessel_name": "Sea Falcon"}).results == []  # removed in v2
    hit = screen({"full_name": "Dmitri Anatolyevich Korval"}).results[0]
    assert hit["record"]["first_seen"] == "2026-01-01T00:00:00Z" and hit["record"]["last_change"] == "2026-01-02T00:00:00Z"


def test_status(app_ctx, lists_dir):
    _save(lists_dir / "ofac")
    _save(lists_dir / "un" / "consolidated.xml", fmt="un-xml")
    rows = {r["list"]: r for r in store.list_status(db.session)}
    assert rows["un_sc_sanctions"]["records"] == 3 and rows["un_sc_sanctions"]["published_at"] == "2026-01-15"
    assert rows["us_ofac_sdn"]["version"] == 1 and rows["us_ofac_sdn"]["jurisdiction"] == "US"
    assert store.list_versions(db.session) == {"un_sc_sanctions": "v1", "us_ofac_sdn": "v1"}
