"""The entities list's "Screen now": select entities (or the whole program), see the cost before launching, one
launch, then the run's page with its progress and the events it raised; refusals shown on the page, nothing
written; a viewer may not launch."""
from __future__ import annotations

import re
import subprocess

from tests.checks.conftest import lists  # noqa: F401 - the invented lists
from tests.monitors.test_monitor_runs import PEP, balance, program_with


def test_select_see_the_cost_launch_and_follow_the_run(app, tenant, admin, work, lists):  # noqa: F811
    p, hit, clean = program_with(tenant, n_clean=2)
    listing = admin.get(f"/programs/{p['uuid']}").get_data(as_text=True)
    assert 'data-testid="screen-selected"' in listing and f'value="{hit["uuid"]}" form="screen-form"' in listing
    price = tenant.api.get("/credit").get_json()["data"]["prices"][PEP]
    page = admin.get(f"/programs/{p['uuid']}/screen?entity={hit['uuid']}&entity={clean[0]['uuid']}")
    body = page.get_data(as_text=True)
    assert page.status_code == 200 and "Screen 2 entities now" in body
    assert re.search(rf'data-testid="cost-{PEP}">{2 * price:,} credits', body)
    assert admin.get(f"/programs/{p['uuid']}/screen?all=1").get_data(as_text=True).count("Screen 3 entities") >= 1
    # nothing selected: back to the list with a word
    assert admin.get(f"/programs/{p['uuid']}/screen").status_code == 302
    before = balance(tenant)
    r = admin.post(f"/programs/{p['uuid']}/screen", {"check_type": PEP, "entity": [hit["uuid"], clean[0]["uuid"]]})
    assert r.status_code == 302 and "/runs/" in r.headers["Location"]
    run_page = r.headers["Location"]
    assert 'hx-trigger="load delay:1s"' in admin.get(run_page).get_data(as_text=True)  # polls while it runs
    work()
    done = admin.get(run_page).get_data(as_text=True)
    assert "hx-trigger" not in done and "2 of 2" in done and "1 — review them" in done
    assert before - balance(tenant) == 2 * price
    run_uuid = run_page.rsplit("/", 1)[1]
    inbox = admin.get(f"/?run={run_uuid}&status=all").get_data(as_text=True)
    assert 'data-testid="run-filter"' in inbox and "Quenneville" in inbox
    runs = admin.get(f"/programs/{p['uuid']}/runs").get_data(as_text=True)
    assert run_uuid in runs and "One-off" in runs
    # the evidence on the entity's page and in its history PDF, also for the entity with no match
    tenant.api.post(f"/programs/{p['uuid']}/monitors", json={"monitor_name": "Nightly watch", "monitor_check_type": PEP,
                                                             "status": "active", "schedule": "every_day"})
    clean_page = admin.get(f"/entities/{clean[0]['uuid']}").get_data(as_text=True)
    evidence = clean_page[clean_page.index('data-testid="entity-screenings"'):]
    assert run_uuid in evidence and "No match" in evidence
    monitoring = clean_page[clean_page.index('data-testid="entity-monitoring"'):]
    assert "Nightly watch" in monitoring and 'data-testid="last-screened"><span class="muted">Never' not in monitoring
    assert 'data-testid="last-screened"><span class="muted">Never' in admin.get(f"/entities/{clean[1]['uuid']}").get_data(as_text=True)
    pdf = admin.get(f"/entities/{hit['uuid']}/history.pdf")
    text = subprocess.run(["pdftotext", "-", "-"], input=pdf.get_data(), capture_output=True, check=True).stdout
    text = " ".join(text.decode().split())
    assert "Screened by runs (1)" in text and "One-off screening" in text and "why new match" in text.lower(), text


def test_refusals_are_shown_and_write_nothing(app, tenant, admin, viewer, other_tenant, lists):
    p, hit, clean = program_with(tenant, n_clean=1)
    foreign = other_tenant.entity(other_tenant.program()["uuid"], first_name="Ada", last_name="Lovelace")
    r = admin.post(f"/programs/{p['uuid']}/screen", {"check_type": PEP, "entity": [hit["uuid"], foreign["uuid"]]})
    assert r.status_code == 422 and "not live entities of this program" in r.get_data(as_text=True)
    assert tenant.api.get(f"/programs/{p['uuid']}/runs").get_json()["meta"]["total"] == 0
    assert viewer.post(f"/programs/{p['uuid']}/screen", {"check_type": PEP, "all": "1"}).status_code == 403
    other_program = other_tenant.program()
    assert admin.get(f"/programs/{other_program['uuid']}/screen?all=1").status_code == 404
    with app.app_context():
        from app.accounts.models import Account
        from app.accounts.services import cli_actor
        from app.billing.services import adjust
        from app.extensions import db
        actor = cli_actor(db.session.get(Account, tenant.account_id))
        adjust(actor, -balance(tenant), "test: empty")
        db.session.commit()
    page = admin.get(f"/programs/{p['uuid']}/screen?all=1").get_data(as_text=True)
    assert "more than the balance" in page
    r = admin.post(f"/programs/{p['uuid']}/screen", {"check_type": PEP, "all": "1"})
    assert r.status_code == 422 and "Insufficient credit" in r.get_data(as_text=True)
    assert tenant.api.get(f"/programs/{p['uuid']}/runs").get_json()["meta"]["total"] == 0
