"""The portal in a real browser (Debian's Chromium through Playwright): login, creating an entity through
the form, a note added through htmx without a page reload, and the CSV upload's per-row error report."""
import os
from pathlib import Path

from playwright.sync_api import expect

from tests.factories import PASSWORD


def test_login_and_logout(page, tenant):
    page.goto("/programs")
    assert "/login" in page.url
    page.get_by_label("E-mail").fill(tenant.email)
    page.get_by_label("Password").fill("wrong-password-1")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("E-mail or password is incorrect.")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Programs", level=1)).to_be_visible()  # back to ?next=/programs
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    assert not page.js_errors


def test_create_an_entity_through_the_form(page, sign_in, tenant):
    program = tenant.program(program_name="Retail onboarding")
    sign_in(tenant.email, PASSWORD)
    page.get_by_role("link", name="Programs").first.click()
    page.get_by_role("link", name="Retail onboarding").click()
    page.get_by_role("link", name="Add entity").first.click()
    # Switching the type swaps the form through htmx and keeps the shared fields already typed.
    page.get_by_label("Reference number").fill("CUST-77")
    page.get_by_role("link", name="Business").click()
    expect(page.get_by_label("Business name")).to_be_visible()
    expect(page.get_by_label("Reference number")).to_have_value("CUST-77")
    page.get_by_role("link", name="Individual").click()
    expect(page.get_by_label("First name")).to_be_visible()
    # A validation error from the API schema appears next to its field.
    page.get_by_role("button", name="Add individual").click()
    expect(page.locator("#last_name-error")).to_contain_text("a person known by a single name needs only one")
    page.get_by_label("First name").fill("Jane")
    page.get_by_label("Last name").fill("Citizen")
    page.get_by_label("Date of birth").fill("1980-02-01")
    page.locator("label", has_text="PEP").click()
    page.get_by_label("Risk level").select_option("high")
    page.get_by_role("button", name="Add individual").click()
    expect(page.get_by_role("heading", name="Jane Citizen")).to_be_visible()
    expect(page.get_by_role("status").first).to_contain_text("added")
    data = tenant.api.get(f"/programs/{program['uuid']}/entities").get_json()["data"]
    assert [(d["entity_name"], d["reference_number"], d["risk_level"], d["flags"], d["birth_date"]) for d in data] == \
        [("Jane Citizen", "CUST-77", "high", ["pep"], "1980-02-01")]
    assert not page.js_errors


def test_add_a_note_through_htmx_without_a_page_reload(page, sign_in, tenant):
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name="Jane", last_name="Citizen")
    sign_in(tenant.email, PASSWORD)
    page.goto(f"/entities/{entity['uuid']}")
    page.evaluate("window.__noReload = 'still here'")
    page.get_by_label("Add a note").fill("   ")
    page.get_by_role("button", name="Add note").click()
    expect(page.locator("#new-note-error")).to_be_visible()  # the 422 fragment was swapped in
    page.get_by_label("Add a note").fill("Passport verified against DVS.")
    page.get_by_role("button", name="Add note").click()
    expect(page.locator("[data-testid=note]")).to_contain_text("Passport verified against DVS.")
    expect(page.get_by_test_id("notes-count")).to_have_text("1")
    expect(page.get_by_label("Add a note")).to_have_value("")
    # edit in place
    page.get_by_role("button", name="Edit note").click()
    editor = page.locator("[data-testid=note-editing] textarea")
    editor.fill("Passport and licence verified.")
    page.get_by_role("button", name="Save note").click()
    expect(page.locator("[data-testid=note]")).to_contain_text("Passport and licence verified.")
    assert page.evaluate("window.__noReload") == "still here"  # no full page load happened
    notes = tenant.api.get(f"/notes?filter[entity_uuid]={entity['uuid']}").get_json()["data"]
    assert [n["note_text"] for n in notes] == ["Passport and licence verified."]
    assert not page.js_errors


def test_csv_upload_shows_the_bad_row(page, sign_in, tenant, tmp_path):
    program = tenant.program(program_name="Bulk")
    csv_file = tmp_path / "people.csv"
    csv_file.write_text("entity_type,first_name,last_name,birth_date\n"
                        "individual,Ann,Lee,1990-01-01\n"
                        "individual,,,1985-13-40\n")
    sign_in(tenant.email, PASSWORD)
    page.goto(f"/programs/{program['uuid']}")
    page.get_by_role("link", name="Import CSV").first.click()
    page.get_by_label("CSV file").set_input_files(str(csv_file))
    page.get_by_role("button", name="Import file").click()
    report = page.get_by_test_id("import-errors")
    expect(report).to_be_visible()
    row = report.locator("tbody tr", has_text="last_name")
    expect(row.locator("td").nth(0)).to_have_text("3")
    expect(row.locator("td").nth(2)).to_have_text("Give a first name or a last name (a person known by a single name "
                                                  "needs only one).")
    expect(report.locator("tbody tr", has_text="birth_date").locator("td").nth(0)).to_have_text("3")
    assert tenant.api.get(f"/programs/{program['uuid']}/entities").get_json()["meta"]["total"] == 0
    # the fixed file goes through
    csv_file.write_text("entity_type,first_name,last_name\nindividual,Ann,Lee\nindividual,Bob,Stone\n")
    page.get_by_label("CSV file").set_input_files(str(csv_file))
    page.get_by_role("button", name="Import file").click()
    expect(page.get_by_role("status").first).to_contain_text("Imported 2 entities")
    expect(page.get_by_test_id("entity-table")).to_contain_text("Bob Stone")
    assert not page.js_errors


