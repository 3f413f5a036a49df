"""Monitors in a real browser: create a monitor from the program, run it, watch its progress complete without a
reload, and open an event it raised, which says why it exists. Jobs run on a real RQ worker (`work`)."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.test_review_loop import shots  # noqa: F401 (fixture)
from tests.checks.conftest import fresh_index_holder, save_lists  # noqa: F401 (fixtures)
from tests.factories import PASSWORD


def test_create_run_watch_progress_and_open_an_event_with_its_reason(app, page, sign_in, tenant, work, shots):
    save_lists(app)
    program = tenant.program(program_name="Monitored customers")
    tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville", birth_date="1961-03-14")
    for first, last in (("Ottoline", "Featherstonehaugh"), ("Peregrine", "Wolstenholme")):
        tenant.entity(program["uuid"], first_name=first, last_name=last)
    sign_in(tenant.email, PASSWORD)
    page.goto(f"/programs/{program['uuid']}")
    page.get_by_test_id("program-monitors").click()
    page.get_by_test_id("new-monitor").click()
    page.get_by_label("Name").fill("Nightly PEP and sanctions")
    page.get_by_label("Schedule").select_option("every_day")
    shots(page, "m1-new-monitor")
    page.get_by_test_id("save-monitor").click()
    expect(page.locator(".flash-success")).to_contain_text("Monitor “Nightly PEP and sanctions” created")
    expect(page.locator("h1")).to_contain_text("Nightly PEP and sanctions")
    page.get_by_test_id("run-now").click()
    card = page.get_by_test_id("run-card")
    expect(card).to_contain_text("0 of 3 entities screened")
    page.evaluate("window.__noReload = 'still here'")
    shots(page, "m2-run-pending")
    work()
    expect(card).to_contain_text("Runs", timeout=10000)  # the current run has ended: the card shows the history
    expect(page.get_by_test_id("runs-table")).to_contain_text("Complete")
    assert page.evaluate("window.__noReload") == "still here"
    shots(page, "m3-run-complete")
    page.get_by_test_id("runs-table").get_by_role("link", name="1", exact=True).click()
    expect(page.get_by_test_id("inbox-table")).to_contain_text("Bartholomew")
    expect(page.get_by_label("Why raised")).to_be_visible()
    expect(page.get_by_test_id("run-filter")).to_contain_text("one run")
    shots(page, "m4a-inbox-of-the-monitor")
    page.get_by_test_id("inbox-table").locator("a[data-open]").first.click()
    expect(page.get_by_test_id("event-reason")).to_contain_text("a new match")
    shots(page, "m4-event-reason")
    page.goto(f"/programs/{program['uuid']}/monitors")
    expect(page.get_by_test_id("monitors-table")).to_contain_text("Nightly PEP and sanctions")
    expect(page.get_by_test_id("monitors-table")).to_contain_text("Every day")
    shots(page, "m5-program-monitors")


def test_screen_selected_entities_now_see_the_cost_and_follow_the_run(app, page, sign_in, tenant, work, shots):
    save_lists(app)
    program = tenant.program(program_name="Imported customers")
    hit = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville", birth_date="1961-03-14")
    tenant.entity(program["uuid"], first_name="Ottoline", last_name="Featherstonehaugh")
    tenant.entity(program["uuid"], first_name="Peregrine", last_name="Wolstenholme")
    sign_in(tenant.email, PASSWORD)
    page.goto(f"/programs/{program['uuid']}")
    page.get_by_label("Select Bartholomew Quenneville").check()
    page.get_by_label("Select Ottoline Featherstonehaugh").check()
    expect(page.locator("[data-selected-count]")).to_have_text("2 selected")
    shots(page, "s1-entities-selected")
    page.get_by_test_id("screen-selected").click()
    expect(page.locator("h1")).to_contain_text("Screen 2 entities now")
    expect(page.get_by_test_id("screen-form")).to_contain_text("credits")
    shots(page, "s2-screen-cost")
    page.get_by_test_id("screen-confirm").click()
    card = page.get_by_test_id("run-card")
    expect(card).to_contain_text("0 of 2 entities screened")
    page.evaluate("window.__noReload = 'still here'")
    work()
    expect(page.get_by_test_id("run-screened")).to_contain_text("2 of 2", timeout=10000)
    assert page.evaluate("window.__noReload") == "still here"
    expect(page.get_by_test_id("run-events")).to_contain_text("1 — review them")
    shots(page, "s3-run-complete")
    page.goto(f"/entities/{hit['uuid']}")
    expect(page.get_by_test_id("entity-screenings")).to_contain_text("One-off screening")
    expect(page.get_by_test_id("entity-monitoring")).not_to_contain_text("Never")
    shots(page, "s4-entity-screenings")
    page.goto(f"/programs/{program['uuid']}/runs")
    expect(page.get_by_test_id("runs-table")).to_contain_text("One-off")
    shots(page, "s5-program-runs")
    page.get_by_test_id("runs-table").get_by_role("link", name="1", exact=True).click()
    expect(page.get_by_test_id("run-filter")).to_contain_text("one run")
    expect(page.get_by_test_id("inbox-table")).to_contain_text("Bartholomew")
    shots(page, "s6-inbox-of-the-run")
