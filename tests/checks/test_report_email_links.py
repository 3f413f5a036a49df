"""The report e-mail links the portal's pages, which a person who clicks them can open (issue 18)."""
from __future__ import annotations

import email
import email.policy
import re

from tests.checks.conftest import save_lists


def test_the_report_email_links_the_portal_pages(app, tenant, factory, work, tmp_path):
    save_lists(app)
    program = tenant.program(report_emails=["compliance@example.com"])
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville")
    app.config.update(MAIL_SERVER=None, MAIL_OUTBOX_DIR=str(tmp_path), PUBLIC_BASE_URL="https://screening.test/")
    try:
        launch = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                                 json={"check_types": ["pep_sanction_check"]}).get_json()["data"]
        work()
    finally:
        app.config.update(MAIL_OUTBOX_DIR=None, PUBLIC_BASE_URL=None)
    [eml] = list(tmp_path.glob("*.eml"))
    body = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default).get_content()
    links = re.findall(r"https://screening\.test(/\S+)", body)
    assert f"/checks/{launch['uuid']}" in links and not any(link.startswith("/api/") for link in links)
    client = factory.login(tenant.email)
    for link in links:
        page = client.get(link)
        assert page.status_code == 200 and page.mimetype == "text/html", link


def test_links_are_written_as_portal_paths_and_made_absolute_when_sent():
    """The body is stored with the portal's paths (the service reads no configuration); the job's
    PUBLIC_BASE_URL makes them links, and without one they stay paths."""
    from app.notify.services import _absolute_links
    uuid_ = "0b9d4c1e-58a6-4a39-9d0f-3c3f7a1e2b44"
    body = f"- EVT-1: Jane\n  /events/{uuid_}\n\nCheck: /checks/{uuid_}\n\nNote: /checks/ is a path."
    sent = _absolute_links(body, "https://screening.test")
    assert f"  https://screening.test/events/{uuid_}" in sent and f"Check: https://screening.test/checks/{uuid_}" in sent
    assert "Note: /checks/ is a path." in sent
    assert _absolute_links(body, "") == body
