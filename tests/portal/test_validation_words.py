"""One wording for both doors: the portal shows the API's validation messages, every one of them at once, never
the validation library's text (issue 18)."""
from __future__ import annotations

import html

from app.core.errors import Invalid
from tests.portal.conftest import text

TOO_LONG = "Must be at most 255 characters (300 given)."


def test_the_entity_form_speaks_like_the_api_and_shows_every_error(admin, tenant):
    program = tenant.program()
    body = {"entity_type": "individual", "first_name": "J" * 300, "last_name": "C" * 300,
            "email1": "not-an-address"}
    api = tenant.api.post(f"/programs/{program['uuid']}/entities", json=body).get_json()
    assert api["errors"]["first_name"] == [TOO_LONG] and api["errors"]["last_name"] == [TOO_LONG]
    page = admin.post(f"/programs/{program['uuid']}/entities/new", body)
    assert page.status_code == 422
    shown = html.unescape(text(page))
    assert shown.count(TOO_LONG) == 2  # both fields, at once
    assert api["errors"]["email1"][0] in shown
    assert "should" not in shown.lower()  # "String should have at most 255 characters"


def test_one_line_refusals_carry_every_message(app):
    from app.portal.base import error_text
    assert error_text(Invalid(errors={"note": [TOO_LONG]})) == TOO_LONG
    both = error_text(Invalid(errors={"note_text": [TOO_LONG], "status": ["“x” is not allowed."]}))
    assert both == f"Note text: {TOO_LONG} Status: “x” is not allowed."
    assert error_text(Invalid("Nothing to update.")) == "Nothing to update."


def test_the_sign_in_form_speaks_like_the_api(client):
    from tests.factories import csrf_from
    token = csrf_from(text(client.get("/login")))
    page = text(client.post("/login", data={"email": "x" * 330 + "@example.com", "password": "p",
                                            "csrf_token": token}))
    assert "Must be at most 320 characters." in page and "Field cannot be longer" not in page
