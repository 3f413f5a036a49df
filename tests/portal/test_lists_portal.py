"""The portal's Lists page: every signed-in user sees the lists with their versions and deltas, a held version
stands out, and only the platform operator accepts or rejects it (audited; on accept, a background job builds the
index holding the version, then announces it to the monitors)."""
from __future__ import annotations

import re

import pytest

from app import signals
from app.accounts.models import Account
from app.core.models import AuditLog
from app.extensions import db
from app.jobs import queue
from app.screening import index_dir, store
from app.screening.records import DEMO_KIND, ListInfo, ListRecord, Name, ParsedList
from tests.checks.conftest import fresh_index_holder  # noqa: F401 (fixtures)
from tests.portal.conftest import text

LIST = ListInfo(name="test_sanctions", title="Test sanctions", publisher="Test Treasury", kind="sanction",
                jurisdiction="us")
DEMO = ListInfo(name="demo_watchlist", title="Demo watchlist", publisher="Nobody", kind=DEMO_KIND)
PAGE = "/lists"


def _records(n: int, start: int = 0) -> list[ListRecord]:
    return [ListRecord(id=f"s-{i}", schema="Person", caption=f"Listed Person{i}", names=[Name(f"Listed Person{i}")],
                       topics=["sanction"]) for i in range(start, start + n)]


def publish(app, info: ListInfo, records: list[ListRecord], checksum: str, hold: float | None = 0.05):
    with app.app_context():
        summary = store.save_list(db.session, ParsedList(info, records), fmt="test", source=f"file://{checksum}.csv",
                                  checksum=checksum, hold_fraction=hold)
        db.session.commit()
    return summary


@pytest.fixture
def held(app):
    """test_sanctions: v1 (40 records), v2 (+2, one changed), v3 held (it drops 20 of the 42)."""
    publish(app, LIST, _records(40), "v1")
    v2 = _records(42)
    v2[0] = ListRecord(id="s-0", schema="Person", caption="Listed Person0 renamed", names=[Name("Someone Else")])
    assert publish(app, LIST, v2, "v2").created
    summary = publish(app, LIST, v2[20:], "v3")
    assert summary.held and summary.version == 3 and summary.removed == 20
    return summary


def make_operator(app, tenant, on: bool = True) -> None:
    with app.app_context():
        db.session.get(Account, tenant.account_id).is_operator = on
        db.session.commit()


def rows(page: str) -> dict[str, str]:
    """{version: status} of the test list's table."""
    table = page[page.index('data-testid="versions-test_sanctions"'):]
    return dict(re.findall(r'<tr data-version="(\d+)" data-status="(\w+)"', table[:table.index("</table>")]))


def audit_rows(app, action: str) -> list[AuditLog]:
    with app.app_context():
        return list(db.session.scalars(db.select(AuditLog).where(AuditLog.action == action)))


def maintenance_jobs(app) -> list[tuple]:
    with app.app_context():
        q = queue("maintenance")
        return [tuple(j.args) for j in q.jobs]


def test_everyone_signed_in_sees_the_versions_and_their_deltas(app, held, viewer, client):
    assert client.get(PAGE).status_code == 302  # signed out: to the login page
    r = viewer.get(PAGE)
    page = text(r)
    assert r.status_code == 200 and "Test sanctions" in page and "Test Treasury" in page
    assert rows(page) == {"3": "held", "2": "applied", "1": "applied"}
    assert re.search(r'data-testid="version-in-use">v2<', page)
    v2 = page[page.index('data-version="2"'):]
    v2 = v2[:v2.index("</tr>")]
    cells = re.findall(r'<td class="num[^"]*">(.*?)</td>', v2)
    assert cells[:2] == ["42", "+2"] and "~1" in cells[2] and ">0<" in cells[3]  # records, added, changed, removed
    assert "file://v2.csv" in v2 and "<time datetime=" in v2  # the source; imported_at in the user's zone
    note = page[page.index('data-testid="held-note"'):]
    assert "v3 is not applied" in note and "20 of the 42 records" in note and "more than 5%" in note
    assert "The platform operator accepts or rejects it" in note
    assert "Accept" not in page and "Reject" not in page  # no buttons for a non-operator
    assert 'href="/lists"' in page and 'aria-current="page"' in page[page.index('href="/lists"') - 5:][:200]


def test_a_non_operator_cannot_decide(app, held, admin, tenant):
    page = text(admin.get(PAGE))  # an admin, but not of an operator account
    assert "Reject" not in page and "/accept" not in page
    assert admin.post(f"{PAGE}/test_sanctions/versions/3/accept").status_code == 403
    assert admin.post(f"{PAGE}/test_sanctions/versions/3/reject").status_code == 403
    assert admin.get(f"{PAGE}/test_sanctions/versions/3/reject").status_code == 403
    make_operator(app, tenant)
    assert admin.post(f"{PAGE}/test_sanctions/versions/3/accept", csrf=False).status_code == 400  # CSRF is on
    assert rows(text(admin.get(PAGE)))["3"] == "held"
    assert audit_rows(app, "list_version.accepted") == [] and maintenance_jobs(app) == []


