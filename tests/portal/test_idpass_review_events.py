"""An IDPass whose verdict is `review` raises an event, so analysts decide it in the one events inbox (issue 20 §4):
its source is the IDPass's ID check (`check_uuid`, `check_type` `idpass`); the event page shows why a person must
look and the faces side by side; deciding it works as for any event; the IDPass page points to it. `passed`,
`failed` and adhoc IDPasses raise nothing."""
from __future__ import annotations

import csv
import io

import pytest

from tests.idpass.finished import finish
from tests.portal.conftest import text
from tests.portal.test_idpass_portal import launch_api


@pytest.fixture
def person(app, tenant):
    from tests.idchecks.test_id_checks_api import add_oac
    add_oac(app, tenant)
    return tenant.entity(tenant.program()["uuid"], first_name="Harriet", last_name="Wombatson",
                         birth_date="1990-02-14")


def idpass_events(tenant, archived: str = "false") -> list[dict]:
    r = tenant.api.get(f"/events?filter[check_type]=idpass&filter[status]=open&archived={archived}")
    assert r.status_code == 200, r.get_json()
    return r.get_json()["data"]


def test_a_review_raises_one_event_on_the_idpass_id_check(app, tenant, person, other_tenant):
    idpass_uuid = launch_api(tenant, person["uuid"])
    assert idpass_events(tenant) == []  # launching raises nothing
    finish(app, idpass_uuid, verdict="review")
    shell = tenant.api.get(f"/idpasses/{idpass_uuid}").get_json()["data"]["id_check"]
    [event] = idpass_events(tenant)
    assert event["check_type"] == "idpass" and event["status"] == "new"
    assert event["check_uuid"] == shell["uuid"] and event["entity_uuid"] == person["uuid"]
    assert event["check_response_index"] is None and event["check_result_ids"] == []
    assert "uncertain" in (event["check_summary"] or "")
    # the source answers at the ID check's address, and the check filter finds the event by it
    assert tenant.api.get(f"/id-checks/{event['check_uuid']}").status_code == 200
    by_source = tenant.api.get(f"/events?filter[check_uuid]={shell['uuid']}").get_json()["data"]
    assert [e["uuid"] for e in by_source] == [event["uuid"]]
    assert tenant.api.get(f"/entities/{person['uuid']}/events").get_json()["data"][0]["uuid"] == event["uuid"]
    # another account sees neither the event nor, through the filter, anything
    assert other_tenant.api.get(f"/events/{event['uuid']}").status_code == 404
    assert other_tenant.api.get(f"/events?filter[check_uuid]={shell['uuid']}").get_json()["data"] == []


@pytest.mark.parametrize("verdict", ["passed", "failed"])
def test_passed_and_failed_raise_nothing(app, tenant, person, verdict):
    finish(app, launch_api(tenant, person["uuid"]), verdict=verdict)
    assert idpass_events(tenant) == []


def test_an_adhoc_review_raises_nothing(app, tenant, person):
    finish(app, launch_api(tenant), verdict="review")
    assert idpass_events(tenant) == []


def test_a_cancelled_idpass_raises_nothing(app, tenant, person, analyst):
    idpass_uuid = launch_api(tenant, person["uuid"])
    assert analyst.post(f"/idpasses/{idpass_uuid}/cancel").status_code == 302
    assert tenant.api.get(f"/idpasses/{idpass_uuid}").get_json()["data"]["status"] == "cancelled"
    assert idpass_events(tenant) == []


