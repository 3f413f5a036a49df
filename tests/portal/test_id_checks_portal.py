"""ID checks in the portal: "Check a document" on an entity (the form from the type's schema, prefilled with the
entity's names, consent required), the ID check's page with the number masked, the entity's card with the outcome,
the adhoc page; a viewer may not run one."""
from __future__ import annotations

from tests.idchecks.test_id_checks_api import add_oac, balance
from tests.portal.conftest import text


def test_check_a_document_from_the_entity_page(app, tenant, admin):
    add_oac(app, tenant)
    p = tenant.program()
    e = tenant.entity(p["uuid"], first_name="Harriet", last_name="Wombatson", birth_date="1990-02-14")
    page = text(admin.get(f"/entities/{e['uuid']}"))
    assert 'data-testid="entity-id-checks"' in page and "No document checked yet" in page
    form = admin.get(f"/entities/{e['uuid']}/id-checks/new?id_type=passport")
    body = text(form)
    assert form.status_code == 200 and 'value="Harriet"' in body and 'value="1990-02-14"' in body
    assert 'name="data.document_number"' in body and "Sex on the passport" in body
    fields = {"id_type": "passport", "data.first_name": "Harriet", "data.last_name": "Wombatson",
              "data.birth_date": "1990-02-14", "data.gender": "F", "data.document_number": "PA1234567"}
    before = balance(tenant)
    refused = admin.post(f"/entities/{e['uuid']}/id-checks/new", fields)  # no consent
    assert refused.status_code == 422 and "express consent" in text(refused) and balance(tenant) == before
    assert text(refused).count("an ID check needs the person") == 1  # said once, beside the checkbox
    both = admin.post(f"/entities/{e['uuid']}/id-checks/new", {**fields, "data.document_number": "12"})
    assert "express consent" in text(both) and 'id="e-document_number"' in text(both)
    bad = admin.post(f"/entities/{e['uuid']}/id-checks/new", {**fields, "data.document_number": "12",
                                                              "consent_obtained": "yes"})
    assert bad.status_code == 422 and 'id="e-document_number"' in text(bad)
    done = admin.post(f"/entities/{e['uuid']}/id-checks/new", {**fields, "consent_obtained": "yes"})
    assert done.status_code == 302 and "/id-checks/" in done.headers["Location"]
    shown = text(admin.get(done.headers["Location"]))
    assert "Verified" in shown and "Female" in shown and "••••••567" in shown and "PA1234567" not in shown and "Bar Bank of Wombats" in shown
    assert balance(tenant) < before
    card = text(admin.get(f"/entities/{e['uuid']}"))
    assert "Australian Passport" in card and "Verified" in card
    # adhoc: from the ID checks page
    assert 'data-testid="adhoc-check-document"' in text(admin.get("/id-checks/adhoc"))
    adhoc = admin.post("/id-checks/adhoc/new", {**fields, "data.last_name": "sandbox-n", "consent_obtained": "yes"})
    assert adhoc.status_code == 302
    assert "Not verified" in text(admin.get(adhoc.headers["Location"]))
    assert "Not verified" in text(admin.get("/id-checks/adhoc"))
    # an issuer that does not answer: said on the form, nothing recorded
    down = admin.post("/id-checks/adhoc/new", {**fields, "data.last_name": "sandbox-fail", "consent_obtained": "yes"})
    assert down.status_code == 422 and "Nothing was recorded" in text(down)


def test_a_viewer_may_not_run_an_id_check(app, tenant, viewer):
    p = tenant.program()
    e = tenant.entity(p["uuid"])
    assert viewer.get(f"/entities/{e['uuid']}/id-checks/new").status_code == 403
    assert viewer.post("/id-checks/adhoc/new", {"id_type": "passport"}).status_code == 403
    assert 'data-testid="check-document"' not in text(viewer.get(f"/entities/{e['uuid']}"))
