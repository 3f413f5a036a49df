"""Checks fixtures: invented screening lists stored in the database, a real RQ worker (SimpleWorker, in this
process, burst mode) that works off the queues, and an entity to screen."""
from __future__ import annotations

import pytest

from app.screening import index_holder, store
from app.screening.records import ListInfo, ListRecord, Name, ParsedList

SANCTIONS = ListInfo(name="test_sanctions", title="Test sanctions", publisher="Test Treasury", kind="sanction",
                     jurisdiction="us")
PEPS = ListInfo(name="test_peps", title="Test PEPs", publisher="Test Parliament", kind="pep", jurisdiction="au")


def sanctioned(alias: str = "Bartholomew Ignatius Quenneville") -> ListRecord:
    return ListRecord(id="s-1", schema="Person", caption="Bartholomew QUENNEVILLE", names=[Name(alias, "alias")],
                      birth_dates=["1961-03-14"], topics=["sanction"],
                      sanctions=[{"programs": ["TEST-1"], "authority": "Test Treasury"}])


def pep() -> ListRecord:
    return ListRecord(id="p-1", schema="Person", caption="Wilhelmina Ashcombe-Tarrant", topics=["role.pep"],
                      countries=["au"], positions=[{"title": "Senator", "country": "au"}])


def save_lists(app, sanctions_records=None, pep_records=None, checksum: str = "v1") -> None:
    from app.extensions import db
    with app.app_context():
        store.save_list(db.session, ParsedList(SANCTIONS, sanctions_records or [sanctioned()]), fmt="test",
                        source="test", checksum=f"s-{checksum}")
        store.save_list(db.session, ParsedList(PEPS, pep_records or [pep()]), fmt="test", source="test",
                        checksum=f"p-{checksum}")
        db.session.commit()


@pytest.fixture(autouse=True)
def fresh_index_holder(app):
    """List changes are seen by the next check: the index is built in memory, synchronously (no stamp-check
    interval), so a re-screen after a list update uses the new version (tests/screening covers the on-disk
    index and its asynchronous swap)."""
    interval, directory = index_holder.holder.check_interval, app.config.get("SCREENING_INDEX_DIR")
    index_holder.holder.check_interval, app.config["SCREENING_INDEX_DIR"] = 0.0, ""
    index_holder.holder.reset()
    yield
    index_holder.holder.reset()
    index_holder.holder.check_interval, app.config["SCREENING_INDEX_DIR"] = interval, directory


@pytest.fixture
def lists(app):
    save_lists(app)


@pytest.fixture
def person(tenant):
    program = tenant.program()
    return tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                         birth_date="1961-03-14")