def test_entity_filters_swap_the_table_and_keep_the_url(page, sign_in, tenant):
    program = tenant.program()
    tenant.entity(program["uuid"], first_name="Alice", last_name="High", risk_level="high")
    tenant.entity(program["uuid"], first_name="Bob", last_name="Low", risk_level="low")
    sign_in(tenant.email, PASSWORD)
    page.goto(f"/programs/{program['uuid']}")
    page.evaluate("window.__noReload = 1")
    page.get_by_label("Risk").select_option("high")
    expect(page.get_by_test_id("entity-table")).not_to_contain_text("Bob Low")
    expect(page.get_by_test_id("entity-table")).to_contain_text("Alice High")
    assert "risk=high" in page.url
    page.get_by_label("Search", exact=True).fill("nobody")
    expect(page.locator("#entity-table")).to_contain_text("No entities match")
    assert "q=nobody" in page.url
    assert page.evaluate("window.__noReload") == 1
    assert not page.js_errors


def test_wide_screens_show_the_navigation_without_a_menu_button(page, sign_in, tenant):
    sign_in(tenant.email, PASSWORD)
    nav = page.get_by_role("complementary", name="Main")
    expect(nav.get_by_role("link", name="Recently deleted")).to_be_visible()
    expect(page.get_by_role("button", name="Menu")).to_be_hidden()


def test_back_and_forward_after_htmx_swaps_raise_no_error(page, sign_in, tenant):
    program = tenant.program()
    tenant.entity(program["uuid"], first_name="Alice", last_name="High", risk_level="high")
    tenant.entity(program["uuid"], first_name="Bob", last_name="Low", risk_level="low")
    sign_in(tenant.email, PASSWORD)
    page.goto(f"/programs/{program['uuid']}")
    page.get_by_label("Risk").select_option("high")
    expect(page.get_by_test_id("entity-table")).not_to_contain_text("Bob Low")
    page.get_by_label("Risk").select_option("low")
    expect(page.get_by_test_id("entity-table")).not_to_contain_text("Alice High")
    page.go_back()
    expect(page.get_by_test_id("entity-table")).to_contain_text("Alice High")
    page.go_back()
    expect(page.get_by_test_id("entity-table")).to_contain_text("Bob Low")
    page.go_forward()
    expect(page.get_by_test_id("entity-table")).to_contain_text("Alice High")
    page.wait_for_timeout(300)
    assert not page.js_errors, page.js_errors


def test_narrow_screen_shows_the_content_first_with_a_collapsible_menu(browser, live_server, tenant, tmp_path):
    context = browser.new_context(base_url=live_server, viewport={"width": 390, "height": 844})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        program = tenant.program(program_name="Mobile review")
        page.goto("/login")
        page.get_by_label("E-mail").fill(tenant.email)
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url("**/")
        page.goto("/programs")
        heading = page.get_by_role("heading", name="Programs", level=1)
        expect(heading).to_be_visible()
        # the content starts within the first screen, under a compact bar; the navigation is folded away
        assert heading.bounding_box()["y"] < 120, heading.bounding_box()
        nav_link = page.get_by_role("link", name="Recently deleted")
        expect(nav_link).to_be_hidden()
        menu = page.get_by_role("button", name="Menu")
        expect(menu).to_have_attribute("aria-expanded", "false")
        page.screenshot(path=str(tmp_path / "narrow-closed.png"))
        menu.click()
        expect(nav_link).to_be_visible()
        expect(page.get_by_role("button", name="Close menu")).to_have_attribute("aria-expanded", "true")
        page.screenshot(path=str(tmp_path / "narrow-open.png"))
        nav_link.click()
        page.wait_for_url("**/deleted")
        expect(page.get_by_role("link", name="Recently deleted")).to_be_hidden()  # folded again on the new page
        assert program["uuid"]
        if os.environ.get("SCREENSHOTS_DIR"):
            for name in ("narrow-closed.png", "narrow-open.png"):
                (Path(os.environ["SCREENSHOTS_DIR"]) / name).write_bytes((tmp_path / name).read_bytes())
    finally:
        context.close()
    assert not errors, errors
