"""What a new user tripped on (issue 7 §8): pages past the end, plurals, one activity entry per import."""
from __future__ import annotations

import re

from tests.portal.conftest import text


def test_a_page_past_the_end_says_so_and_links_to_the_last_page(admin, tenant):
    program = tenant.program()
    for i in range(3):
        tenant.entity(program["uuid"], first_name="Ada", last_name=f"Lovelace{i}")
    html = text(admin.get(f"/programs/{program['uuid']}?page=9&per_page=2"))
    assert "No entities yet" not in html
    assert "Page 9 is empty" in html and "There are 3 entities, on 2 pages." in html
    assert re.search(r'href="[^"]*page=2[^"]*">Go to page 2</a>', html)
    html = text(admin.get("/programs?page=5"))
    assert "Page 5 is empty" in html and "There is 1 program, on 1 page." in html


def test_counts_are_pluralised(admin, tenant):
    program = tenant.program()
    tenant.entity(program["uuid"])
    html = text(admin.get(f"/programs/{program['uuid']}"))
    assert "1 entity found" in html and "1 entities" not in html


def test_count_filter():
    from app.portal import count_of
    assert count_of(1, "entity") == "1 entity"
    assert count_of(2, "entity") == "2 entities"
    assert count_of(1200, "row") == "1,200 rows"
    assert count_of(0, "match") == "0 matches"


def test_a_bulk_import_is_one_activity_entry(admin, tenant):
    program = tenant.program(program_name="Imported")
    csv_text = "entity_type,first_name,last_name\n" + "".join(f"individual,Ada,Lee{i}\n" for i in range(3))
    r = tenant.api.client.post(f"/api/v1/programs/{program['uuid']}/entities/bulk", data=csv_text,
                               content_type="text/csv", headers={"Authorization": f"Bearer {tenant.api.secret}"})
    assert r.status_code == 201
    html = text(admin.get("/dashboard"))
    assert html.count("imported 3 entities into") == 1
    assert "Lee0" not in html  # no entry per row


def test_an_admin_can_unarchive_an_entity(admin, analyst, tenant, app):
    program = tenant.program()
    entity = tenant.entity(program["uuid"])
    note = tenant.api.post(f"/entities/{entity['uuid']}/notes", json={"note_text": "Before archiving"}).get_json()
    assert tenant.api.post(f"/entities/{entity['uuid']}/archive").status_code == 200
    page = text(analyst.get(f"/entities/{entity['uuid']}"))
    assert "An administrator can unarchive it." in page and "/unarchive" not in page
    assert analyst.post(f"/entities/{entity['uuid']}/unarchive").status_code == 403
    page = text(admin.get(f"/entities/{entity['uuid']}"))
    assert f"/entities/{entity['uuid']}/unarchive" in page
    r = admin.post(f"/entities/{entity['uuid']}/unarchive")
    assert r.status_code == 302
    shown = tenant.api.get(f"/entities/{entity['uuid']}").get_json()["data"]
    assert shown["archived_at"] is None
    assert tenant.api.get(f"/notes/{note['data']['uuid']}").get_json()["data"]["archived_at"] is None
    from sqlalchemy import select

    from app.core.models import AuditLog
    from app.extensions import db
    with app.app_context():
        actions = list(db.session.scalars(select(AuditLog.action).where(AuditLog.target_type == "entity")))
    assert "entity.unarchived" in actions


def test_note_edits_keep_their_history(app, analyst, tenant):
    p = tenant.program()
    e = tenant.entity(p["uuid"], first_name="Jane", last_name="Citizen")
    r = analyst.htmx_post(f"/entities/{e['uuid']}/notes", {"note_text": "First draft"})
    note_uuid = re.search(r'id="note-([0-9a-f-]{36})"', text(r)).group(1)
    analyst.htmx_post(f"/notes/{note_uuid}", {"note_text": "Second draft"})
    analyst.htmx_post(f"/notes/{note_uuid}", {"note_text": "Final text"})
    html = text(analyst.get(f"/notes/{note_uuid}/history"))
    assert "2 edits" in html
    revisions = re.findall(r'data-testid="note-revision">.*?<p class="note-text">([^<]*)</p>', html, re.S)
    assert revisions == ["Second draft", "First draft"]  # newest first: the text each edit replaced
    assert analyst.email in html
    assert 'data-testid="note-current">Final text<' in html


def test_times_show_in_the_profile_zone_with_utc_on_hover(app, admin, tenant):
    tenant.program(program_name="Zoned")
    r = admin.post("/profile/time-zone", {"time_zone": "Mars/Olympus"})
    assert r.status_code == 422 and "“Mars/Olympus” is not a time zone." in text(r)
    assert admin.post("/profile/time-zone", {"time_zone": "Asia/Kolkata"}).status_code == 302
    html = text(admin.get("/dashboard"))
    m = re.search(r'<time datetime="([^"]+)Z" title="([^"]+) UTC">([^<]*)<span class="muted">(\d\d:\d\d) IST</span>',
                  html)
    assert m, html[html.find("<table"):][:1500]
    from datetime import datetime, timedelta
    utc = datetime.fromisoformat(m.group(1))
    assert m.group(4) == (utc + timedelta(hours=5, minutes=30)).strftime("%H:%M")


def test_times_follow_the_browser_zone_without_a_profile_setting(admin, tenant):
    tenant.program(program_name="Zoned")
    admin.client.set_cookie("tz", "America/New_York")
    html = text(admin.get("/dashboard"))
    assert re.search(r'<span class="muted">\d\d:\d\d E[SD]T</span>', html)
    admin.client.set_cookie("tz", "Not/AZone")
    assert re.search(r'<span class="muted">\d\d:\d\d UTC</span>', text(admin.get("/dashboard")))


