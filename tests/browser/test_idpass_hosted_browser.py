"""The hosted IDPass flow in Chromium with a fake camera (`--use-fake-device-for-media-stream`,
`--use-file-for-fake-video-capture`), on a phone-sized screen: consent -> passport photographed by the camera -> MRZ
read -> selfie answering the liveness challenge -> complete; the analyst then sees `passed` in the portal and
downloads a certificate that the public verify page confirms. Another walk replays a printed photo turned before
the camera and ends in `review`, never `passed`.

The camera of a Chromium process plays one file, so each walk uses two processes: one whose camera films the
passport, one whose camera films the person answering the challenge the page shows (the challenge is kept across
reloads, so the second process sees the same one; the session cookie goes along)."""
from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.browser.fakecam import document_clip, flat_photo_clip, head_turn_clip, write_y4m
from tests.idchecks.test_id_checks_api import add_oac
from tests.idpass.images import face, passport_jpeg

PHONE = {"width": 390, "height": 844}
PERSON = {"first_name": "Harriet", "last_name": "Wombatson", "birth_date": "1990-02-14"}
CONFIG = {"link_validity_days": 7, "check_liveness": True, "document_1": ["passport", "licence"],
          "require_id_photo": False, "return_verification_images": True, "delivery_method": "manual"}


def camera(browser, clip):
    """A Chromium process whose camera plays `clip` (a .y4m file)."""
    return browser.browser_type.launch(
        executable_path=CHROMIUM, headless=True,
        args=CHROMIUM_ARGS + ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                              f"--use-file-for-fake-video-capture={clip}"])


def phone(process, live_server, state=None):
    context = process.new_context(base_url=live_server, viewport=PHONE, is_mobile=True, has_touch=True,
                                  storage_state=state, permissions=["camera"])
    context.set_default_timeout(30_000)
    tab = context.new_page()
    tab.errors = []
    tab.on("pageerror", lambda exc: tab.errors.append(str(exc)))
    tab.on("console", lambda m: tab.errors.append(m.text) if m.type == "error" and (
        "Content Security Policy" in m.text or "Refused to" in m.text) else None)
    return context, tab


@pytest.fixture
def idpass(app, tenant):
    add_oac(app, tenant)
    entity = tenant.entity(tenant.program()["uuid"], **PERSON)
    r = tenant.api.post(f"/entities/{entity['uuid']}/idpasses", json={
        "data": {"first_name": "Harriet", "last_name": "Wombatson", "dob": "1990-02-14"}, "config": CONFIG})
    assert r.status_code == 202, r.get_json()
    d = r.get_json()["data"]
    return d["uuid"], "/v/" + d["idpass_link"].rsplit("/v/", 1)[1]


def walk_to_the_selfie(browser, live_server, link, tmp_path):
    """Welcome, consent, the passport filmed and read: returns the session and the challenge shown."""
    clip = write_y4m(tmp_path / "passport.y4m", document_clip(passport_jpeg(holder=face("obama2.jpg")), seconds=3,
                                                              size=(1280, 960)), fps=10)
    process = camera(browser, clip)
    context, tab = phone(process, live_server)
    try:
        tab.goto(link)
        assert "Bar Bank of Wombats" in tab.content()
        tab.get_by_role("button", name="Start").click()
        tab.get_by_label("I agree").check()
        tab.get_by_role("button", name="Continue").click()
        tab.get_by_role("button", name="Australian passport").click()
        tab.get_by_role("button", name="Use the camera").click()
        tab.get_by_role("button", name="Take the photo").click()
        tab.wait_for_selector("text=Check your details")
        assert tab.get_by_label("Last name").input_value() == "Wombatson"  # read from the MRZ
        assert tab.get_by_label("Date of birth").input_value() == "1990-02-14"
        tab.get_by_role("button", name="Confirm and verify").click()
        tab.wait_for_selector("[data-liveness]")
        turns = json.loads(tab.get_attribute("[data-liveness]", "data-turns"))
        assert not tab.errors, tab.errors
        return context.storage_state(), turns
    finally:
        context.close()
        process.close()


