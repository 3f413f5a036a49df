"""Dashboard: counts, credit balance from the ledger, recent activity from the account's audit log."""
import re

from tests.portal.conftest import text


def _count(html: str, name: str) -> str:
    return re.search(rf'data-testid="{name}">([^<]+)<', html).group(1)


def test_dashboard_counts_balance_and_activity(admin, tenant, other_tenant):
    p = tenant.program(program_name="Retail onboarding")
    e = tenant.entity(p["uuid"], first_name="Jane", last_name="Citizen")
    tenant.entity(p["uuid"])
    tenant.api.post(f"/entities/{e['uuid']}/notes", json={"note_text": "hello"})
    other_tenant.program(program_name="Other account program")
    html = text(admin.get("/dashboard"))
    assert (_count(html, "count-programs"), _count(html, "count-entities"), _count(html, "count-notes")) == \
        ("1", "2", "1")
    assert _count(html, "credit-balance") == "1,000"
    assert "created program" in html and "Retail onboarding" in html and "a note on" in html
    assert f'href="/entities/{e["uuid"]}"' in html
    assert "Other account program" not in html


def test_activity_describes_a_bulk_import(admin, tenant):
    p = tenant.program(program_name="Bulk book")
    r = tenant.api.post(f"/programs/{p['uuid']}/entities/bulk", data="entity_type,vessel_name\nvessel,Star\nvessel,Moon\n",
                        headers={"Content-Type": "text/csv"})
    assert r.status_code == 201
    html = text(admin.get("/dashboard"))
    assert "imported 2 entities into" in html and f'href="/programs/{p["uuid"]}"' in html


def test_dashboard_hides_write_links_from_viewers(viewer, tenant):
    html = text(viewer.get("/dashboard"))
    assert "New program" not in html and "Manage users" not in html and "read-only" in html


def test_activity_links_launched_checks_and_event_decisions(app, admin, tenant):
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Ada", last_name="sandbox-hit")
    check = tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["adverse_media"]})
    assert check.status_code == 202
    html = text(admin.get("/dashboard"))
    assert "launched a check:" in html and f'href="/go/checks/{check.get_json()["data"]["uuid"]}"' in html