def test_the_analyst_decides_it_in_the_inbox(app, tenant, person, analyst):
    idpass_uuid = launch_api(tenant, person["uuid"])
    done = finish(app, idpass_uuid, verdict="review", reasons=["FACE_UNCERTAIN", "LIVENESS_FAILED"])
    [event] = idpass_events(tenant)
    event_number = tenant.api.get(f"/events/{event['uuid']}").get_json()["data"]["event_number"]

    inbox = text(analyst.get("/?type=idpass"))
    assert event["uuid"] in inbox and "IDPass" in inbox
    assert "Identity verification needs review: The face comparison with a document" in inbox
    assert "(+1 more)" in inbox
    page = text(analyst.get(f"/events/{event['uuid']}"))
    assert 'data-testid="idpass-review"' in page
    assert "The face comparison with a document&#39;s photo is uncertain." in page and "FACE_UNCERTAIN" in page
    assert "The liveness challenge was not passed." in page
    assert f'href="/idpasses/{idpass_uuid}"' in page
    for image_id in (done["documents"][-1], done["selfie"]):
        assert f'src="/idpasses/{idpass_uuid}/images/{image_id}"' in page
    assert "similarity <span class=\"mono\">0.62</span>" in page
    assert "by the IDPass" in page and 'data-testid="pending-approval"' not in page

    r = analyst.htmx_post(f"/events/{event['uuid']}/status",
                          {"status": "closed_dismissed", "note": "Same person: an old passport photo."})
    assert r.status_code == 200
    assert tenant.api.get(f"/events/{event['uuid']}").get_json()["data"]["status"] == "closed_dismissed"
    assert idpass_events(tenant) == []
    # the ID check follows the decision (and goes back to pending when the event is reopened); the IDPass's
    # timeline says who decided, its own verdict stays what the rules found
    shell = tenant.api.get(f"/idpasses/{idpass_uuid}").get_json()["data"]["id_check"]
    check = tenant.api.get(f"/id-checks/{shell['uuid']}").get_json()["data"]
    assert check["outcome"] == "pass" and "identity accepted by" in check["outcome_summary"]
    idpass = tenant.api.get(f"/idpasses/{idpass_uuid}").get_json()["data"]
    assert idpass["verification_status"] == "review"
    decided = idpass["log"][-1]
    assert decided["event"] == "review_decided" and decided["message"].startswith(f"{event_number}: identity accepted by")
    idpass_page = text(analyst.get(f"/idpasses/{idpass_uuid}"))
    assert 'data-testid="idpass-review-event"' in idpass_page and "Dismissed" in idpass_page

    rows = list(csv.reader(io.StringIO(text(analyst.get("/events/export.csv?status=all")))))
    header, row = rows[0], rows[1]
    shell = tenant.api.get(f"/idpasses/{idpass_uuid}").get_json()["data"]["id_check"]
    assert row[header.index("check_number")] == shell["check_number"] and row[header.index("check_type")] == "idpass"

    tenant.api.patch(f"/events/{event['uuid']}", json={"status": "investigating", "note": "Reopened."})
    reopened = tenant.api.get(f"/id-checks/{shell['uuid']}").get_json()["data"]
    assert reopened["outcome"] == "pending" and reopened["outcome_summary"].startswith("IDPass needs review: ")
    tenant.api.patch(f"/events/{event['uuid']}", json={"status": "closed_confirmed", "note": "Not the same person."})
    check = tenant.api.get(f"/id-checks/{shell['uuid']}").get_json()["data"]
    assert check["outcome"] == "fail" and "identity not accepted by" in check["outcome_summary"]


def test_archiving_the_entity_archives_the_event(app, tenant, person):
    finish(app, launch_api(tenant, person["uuid"]), verdict="review")
    assert len(idpass_events(tenant)) == 1
    assert tenant.api.post(f"/entities/{person['uuid']}/archive").status_code in (200, 204)
    assert idpass_events(tenant) == [] and len(idpass_events(tenant, archived="true")) == 1


def test_the_entity_history_pdf_prints_its_id_checks_idpasses_and_their_events(app, tenant, person, analyst):
    import subprocess

    from tests.idchecks.test_id_checks_api import NSW_LICENCE
    r = tenant.api.post(f"/entities/{person['uuid']}/id-checks",
                        json={"id_type": "drivers_licence", "consent_obtained": True, "data": NSW_LICENCE})
    assert r.status_code == 200, r.get_json()
    licence = r.get_json()["data"]
    idpass_uuid = launch_api(tenant, person["uuid"])
    finish(app, idpass_uuid, verdict="review")
    shell = tenant.api.get(f"/idpasses/{idpass_uuid}").get_json()["data"]["id_check"]
    history = analyst.get(f"/entities/{person['uuid']}/history.pdf")
    assert history.status_code == 200
    flat = " ".join(subprocess.run(["pdftotext", "-", "-"], input=history.get_data(), capture_output=True,
                                   check=True).stdout.decode().split())
    assert "Identity verification (2)" in flat
    assert licence["check_number"] in flat and shell["check_number"] in flat
    assert "verdict review (FACE_UNCERTAIN)" in flat
    assert "Events (1)" in flat and "Identity verification needs review" in flat
    assert "12345678" not in flat and "2012345678" not in flat  # the licence and card numbers never in clear