def answer_the_challenge(browser, live_server, link, state, clip):
    process = camera(browser, clip)
    context, tab = phone(process, live_server, state)
    try:
        tab.goto(link)
        tab.get_by_role("button", name="Start the camera").click()
        tab.wait_for_url(re.compile(r".*/v/[^/]+$"), wait_until="load")
        tab.wait_for_function("() => !document.querySelector('[data-liveness]') "
                              "|| document.querySelector('[data-liveness]').dataset.result", timeout=60_000)
        result = tab.get_attribute("[data-liveness]", "data-result") if tab.query_selector("[data-liveness]") \
            else "moved on"
        tab.wait_for_load_state("load")
        assert not tab.errors, tab.errors
        return result, tab.content(), context.storage_state()
    finally:
        context.close()
        process.close()


def finish(browser, live_server, link, state):
    process = browser.browser_type.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
    context, tab = phone(process, live_server, state)
    try:
        tab.goto(link)
        tab.get_by_role("button", name="Send").click()
        tab.wait_for_selector("text=you are done")
    finally:
        context.close()
        process.close()


def test_a_person_is_verified_on_their_phone_and_the_analyst_certifies_it(
        app, browser, live_server, tenant, idpass, tmp_path, sign_in, page):
    uuid, link = idpass
    state, turns = walk_to_the_selfie(browser, live_server, link, tmp_path)
    clip = write_y4m(tmp_path / "live.y4m", head_turn_clip(face("obama.jpg"), turns, fps=10, lead_s=1.0, tail_s=5,
                                                           pose_ms=250), fps=10)
    result, html, state = answer_the_challenge(browser, live_server, link, state, clip)
    d = tenant.api.get(f"/idpasses/{uuid}").get_json()["data"]
    live = [e for e in d["log"] if e["event"].startswith("liveness")]
    assert live and live[-1]["event"] == "liveness_passed", (turns, live, result)
    finish(browser, live_server, link, state)
    d = tenant.api.get(f"/idpasses/{uuid}").get_json()["data"]
    assert (d["status"], d["verification_status"]) == ("complete", "passed"), d["reasons"]

    # the analyst: the portal shows passed, the certificate downloads, the public page confirms it
    sign_in(tenant.email, tenant.password)
    page.goto(f"/idpasses/{uuid}")
    assert "passed" in page.inner_text("main").lower()
    pdf = tenant.api.get(f"/idpasses/{uuid}/pdf")
    assert pdf.status_code == 200 and pdf.data[:4] == b"%PDF"
    (tmp_path / "certificate.pdf").write_bytes(pdf.data)
    text = subprocess.run(["pdftotext", str(tmp_path / "certificate.pdf"), "-"], capture_output=True,
                          text=True, check=True).stdout
    code = re.search(r"\b([0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4})\b", text).group(1)
    page.goto(f"/verify/{code}")
    assert "genuine" in page.inner_text("main").lower() and "Wombatson" not in page.content()
    page.set_input_files("input[type=file]", str(tmp_path / "certificate.pdf"))
    page.locator("form button[type=submit]").last.click()
    assert "unaltered" in page.inner_text("main").lower()


def test_a_printed_photo_turned_before_the_camera_does_not_pass(app, browser, live_server, tenant, idpass, tmp_path):
    uuid, link = idpass
    state, turns = walk_to_the_selfie(browser, live_server, link, tmp_path)
    clip = write_y4m(tmp_path / "printed.y4m", flat_photo_clip(face("obama.jpg"), turns, fps=10, lead_s=1.0,
                                                               tail_s=5, pose_ms=250), fps=10)
    for attempt in range(3):
        result, html, state = answer_the_challenge(browser, live_server, link, state, clip)
        d = tenant.api.get(f"/idpasses/{uuid}").get_json()["data"]
        events = [e["event"] for e in d["log"] if e["event"].startswith("liveness")]
        assert events == ["liveness_failed"] * (attempt + 1), events
    finish(browser, live_server, link, state)
    d = tenant.api.get(f"/idpasses/{uuid}").get_json()["data"]
    assert d["status"] == "complete" and d["verification_status"] in ("review", "failed"), d
    assert "LIVENESS_FAILED" in d["reasons"]
