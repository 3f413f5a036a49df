"""IDPass in the portal: "Verify identity" on a person (the form prefilled from the entity, every service error beside
its input, 403/402 said on the form, a business offered nothing), the link shown with its copy button after the
launch, the list and its filters, the page of a finished IDPass (document steps with their images, fields, the
person's changes, the issuer's answer and the face; the selfie and liveness; the verdict, consent and timeline), the
status block that stops polling once terminal, cancel and resend, images served privately, and another account's
IDPass and images answering 404."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.extensions import db
from tests.idchecks.test_id_checks_api import add_oac, balance
from tests.idpass.finished import finish
from tests.portal.conftest import text, uuid_in

PERSON = {"first_name": "Harriet", "last_name": "Wombatson", "birth_date": "1990-02-14"}
FORM = {"data.first_name": "Harriet", "data.middle_name": "", "data.last_name": "Wombatson",
        "data.dob": "1990-02-14", "config.document_1": ["passport", "licence"], "config.check_liveness": "yes",
        "config.return_verification_images": "yes", "config.link_validity_days": "7",
        "config.delivery_method": "manual"}
API_BODY = {"data": {"first_name": "Harriet", "last_name": "Wombatson"},
            "config": {"link_validity_days": 7, "check_liveness": True, "document_1": ["passport", "licence"],
                       "require_id_photo": False, "return_verification_images": True, "delivery_method": "manual"}}


@pytest.fixture
def person(app, tenant):
    add_oac(app, tenant)
    return tenant.entity(tenant.program()["uuid"], **PERSON)


def prices(tenant) -> dict:
    return tenant.api.get("/credit").get_json()["data"]["prices"]


def launch_api(tenant, entity_uuid=None, **config) -> str:
    body = {"data": dict(API_BODY["data"]), "config": {**API_BODY["config"], **config}}
    path = f"/entities/{entity_uuid}/idpasses" if entity_uuid else "/idpasses"
    r = tenant.api.post(path, json=body)
    assert r.status_code == 202, r.get_json()
    return r.get_json()["data"]["uuid"]


def test_verify_identity_from_the_entity_page(app, tenant, person, admin):
    page = text(admin.get(f"/entities/{person['uuid']}"))
    assert 'data-testid="entity-idpasses"' in page and 'data-testid="verify-identity"' in page
    assert "No IDPass yet" in page
    form = admin.get(f"/entities/{person['uuid']}/idpasses/new")
    body = text(form)
    assert form.status_code == 200
    assert 'value="Harriet"' in body and 'value="Wombatson"' in body and 'value="1990-02-14"' in body
    assert "Australian passport" in body and "Medicare card" in body and "New Zealand driver licence" in body
    table = prices(tenant)
    for n in (1, 2, 3):
        assert f'data-price-{n}="{table[f"idpass_{n}"]}"' in body
    assert f'data-balance="{balance(tenant)}"' in body and "/static/js/idpass.js" in body
    assert re.search(r'name="config.check_liveness" value="yes" checked', body)  # liveness on by default
    assert 'name="config.link_validity_days"' in body and 'min="1" max="14"' in body and 'value="7"' in body

    before = balance(tenant)
    bad = admin.post(f"/entities/{person['uuid']}/idpasses/new", {
        **FORM, "data.dob": "1991-01-01", "config.document_2": ["passport"], "config.require_id_photo": "yes",
        "config.delivery_method": "sms", "config.delivery_phone": "0293744000"})
    shown = text(bad)
    assert bad.status_code == 422, shown[shown.find("<main"):][:2000]
    for field in ("dob", "document_2", "id_photo_purpose", "delivery_phone"):
        assert f'id="e-{field}"' in shown, field
    assert "already allowed in step 1" in shown and "Must be the entity&#39;s date of birth" in shown
    assert 'value="0293744000"' in shown and 'value="1991-01-01"' in shown  # the values come back
    # the schema's ranges are checked before the rules between fields (the service's two rounds)
    days = text(admin.post(f"/entities/{person['uuid']}/idpasses/new", {**FORM, "config.link_validity_days": "15"}))
    assert 'id="e-link_validity_days"' in days and 'value="15"' in days
    assert balance(tenant) == before

    done = admin.post(f"/entities/{person['uuid']}/idpasses/new", FORM)
    assert done.status_code == 302 and "/idpasses/" in done.headers["Location"]
    idpass_uuid = uuid_in(done.headers["Location"])
    link = tenant.api.get(f"/idpasses/{idpass_uuid}").get_json()["data"]["idpass_link"]
    page = text(admin.get(done.headers["Location"]))
    assert "IDPass launched" in page and f'value="{link}"' in page and 'data-copy-link="idpass-link"' in page
    assert 'data-testid="copy-link"' in page and 'hx-trigger="every 3s"' in page
    assert "Link not opened" in page and "Awaiting result" in page
    assert before - balance(tenant) == table["idpass_1"]
    charged = f"{table['idpass_1']} credit{'s' * (table['idpass_1'] != 1)}"
    assert f"IDPass launched ({charged} charged)" in page  # what the shell ID check was charged
    assert re.search(rf"<dt>Charged</dt><dd>{charged}</dd>", page)
    card = text(admin.get(f"/entities/{person['uuid']}"))
    assert f"/idpasses/{idpass_uuid}" in card and "Link not opened" in card and "Awaiting result" in card


def test_an_adhoc_idpass_needs_the_names_and_the_steps_cost_more(tenant, person, admin):
    assert 'data-testid="new-idpass"' in text(admin.get("/idpasses"))
    form = text(admin.get("/idpasses/new"))
    assert 'value="Harriet"' not in form and 'data-testid="idpass-form"' in form
    refused = admin.post("/idpasses/new", {**FORM, "data.first_name": "", "data.last_name": "",
                                           "config.document_3": ["medicare"]})
    shown = text(refused)
    assert refused.status_code == 422
    for field in ("first_name", "last_name", "document_3"):
        assert f'id="e-{field}"' in shown, field
    assert "Needs step 2: steps are filled in order." in shown
    none = admin.post("/idpasses/new", {**FORM, "config.document_1": []})
    assert none.status_code == 422 and 'id="e-document_1"' in text(none)
    before = balance(tenant)
    done = admin.post("/idpasses/new", {**FORM, "config.document_2": ["medicare"], "config.document_3": ["visa"]})
    assert done.status_code == 302
    assert before - balance(tenant) == prices(tenant)["idpass_3"]
    shown = tenant.api.get(f"/idpasses/{uuid_in(done.headers['Location'])}").get_json()["data"]
    assert shown["source"] == "adhoc" and shown["document_allowed_types"]["document_3"] == ["visa"]


def test_a_business_is_not_offered_an_idpass(app, tenant, admin):
    add_oac(app, tenant)
    business = tenant.entity(tenant.program()["uuid"], entity_type="business", business_name="Wombatson Pty Ltd",
                             first_name=None, last_name=None)
    page = text(admin.get(f"/entities/{business['uuid']}"))
    assert 'data-testid="verify-identity"' not in page and 'data-testid="entity-idpasses"' not in page
    for response in (admin.get(f"/entities/{business['uuid']}/idpasses/new"),
                     admin.post(f"/entities/{business['uuid']}/idpasses/new", FORM)):
        assert response.status_code == 409
        assert "IDPass verifies a person: this entity is a business." in text(response)
        assert 'data-testid="idpass-form"' not in text(response)


def test_403_and_402_are_said_on_the_form(app, factory, login):
    bare = factory.tenant(name="No OAC")
    someone = bare.entity(bare.program()["uuid"], first_name="Harriet", last_name="Wombatson")
    client = login(bare.email)
    form = text(client.get(f"/entities/{someone['uuid']}/idpasses/new"))
    assert "no DVS identity (OAC) yet" in form
    r = client.post(f"/entities/{someone['uuid']}/idpasses/new", {**FORM, "data.dob": ""})
    assert r.status_code == 403 and 'data-testid="idpass-error"' in text(r) and "DVS identity" in text(r)

    poor = factory.tenant(name="Poor", credit=0)
    add_oac(app, poor)
    someone = poor.entity(poor.program()["uuid"], first_name="Harriet", last_name="Wombatson")
    client = login(poor.email)
    assert "The balance does not cover this IDPass." in text(client.get(f"/entities/{someone['uuid']}/idpasses/new"))
    r = client.post(f"/entities/{someone['uuid']}/idpasses/new", {**FORM, "data.dob": ""})
    assert r.status_code == 402 and "Insufficient credit" in text(r) and 'value="Harriet"' in text(r)


def test_the_list_and_its_filters(app, tenant, person, admin):
    mine = launch_api(tenant, person["uuid"])
    adhoc = launch_api(tenant)
    assert admin.post(f"/idpasses/{adhoc}/cancel").status_code == 302

    def listed(query: str = "", htmx: bool = False) -> str:
        r = admin.htmx_get("/idpasses" + query) if htmx else admin.get("/idpasses" + query)
        assert r.status_code == 200
        return text(r)
    page = listed()
    assert mine in page and adhoc in page and 'hx-get="/idpasses"' in page and "Cancelled" in page
    assert mine not in listed("?source=adhoc") and adhoc in listed("?source=adhoc")
    assert mine in listed("?status=new") and adhoc not in listed("?status=new")
    failed = listed("?verification_status=failed")
    assert adhoc in failed and mine not in failed
    fragment = listed("?source=entity", htmx=True)
    assert "<html" not in fragment and mine in fragment and adhoc not in fragment
    reset = listed("?status=bogus")
    assert "Some filters were not valid" in reset and mine in reset
    assert "No IDPass matches" in listed("?verification_status=passed")
    nav = re.search(r'<a href="/idpasses" aria-current="page">', page)
    assert nav, "the IDPass entry of the navigation is current"


def _finish(app, idpass_uuid) -> dict:
    """Two photos of the passport (the second used), a selfie, closed as passed (tests/idpass/finished.py)."""
    from tests.idpass.images import face
    done = finish(app, idpass_uuid, document_photos=[face("obama2.jpg"), face("obama3.jpg")])
    return {"first": done["documents"][0], "second": done["documents"][1], "selfie": done["selfie"],
            "bytes": done["selfie_bytes"]}


def test_the_page_of_a_finished_idpass(app, tenant, person, admin):
    idpass_uuid = launch_api(tenant, person["uuid"])
    inflight = admin.htmx_get(f"/idpasses/{idpass_uuid}/status")
    assert 'hx-trigger="every 3s"' in text(inflight) and "HX-Refresh" not in inflight.headers
    ids = _finish(app, idpass_uuid)
    r = admin.get(f"/idpasses/{idpass_uuid}")
    page = text(r)
    assert r.status_code == 200
    assert "Passed" in page and "Complete" in page and "hx-trigger" not in page
    assert "Every document was verified with its issuer" in page
    assert "Australian passport" in page and "HARRIET" in page and "••••••567" in page
    for image_id in (ids["first"], ids["second"], ids["selfie"]):
        assert f'src="/idpasses/{idpass_uuid}/images/{image_id}"' in page
    assert "Attempt 1" in page and "Attempt 2 · used" in page
    changed = re.search(r'<tr class="idpass-changed"><th scope="row">First name</th>.*?</tr>', page, re.S)
    assert changed and "Changed by the person" in changed.group(0) and "HARRLET" in changed.group(0)
    assert "0.91" in page and "threshold 0.73" in page and "Liveness passed" in page and "0.86" in page
    assert "idpass-2026-11" in page and "checks my identity documents" in page
    assert 'data-testid="idpass-timeline"' in page and "Created by" in page
    assert f'href="/idpasses/{idpass_uuid}/certificate.pdf"' in page
    assert 'data-testid="copy-link"' not in page and 'data-testid="cancel-idpass"' not in page
    assert 'data-testid="resend-sms"' not in page

    done = admin.htmx_get(f"/idpasses/{idpass_uuid}/status")
    assert done.status_code == 200 and "hx-trigger" not in text(done) and "Passed" in text(done)
    assert done.headers.get("HX-Refresh") == "true"  # the page reloads once, with the results

    image = admin.get(f"/idpasses/{idpass_uuid}/images/{ids['selfie']}")
    assert image.status_code == 200 and image.mimetype == "image/jpeg"
    assert image.get_data() == ids["bytes"]
    assert image.headers["Cache-Control"] == "private, no-store"
    assert admin.get(f"/idpasses/{idpass_uuid}/images/{ids['selfie'] + 1000}").status_code == 404


def test_cancel_and_resend(app, tenant, person, admin, viewer):
    sms = launch_api(tenant, person["uuid"], delivery_method="sms", delivery_phone="0412345678")
    page = text(admin.get(f"/idpasses/{sms}"))
    assert 'data-testid="resend-sms"' in page and 'data-testid="cancel-idpass"' in page and "data-confirm=" in page
    viewed = text(viewer.get(f"/idpasses/{sms}"))
    assert 'data-testid="cancel-idpass"' not in viewed and 'data-testid="resend-sms"' not in viewed
    assert viewer.post(f"/idpasses/{sms}/cancel").status_code == 403

    resent = admin.post(f"/idpasses/{sms}/resend")
    assert resent.status_code == 302
    assert "sent again by SMS to 0412 ••• 678" in text(admin.get(resent.headers["Location"]))
    assert tenant.api.get(f"/idpasses/{sms}").get_json()["data"]["log"][-1]["event"] == "sms_resend_requested"

    before = balance(tenant)
    cancelled = admin.post(f"/idpasses/{sms}/cancel")
    assert cancelled.status_code == 302
    page = text(admin.get(cancelled.headers["Location"]))
    assert "IDPass cancelled" in page and "credits were refunded" in page and "Cancelled" in page
    assert 'data-testid="copy-link"' not in page and 'data-testid="resend-sms"' not in page
    assert balance(tenant) > before
    again = admin.post(f"/idpasses/{sms}/cancel")
    assert "already cancelled" in text(admin.get(again.headers["Location"]))

    manual = launch_api(tenant, person["uuid"])
    assert 'data-testid="resend-sms"' not in text(admin.get(f"/idpasses/{manual}"))
    refused = admin.post(f"/idpasses/{manual}/resend")
    assert "delivered by hand" in text(admin.get(refused.headers["Location"]))


def test_another_accounts_idpass_and_images_are_not_found(app, tenant, person, other_tenant, login):
    idpass_uuid = launch_api(tenant, person["uuid"])
    ids = _finish(app, idpass_uuid)
    intruder = login(other_tenant.email)
    for path in (f"/idpasses/{idpass_uuid}", f"/idpasses/{idpass_uuid}/status",
                 f"/idpasses/{idpass_uuid}/images/{ids['selfie']}", f"/idpasses/{idpass_uuid}/certificate.pdf",
                 f"/entities/{person['uuid']}/idpasses/new"):
        assert intruder.get(path).status_code == 404, path
    assert intruder.post(f"/idpasses/{idpass_uuid}/cancel").status_code == 404
    assert idpass_uuid not in text(intruder.get("/idpasses"))
    # the other account's own IDPass does not lend its uuid to this one's image
    add_oac(app, other_tenant)
    theirs = launch_api(other_tenant, other_tenant.entity(other_tenant.program()["uuid"], **PERSON)["uuid"])
    assert intruder.get(f"/idpasses/{theirs}/images/{ids['selfie']}").status_code == 404
    with app.app_context():
        from app.idpass.models import IdPass
        assert db.session.scalar(select(IdPass.status).where(IdPass.uuid == idpass_uuid)) == "complete"
