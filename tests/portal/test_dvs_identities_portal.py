"""The account's DVS identities (OACs) in the portal (issue 20 §1): an admin lists, adds (field-level errors, a code
once per account) and removes them; an IDPass needs one with a privacy policy; analysts cannot; another account's
is not found."""
from __future__ import annotations

from sqlalchemy import select

from app.extensions import db
from tests.portal.conftest import text


def identities(app, tenant) -> list[tuple[str, str, str | None]]:
    from app.accounts.models import Account, DvsIdentity
    with app.app_context():
        rows = db.session.execute(select(DvsIdentity.oac_code, DvsIdentity.requester_name,
                                         DvsIdentity.privacy_policy_url).join(Account)
                                  .where(Account.uuid == tenant.account_uuid).order_by(DvsIdentity.oac_code))
        return [tuple(r) for r in rows]


def add(client, **fields):
    form = {"oac_code": "", "requester_name": "", "privacy_policy_url": "", **fields}
    return client.post("/admin/account/dvs-identities", form)


def test_an_admin_adds_and_removes_an_oac_and_an_idpass_follows(app, tenant, admin):
    page = text(admin.get("/admin/account"))
    assert 'data-testid="oac-none"' in page

    r = add(admin, oac_code="bad code!", requester_name="B", privacy_policy_url="http://wombats.example/privacy")
    assert r.status_code == 422
    page = text(r)
    assert "1 to 64 letters, digits, dashes or underscores." in page
    assert "2 to 255 characters" in page and "An https:// address." in page
    assert identities(app, tenant) == []

    r = add(admin, oac_code="OAC-1", requester_name="Bar Bank of Wombats")
    assert r.status_code == 302 and r.headers["Location"].endswith("/admin/account#dvs-identities")
    assert identities(app, tenant) == [("OAC-1", "Bar Bank of Wombats", None)]
    page = text(admin.get("/admin/account"))
    assert "OAC-1" in page and "Needs a privacy policy" in page and "IDPasses need its privacy policy" in page

    body = {"data": {"first_name": "Harriet", "last_name": "Wombatson"},
            "config": {"link_validity_days": 7, "check_liveness": True, "document_1": ["passport"],
                       "require_id_photo": False, "return_verification_images": False, "delivery_method": "manual"}}
    assert tenant.api.post("/idpasses", json=body).status_code == 403  # no privacy policy yet

    assert add(admin, oac_code="OAC-1", requester_name="Again").status_code == 422  # once per account
    r = add(admin, oac_code="OAC-2", requester_name="Bar Bank of Wombats",
            privacy_policy_url="https://wombats.example/privacy")
    assert r.status_code == 302
    assert tenant.api.post("/idpasses", json={**body, "oac": "OAC-2"}).status_code == 202
    # two identities: a launch names one
    assert "oac" in tenant.api.post("/idpasses", json=body).get_json()["errors"]

    from app.accounts.models import DvsIdentity
    with app.app_context():
        first = db.session.scalar(select(DvsIdentity.uuid).where(DvsIdentity.oac_code == "OAC-1"))
    r = admin.post(f"/admin/account/dvs-identities/{first}/remove")
    assert r.status_code == 302
    assert [i[0] for i in identities(app, tenant)] == ["OAC-2"]
    assert tenant.api.post("/idpasses", json=body).status_code == 202  # one left: no need to name it


def test_only_admins_and_only_their_own(app, tenant, other_tenant, analyst, login):
    from tests.idchecks.test_id_checks_api import add_oac
    add_oac(app, tenant)
    assert add(analyst, oac_code="OAC-9", requester_name="Someone").status_code == 403
    from app.accounts.models import DvsIdentity
    with app.app_context():
        mine = db.session.scalar(select(DvsIdentity.uuid))
    intruder = login(other_tenant.email)
    assert intruder.post(f"/admin/account/dvs-identities/{mine}/remove").status_code == 404
    assert analyst.post(f"/admin/account/dvs-identities/{mine}/remove").status_code == 403
    assert len(identities(app, tenant)) == 1
