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