def test_an_operator_accepts_a_held_version(app, held, admin, analyst, tenant, work, tmp_path):
    make_operator(app, tenant)
    assert "Accept" not in text(analyst.get(PAGE))  # an analyst of the operator account: not the operator
    page = text(admin.get(PAGE))
    assert "/lists/test_sanctions/versions/3/accept" in page and "/lists/test_sanctions/versions/3/reject" in page
    assert "Check the publication, then accept or reject it" in page
    announced: list[tuple] = []
    directory = app.config["SCREENING_INDEX_DIR"]
    app.config["SCREENING_INDEX_DIR"] = str(tmp_path / "index")  # the job builds the index on disk

    def heard(list_name, version, **_):  # what the monitors hear, and whether the index holds it by then
        with app.app_context():
            root = index_dir.index_root()
            built = index_dir.is_complete(root / index_dir.current_stamp(db.session).key)
        announced.append((list_name, version, built))

    try:
        with signals.list_version_stored.connected_to(heard):
            r = admin.post(f"{PAGE}/test_sanctions/versions/3/accept")
            assert r.status_code == 302 and r.headers["Location"].endswith("/lists#list-test_sanctions")
            page = text(admin.get(PAGE))
            assert "test_sanctions v3 accepted and applied: 22 records" in page
            assert rows(page) == {"3": "applied", "2": "applied", "1": "applied"}
            assert re.search(r'data-testid="version-in-use">v3<', page) and 'data-testid="held-note"' not in page
            assert maintenance_jobs(app) == [("announce_list_version", "test_sanctions", 3)]
            assert announced == []  # announced only once the job has built the index
            work()
    finally:
        app.config["SCREENING_INDEX_DIR"] = directory
    assert announced == [("test_sanctions", 3, True)]
    (entry,) = audit_rows(app, "list_version.accepted")
    assert entry.account_id == tenant.account_id and entry.actor_name == tenant.email
    assert entry.changes == {"list": "test_sanctions", "version": 3, "records": 22, "added": 0, "changed": 0,
                             "removed": 20}
    assert tenant.api.get("/lists").get_json()["data"][0]["version"] == 3
    r = admin.post(f"{PAGE}/test_sanctions/versions/3/accept")  # decided already: a flash, not a 500
    assert r.status_code == 302
    assert "test_sanctions has no held version 3; nothing was changed." in text(admin.get(PAGE))
    assert len(audit_rows(app, "list_version.accepted")) == 1
    assert "accepted" in text(admin.get("/dashboard")) and "test_sanctions v3" in text(admin.get("/dashboard"))


def test_an_operator_rejects_a_held_version_after_confirming(app, held, admin, tenant):
    make_operator(app, tenant)
    confirm = admin.get(f"{PAGE}/test_sanctions/versions/3/reject")
    body = text(confirm)
    assert confirm.status_code == 200 and "Reject test_sanctions v3?" in body and "the list stays at" in body
    assert 'name="csrf_token"' in body and "<strong>20</strong>" in body
    assert rows(text(admin.get(PAGE)))["3"] == "held"  # looking at the confirmation changes nothing
    r = admin.post(f"{PAGE}/test_sanctions/versions/3/reject")
    assert r.status_code == 302
    page = text(admin.get(PAGE))
    assert "test_sanctions v3 rejected; the list stays at the version in use." in page
    assert rows(page) == {"3": "rejected", "2": "applied", "1": "applied"}
    assert re.search(r'data-testid="version-in-use">v2<', page)
    (entry,) = audit_rows(app, "list_version.rejected")
    assert entry.changes["version"] == 3 and entry.changes["removed"] == 20
    assert maintenance_jobs(app) == []  # nothing to build or announce
    # a version that is not held (unknown, applied, rejected): a clear message, not a 500
    for path in ("test_sanctions/versions/3", "test_sanctions/versions/2", "test_sanctions/versions/99",
                 "no_such_list/versions/1"):
        r = admin.get(f"{PAGE}/{path}/reject")
        assert r.status_code == 302, path
        assert "no held version" in text(admin.get(PAGE))
        assert admin.post(f"{PAGE}/{path}/reject").status_code == 302
        assert admin.post(f"{PAGE}/{path}/accept").status_code == 302
        assert "no held version" in text(admin.get(PAGE))


def test_a_held_version_with_a_newer_one_after_it_can_only_be_rejected(app, held, admin, tenant):
    make_operator(app, tenant)
    v4 = _records(42)
    v4[1] = ListRecord(id="s-1", schema="Person", caption="Changed", names=[Name("Changed Name")])
    assert publish(app, LIST, v4, "v4").version == 4
    page = text(admin.get(PAGE))
    assert "/versions/3/accept" not in page and "/versions/3/reject" in page
    assert "A newer version came after it, so it can only be rejected." in page
    admin.post(f"{PAGE}/test_sanctions/versions/3/accept")
    assert "is not the newest version" in text(admin.get(PAGE))
    assert rows(text(admin.get(PAGE)))["3"] == "held"


def test_the_demo_list_is_shown_to_the_demo_account_only(app, held, admin, tenant, other_tenant, login):
    publish(app, DEMO, _records(3), "demo", hold=None)
    with app.app_context():
        db.session.get(Account, other_tenant.account_id).is_demo = True
        db.session.commit()
    page = text(admin.get(PAGE))
    assert "Test sanctions" in page and "Demo watchlist" not in page
    assert [e["list"] for e in tenant.api.get("/lists").get_json()["data"]] == ["test_sanctions"]
    demo_page = text(login(other_tenant.email).get(PAGE))
    assert "Test sanctions" in demo_page and "Demo watchlist" in demo_page


def test_no_lists_yet(admin):
    assert "No lists loaded" in text(admin.get(PAGE))
