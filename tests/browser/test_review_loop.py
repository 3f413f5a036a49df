"""The review loop in a real browser, as an analyst: launch a check from the entity page and watch it complete
without a reload, open the hit side by side, triage in the inbox with the keyboard, bulk-close three events with
one note, find the notes and the status history, and download the check's PDF and read it back.

Jobs run on a real RQ worker (`work`, in the test's thread) while the live server answers the browser. Every
screen is photographed into SCREENSHOT_DIR (a temporary folder unless set; `docs/screenshots` for the README)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.checks.conftest import fresh_index_holder, save_lists  # noqa: F401 (fixtures)
from tests.factories import PASSWORD


@pytest.fixture
def shots(tmp_path):
    folder = Path(os.environ.get("SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)

    def take(page, name: str) -> Path:
        path = folder / f"{name}.png"
        page.screenshot(path=str(path), full_page=False)
        return path
    return take


def _events(tenant, **filters) -> list[dict]:
    query = "&".join(f"filter[{k}]={v}" for k, v in filters.items())
    return tenant.api.get(f"/events?per_page=100&{query}").get_json()["data"]


def test_the_review_loop(app, page, sign_in, tenant, work, shots, tmp_path):
    save_lists(app)
    program = tenant.program(program_name="Retail onboarding")
    subject = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                            birth_date="1961-03-14", reference_number="CUST-9")
    others = [tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                            reference_number=f"CUST-{n}") for n in range(1, 5)]
    for other in others:  # four events already waiting in the inbox
        r = tenant.api.post(f"/entities/{other['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
        assert r.status_code == 202
    work()
    assert len(_events(tenant)) == 4

    # 1. Launch from the entity page; the check appears at once and completes without a reload.
    sign_in(tenant.email, PASSWORD)
    page.goto(f"/entities/{subject['uuid']}")
    page.evaluate("window.__noReload = 'still here'")
    page.get_by_label("PEP & Sanctions").check()
    expect(page.locator("[data-cost]")).to_have_text("1")
    shots(page, "01-entity-run-checks")
    page.get_by_test_id("run-checks").click()
    checks = page.get_by_test_id("entity-checks")
    expect(checks).to_contain_text("PEP & Sanctions")
    expect(checks).to_have_attribute("data-polling", "")  # polling while it runs
    work()
    expect(checks.locator("[data-check-status=complete]")).to_be_visible()
    expect(checks).not_to_have_attribute("data-polling", "")  # and stops once it has ended
    expect(page.locator("#entity-events")).to_contain_text("Sanctions match")
    assert page.evaluate("window.__noReload") == "still here"
    page.evaluate("window.scrollTo(0, 0)")
    shots(page, "02-entity-check-complete")

    # 2. The hit, side by side with the subject.
    page.locator("#entity-events a").first.click()
    compare = page.get_by_test_id("compare").first
    expect(compare).to_contain_text("1961-03-14")
    expect(compare).to_contain_text("exact match")
    expect(compare).to_contain_text("quenneville")
    shots(page, "03-event-hit-side-by-side")

    # 3. The inbox: keyboard triage.
    page.get_by_role("complementary").get_by_role("link", name="Events inbox").click()
    expect(page.get_by_test_id("inbox-table")).to_be_visible()
    expect(page.get_by_test_id("tab-open")).to_contain_text("5")
    shots(page, "04-inbox")
    page.wait_for_load_state()
    page.evaluate("window.__noReload = 'inbox'")  # from here on: triage, bulk and the event pages in place
    page.locator("body").press("j")
    expect(page.locator("tr.is-focused")).to_have_count(1)
    number = page.locator("tr.is-focused").get_attribute("data-number")
    page.keyboard.press("i")
    expect(page.locator(f'tr[data-number="{number}"] [data-status=investigating]')).to_be_visible()
    page.keyboard.press("d")  # a sanctions hit is strong: "d" asks for the reason first
    reason = page.get_by_role("dialog", name=f"Reason for dismissing {number}")
    expect(reason).to_be_visible()
    shots(page, "05a-dismiss-needs-a-reason")
    reason.get_by_label("Reason").fill("Different date of birth.")
    reason.get_by_role("button", name="Dismiss").click()
    expect(page.locator(f'tr[data-number="{number}"] [data-status=closed_dismissed]')).to_be_visible()
    expect(page.locator("tr.is-focused")).not_to_have_attribute("data-number", number)  # moved on
    expect(page.get_by_test_id("tab-closed")).to_contain_text("1")  # the counts follow
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    shots(page, "05-keyboard-help")
    page.keyboard.press("Escape")
    noted = page.locator("tr.is-focused").get_attribute("data-number")
    page.keyboard.press("n")  # a note on the focused event, from the inbox
    page.get_by_role("dialog", name=f"Add a note to {noted}").get_by_label("Note").fill("Asked for a passport copy.")
    page.get_by_role("dialog").get_by_role("button", name="Add note").click()
    expect(page.locator(f'tr[data-number="{noted}"]')).to_contain_text("1 note")
    expect(page.get_by_role("dialog")).to_be_hidden()
    page.locator(f'tr[data-number="{noted}"] [data-note-open]').click()  # the same with the button
    page.get_by_role("dialog").get_by_label("Note").fill("Passport received.")
    page.get_by_role("dialog").get_by_role("button", name="Add note").click()
    expect(page.locator(f'tr[data-number="{noted}"]')).to_contain_text("2 notes")

    # 4. Bulk: three events, one status, one note, one transaction.
    rows = page.locator("tr[data-event-row]:not(.row-closed)")
    chosen = [rows.nth(i).get_attribute("data-number") for i in range(3)]
    for i in range(3):
        rows.nth(i).locator("[data-select-row]").check()
    expect(page.locator("[data-selected-count]")).to_have_text("3 selected")
    page.get_by_label("Set status").select_option("closed_error")
    page.get_by_label("Note for every selected event").fill("Test records, screened by mistake.")
    shots(page, "06-bulk-selection")
    page.get_by_test_id("bulk-apply").click()
    expect(page.locator(".flash-success")).to_contain_text("3 events set to Error with a note")
    closed = _events(tenant, status="closed_error")
    assert sorted(e["event_number"] for e in closed) == sorted(chosen)
    for event in closed:
        notes = tenant.api.get(f"/events/{event['uuid']}").get_json()["data"]["notes"]
        assert [n["note_text"] for n in notes][-1] == "Test records, screened by mistake."
    assert page.evaluate("window.__noReload") == "inbox"

    # 5. The dismissed event: its notes and status history, and the decision keys on the event page.
    page.get_by_test_id("tab-closed").click()
    page.locator(f'tr[data-number="{number}"] [data-open]').click()
    history = page.get_by_test_id("status-history")
    expect(history).to_contain_text("Investigating")
    expect(history).to_contain_text("Dismissed")
    expect(history).to_contain_text("“Different date of birth.”")  # the decision's reason, with the change
    page.keyboard.press("n")
    page.get_by_label("Add a note").fill("Passport copy filed.")
    page.get_by_role("button", name="Add note").click()
    expect(page.get_by_test_id("event-notes")).to_contain_text("Passport copy filed.")
    assert page.evaluate("window.__noReload") == "inbox"
    shots(page, "07-event-notes-history")
    assert not page.js_errors

    # 6. The check's PDF, read back.
    check_uuid = tenant.api.get(f"/entities/{subject['uuid']}/checks").get_json()["data"][0]["uuid"]
    page.goto(f"/checks/{check_uuid}")
    shots(page, "08-check-page")
    with page.expect_download() as download:
        page.get_by_test_id("download-pdf").click()
    pdf = tmp_path / "report.pdf"
    download.value.save_as(pdf)
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert "Check report" in text and "Bartholomew Quenneville" in text and "QUENNEVILLE" in text
    assert not page.js_errors


def test_inbox_and_event_page_work_at_390_pixels(app, browser, live_server, tenant, work, shots):
    save_lists(app)
    program = tenant.program(program_name="Mobile")
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                           birth_date="1961-03-14")
    tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
    work()
    context = browser.new_context(base_url=live_server, viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto("/login")
    page.get_by_label("E-mail").fill(tenant.email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width  # no sideways scrolling of the page (the table scrolls inside its box)
    shots(page, "09-inbox-390px")
    dismiss = page.locator("tr[data-event-row] [data-key=d]").first
    dismiss.scroll_into_view_if_needed()
    dismiss.click()  # a strong hit: the reason first
    page.get_by_role("dialog").get_by_label("Reason").fill("Different date of birth.")
    page.get_by_role("dialog").get_by_role("button", name="Dismiss").click()
    expect(page.locator("tr[data-event-row] [data-status=closed_dismissed]")).to_be_visible()
    page.locator("tr[data-event-row] [data-open]").first.click()
    expect(page.get_by_test_id("compare").first).to_be_visible()
    wide = page.evaluate("""() => Array.from(document.querySelectorAll('main *')).filter(e => e.getBoundingClientRect().right > 392)
        .slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))""")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390, wide
    shots(page, "10-event-390px")
    context.close()


def test_adhoc_credit_search_and_report_emails_screens(app, page, sign_in, tenant, work, shots):
    save_lists(app)
    program = tenant.program(program_name="Retail", report_emails=["alerts@example.com"])
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                           reference_number="CUST-77")
    tenant.entity(program["uuid"], first_name="Anna", last_name="Quennell")
    tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
    work()
    sign_in(tenant.email, PASSWORD)
    # An adhoc check through the form, completed by the worker, shown with its hit.
    page.get_by_role("link", name="Adhoc checks").click()
    page.get_by_label("First name").fill("Bartholomew")
    page.get_by_label("Last name").fill("Quenneville")
    page.locator("#run-checks").get_by_label("PEP & Sanctions").check()
    expect(page.locator("#run-checks [data-cost]")).to_have_text("1")
    shots(page, "11-adhoc-form")
    page.get_by_test_id("run-checks").click()
    expect(page.get_by_role("heading", name="PEP & Sanctions Adhoc", level=1)).to_be_visible()
    work()
    expect(page.get_by_test_id("hit")).to_be_visible()  # the page polled until the check ended
    page.get_by_role("link", name="Adhoc checks").first.click()
    expect(page.get_by_test_id("adhoc-checks")).to_contain_text("1 potential match")
    # Credit: the ledger links to the checks.
    page.get_by_role("link", name="Credit").click()
    expect(page.get_by_test_id("ledger")).to_contain_text("PEP & Sanctions CHK-")
    shots(page, "12-credit")
    page.get_by_test_id("ledger").get_by_role("link", name="check").first.click()
    expect(page.get_by_test_id("check-section").first).to_be_visible()
    # Search from the header with "/": a reference opens the entity.
    page.locator("body").press("/")
    page.keyboard.type("CUST-77")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Bartholomew Quenneville")).to_be_visible()
    page.get_by_label("Search entities, checks and events").fill("quenn")
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="Search")).to_be_visible()
    expect(page.locator("main")).to_contain_text("Anna Quennell")
    shots(page, "13-search")
    # Report e-mails (admins).
    page.get_by_role("link", name="Report e-mails").click()
    expect(page.get_by_test_id("report-emails")).to_contain_text("alerts@example.com")
    shots(page, "14-report-emails")
    assert not page.js_errors


def test_a_particle_counted_with_its_name_reads_so_on_the_hit(app, page, sign_in, tenant, work, shots):
    """Engine 2.5.0 weighs a particle left over with its name as nothing ("abd al" of "Abd al-Karim"): the
    hit says so instead of calling it unmatched."""
    from app.screening.records import ListRecord
    record = ListRecord(id="s-9", schema="Person", caption="Hasan Abd al-Karim NASRALLAHI", topics=["sanction"],
                        sanctions=[{"programs": ["TEST-2"], "authority": "Test Treasury"}])
    save_lists(app, sanctions_records=[record])
    program = tenant.program(program_name="Particles")
    entity = tenant.entity(program["uuid"], first_name="Hasan", last_name="Nasrallahi")
    assert tenant.api.post(f"/entities/{entity['uuid']}/checks",
                           json={"check_types": ["pep_sanction_check"]}).status_code == 202
    work()
    sign_in(tenant.email, PASSWORD)
    page.goto(f"/entities/{entity['uuid']}")
    page.locator("#entity-events a").first.click()
    compare = page.get_by_test_id("compare").first
    rows = compare.locator("tr.part")
    expect(rows.filter(has_text="abd")).to_contain_text("with the next part")
    expect(rows.filter(has_text="karim")).to_contain_text("unmatched")      # the name itself still counts
    expect(rows.filter(has_text="nasrallahi")).to_contain_text("100%")
    compare.scroll_into_view_if_needed()
    shots(page, "11-event-particle-with-its-name")
