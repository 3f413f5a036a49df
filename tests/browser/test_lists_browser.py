"""The Lists page in a real browser: the operator sees a held version stand out, opens the rejection's confirmation,
goes back, and accepts it."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.test_review_loop import shots  # noqa: F401 (fixture)
from tests.checks.conftest import fresh_index_holder  # noqa: F401 (fixture)
from tests.factories import PASSWORD
from tests.portal.test_lists_portal import LIST, _records, make_operator, publish


def test_the_operator_reviews_and_accepts_a_held_version(app, page, sign_in, tenant, shots):
    publish(app, LIST, _records(40), "v1")
    publish(app, LIST, _records(42), "v2")
    assert publish(app, LIST, _records(22, start=20), "v3").held
    make_operator(app, tenant)
    sign_in(tenant.email, PASSWORD)
    page.get_by_role("link", name="Screening lists").click()
    expect(page.locator("h1")).to_have_text("Screening lists")
    expect(page.get_by_test_id("held-note")).to_contain_text("v3 is not applied")
    expect(page.locator('tr[data-version="3"]')).to_contain_text("Held")
    shots(page, "l1-lists-held-version")
    page.get_by_role("link", name="Reject test_sanctions v3").click()
    expect(page.locator("h2")).to_contain_text("Reject test_sanctions v3?")
    shots(page, "l2-reject-confirmation")
    page.get_by_role("link", name="Cancel").click()
    page.get_by_role("button", name="Accept test_sanctions v3").click()
    expect(page.locator(".flash-success")).to_contain_text("test_sanctions v3 accepted and applied")
    expect(page.get_by_test_id("version-in-use")).to_have_text("v3")
    expect(page.get_by_test_id("held-note")).to_have_count(0)
    shots(page, "l3-accepted")
    page.set_viewport_size({"width": 390, "height": 844})
    shots(page, "l4-lists-390px")
    assert page.js_errors == []
