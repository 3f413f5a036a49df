"""The demo's invented list stays in the demo account: another account's checks never match it, and never name
it in their list versions or PDFs (issue 18)."""
from __future__ import annotations

import json

from tests.checks.conftest import save_lists
from tests.checks.test_reports import pdf_text


def test_the_demo_list_is_screened_for_the_demo_account_only(app, tenant, work, tmp_path):
    save_lists(app)  # real lists beside the demo's
    demo = json.loads(app.test_cli_runner().invoke(args=["accounts", "seed-demo"]).stdout)
    work()
    demo_headers = {"Authorization": f"Bearer {demo['api_key']}"}
    client = app.test_client()
    event = client.get("/api/v1/events", headers=demo_headers).get_json()["data"][0]
    demo_check = client.get(f"/api/v1/checks/{event['check_uuid']}", headers=demo_headers).get_json()["data"]
    assert demo_check["outcome"] == "warning" and "demo_sanctions" in demo_check["details"]["list_versions"]

    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Anatol", last_name="Grevskiy", birth_date="1966-04-12",
                           address_country="CY")
    launch = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                             json={"check_types": ["pep_sanction_check"]}).get_json()["data"]
    work()
    check = tenant.api.get(f"/checks/{launch['uuid']}").get_json()["data"]
    assert check["status"] == "complete" and check["outcome"] == "pass", check
    assert check["details"]["list_versions"] == {"test_peps": "v1", "test_sanctions": "v1"}
    assert tenant.api.get("/events").get_json()["meta"]["total"] == 0
    flat = " ".join(pdf_text(tenant.api.get(f"/checks/{launch['uuid']}/pdf").data, tmp_path).split())
    assert "test_sanctions (version v1)" in flat
    assert "demo" not in flat.lower()
