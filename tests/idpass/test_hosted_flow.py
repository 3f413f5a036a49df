"""The hosted flow at the link, through HTTP (the browser walk with a fake camera is tests/browser/): no account,
an unknown or tampered link is a clear 404 page, every step in order, the real MRZ reader, face match and liveness
on a generated passport and real face photos, the verdict's rules (passed, review after a flat photo, failed after
three unverified attempts), expired and cancelled links, images that are not images."""
from __future__ import annotations

import io
import json
import re

import pytest
from sqlalchemy import select

from app.extensions import db
from tests.factories import csrf_from
from tests.idchecks.test_id_checks_api import add_oac
from tests.idpass.images import face, passport_jpeg
from tests.idpass.test_idpass_api import body

PERSON = {"first_name": "Harriet", "last_name": "Wombatson", "birth_date": "1990-02-14"}


@pytest.fixture
def verified(app, tenant):
    add_oac(app, tenant)
    return tenant


def launch(tenant, **cfg):
    entity = tenant.entity(tenant.program()["uuid"], **PERSON)
    r = tenant.api.post(f"/entities/{entity['uuid']}/idpasses", json=body(**cfg))
    assert r.status_code == 202, r.get_json()
    d = r.get_json()["data"]
    return d["uuid"], "/v/" + d["idpass_link"].rsplit("/v/", 1)[1]


class Person:
    """A phone's browser: its own cookie jar, no account."""

    def __init__(self, app, link):
        self.client = app.test_client()
        self.link = link

    def page(self, expect=200):
        r = self.client.get(self.link)
        assert r.status_code == expect, r.get_data(as_text=True)[:500]
        return r.get_data(as_text=True)

    def post(self, path, data=None, expect=303, **kw):
        html = self.page()
        r = self.client.post(self.link + path, data={"csrf_token": csrf_from(html), **(data or {})}, **kw)
        assert r.status_code == expect, r.get_data(as_text=True)[:800]
        return r

    def upload(self, path, image: bytes, expect=303):
        return self.post(path, {"photo": (io.BytesIO(image), "photo.jpg")}, expect=expect,
                         content_type="multipart/form-data")

    def selfie(self, frames):
        html = self.page()
        data = {"csrf_token": csrf_from(html), "ts": [str(ts) for ts, _ in frames],
                "frame": [(io.BytesIO(b), f"f{i}.jpg") for i, (_, b) in enumerate(frames)]}
        r = self.client.post(self.link + "/selfie", data=data, content_type="multipart/form-data")
        assert r.status_code == 200, r.get_data(as_text=True)[:500]
        return r.get_json()

    def turns(self):
        return json.loads(re.search(r"data-turns='([^']+)'", self.page()).group(1))

    def pass_passport(self, photo: bytes):
        """Open the link, consent, and pass document step 1 with a passport whose MRZ names PERSON."""
        self.post("/start")
        self.post("/consent", {"agree": "yes"})
        self.post("/document_1/type", {"document_type": "passport"})
        self.upload("/document_1/photo", photo)
        self.post("/document_1/confirm", {**PERSON, "gender": "F", "document_number": "PA1234567"})


def show(tenant, uuid):
    return tenant.api.get(f"/idpasses/{uuid}").get_json()["data"]


def test_unknown_and_tampered_links_are_a_clear_404_page(app, verified):
    uuid, link = launch(verified)
    client = app.test_client()
    for bad in ("/v/nothing-here", link[:-4] + ("AAAA" if not link.endswith("AAAA") else "BBBB"), f"/v/{uuid}"):
        r = client.get(bad)
        text = r.get_data(as_text=True)
        assert r.status_code == 404 and "This link is not valid" in text and "Traceback" not in text
    r = client.get(link)
    assert r.status_code == 200 and "Bar Bank of Wombats" in r.get_data(as_text=True)
    assert "no-referrer" in r.headers["Referrer-Policy"] and "script-src 'self'" in r.headers["Content-Security-Policy"]
    assert show(verified, uuid)["status"] == "new"  # looking at the welcome page is not opening


def test_a_person_walks_the_flow_and_passes(app, verified):
    uuid, link = launch(verified, document_1=["passport", "licence"], require_id_photo=True,
                        id_photo_purpose="on your staff card")
    me = Person(app, link)
    assert "on your staff card" in me.page()
    me.post("/start")
    assert show(verified, uuid)["status"] == "opened"
    r = me.post("/consent", {}, expect=400)  # not ticked
    assert "Tick the box" in r.get_data(as_text=True)
    me.post("/consent", {"agree": "yes"})
    d = show(verified, uuid)
    assert d["status"] == "in_progress" and d["consent"]["wording_version"] and "Bar Bank of Wombats" in \
        d["consent"]["wording"] and d["consent_given_at"]

    me.post("/document_1/type", {"document_type": "medicare"}, expect=400)  # not an allowed type
    me.post("/document_1/type", {"document_type": "passport"})
    r = me.upload("/document_1/photo", b"GIF89a not really", expect=400)
    assert "Only JPEG and PNG photos are accepted." in r.get_data(as_text=True)
    me.upload("/document_1/photo", passport_jpeg(holder=face("obama2.jpg")))
    page = me.page()
    assert 'value="Wombatson"' in page and 'value="PA1234567"' in page  # read from the MRZ, to confirm
    me.post("/document_1/confirm", {**PERSON, "gender": "F", "document_number": "PA1234567"})
    d = show(verified, uuid)
    doc = d["document_summary"]["document_1"]
    assert doc["status"] == "verified" and doc["mrz_valid"] is True and doc["changes"] == []
    assert doc["fields"]["document_number"].endswith("567") and "PA1234567" not in json.dumps(d)

    from app.vision.synthetic import head_turn_frames
    turns = me.turns()
    assert me.turns() == turns  # a reload keeps the challenge
    answer = me.selfie(head_turn_frames(face("obama.jpg"), turns, start_ms=1_000))
    assert answer["result"] == "passed", answer
    face_result = show(verified, uuid)["document_summary"]["document_1"]["face"]
    assert face_result["matched"] is True and face_result["similarity"] >= face_result["threshold"]

    me.upload("/id-photo", face("obama3.jpg"))
    me.post("/finish")
    d = show(verified, uuid)
    assert (d["status"], d["completed"], d["verification_status"], d["reasons"]) == ("complete", True, "passed", [])
    assert d["requested_identity_mismatch"] is False and d["validation_summary"]["liveness"]["passed"] is True
    assert {i["type"] for i in d["images"]} == {"document_1", "selfie", "id_photo"}
    img = verified.api.get(d["images"][0]["url"])
    assert img.status_code == 200 and img.mimetype in ("image/jpeg", "image/png") and img.data[:2] == b"\xff\xd8"
    assert verified.api.get(f"/id-checks/{d['id_check']['uuid']}").get_json()["data"]["outcome"] == "pass"
    assert "you are done" in me.page()
    with app.app_context():
        from app.idpass.models import IdPassImage
        stored = db.session.scalars(select(IdPassImage)).all()
        blob = open(app.config["STORAGE_PATH"] + "/" + stored[0].storage_key, "rb").read()
        assert blob[:2] != b"\xff\xd8"  # encrypted at rest


def test_a_flat_photo_turned_in_front_of_the_camera_ends_in_review(app, verified):
    from app.vision.synthetic import flat_photo_frames
    uuid, link = launch(verified, document_1=["passport"])
    me = Person(app, link)
    me.pass_passport(passport_jpeg(holder=face("obama2.jpg")))
    results = []
    for attempt in range(3):
        results.append(me.selfie(flat_photo_frames(face("obama.jpg"), me.turns(), seed=attempt,
                                                   start_ms=attempt * 20_000))["result"])
    assert results == ["retry", "retry", "done_failed"]
    me.post("/finish")
    d = show(verified, uuid)
    assert (d["status"], d["verification_status"]) == ("complete", "review")
    assert "LIVENESS_FAILED" in d["reasons"] and d["validation_summary"]["liveness"]["attempts"] == 3


def test_three_unverified_attempts_end_the_idpass_failed(app, verified):
    uuid, link = launch(verified, document_1=["medicare"], check_liveness=False)
    me = Person(app, link)
    me.post("/start")
    me.post("/consent", {"agree": "yes"})
    me.post("/document_1/type", {"document_type": "medicare"})
    me.upload("/document_1/photo", face("biden.jpg"))
    card = {"first_name": "Harriet", "last_name": "sandbox-n", "birth_date": "1990-02-14",
            "card_number": "2123456701", "individual_reference_number": "1", "card_type": "green",
            "card_expiry": "2030-01"}
    r = me.post("/document_1/confirm", {**card, "card_number": "12"}, expect=400)  # a field error, not an attempt
    assert "field-errors" in r.get_data(as_text=True)
    me.post("/document_1/confirm", card)
    me.post("/document_1/confirm", card)
    assert show(verified, uuid)["status"] == "in_progress"
    me.post("/document_1/confirm", card)
    d = show(verified, uuid)
    assert (d["status"], d["verification_status"]) == ("failed", "failed") and "DOCUMENT_NOT_VERIFIED" in d["reasons"]
    assert d["document_summary"]["document_1"]["attempts"] == 3
    assert "has ended" in me.page()


def test_expired_and_cancelled_links_say_so(app, verified):
    from datetime import timedelta
    uuid, link = launch(verified)
    with app.app_context():
        from app.core.transactions import commit
        from app.idpass.models import IdPass
        row = db.session.scalar(select(IdPass).where(IdPass.uuid == uuid))
        row.expires_at -= timedelta(days=30)
        commit()
    r = app.test_client().get(link)
    assert r.status_code == 410 and "expired" in r.get_data(as_text=True)
    assert show(verified, uuid)["status"] == "expired"  # ended by the visit, before the scheduler
    uuid2, link2 = launch(verified)
    with app.app_context():
        from app.accounts.models import Account
        from app.accounts.services import cli_actor
        from app.core.transactions import commit
        from app.idpass import services
        services.cancel(cli_actor(db.session.get(Account, verified.account_id)), uuid2)
        commit()
    r = app.test_client().get(link2)
    assert r.status_code == 410 and "cancelled" in r.get_data(as_text=True)


def test_the_programs_retention_deletes_the_images_and_sealed_data_but_keeps_the_record(app, verified):
    from datetime import timedelta
    uuid, link = launch(verified, document_1=["passport"], check_liveness=False)
    me = Person(app, link)
    me.pass_passport(passport_jpeg())
    me.post("/finish")
    assert show(verified, uuid)["images"]
    with app.app_context():
        from app.core.transactions import commit
        from app.core.types import utcnow
        from app.idpass import retention
        from app.idpass.models import IdPass
        assert retention.enforce()["idpasses_purged"] == 0  # 12 months have not passed
        row = db.session.scalar(select(IdPass).where(IdPass.uuid == uuid))
        row.completed_at = utcnow() - timedelta(days=400)
        key = row.images[0].storage_key
        commit()
        assert retention.enforce()["idpasses_purged"] == 1
        commit()
        assert retention.enforce()["idpasses_purged"] == 0
        import os
        assert not os.path.exists(os.path.join(app.config["STORAGE_PATH"], key))
    d = show(verified, uuid)
    assert d["images"] == [] and d["verification_status"] == "passed" and d["log"][-1]["event"] == "retention"
    assert d["document_summary"]["document_1"]["status"] == "verified"


def test_a_forged_burst_is_a_clear_400_never_a_500(app, verified):
    uuid, link = launch(verified, document_1=["passport"])
    me = Person(app, link)
    me.pass_passport(passport_jpeg())
    token = csrf_from(me.page())
    for stamps, frames in ((["inf"], [b"x"]), (["1", "2"], [b"x"]), (["12"], [b"GIF89a"])):
        r = me.client.post(link + "/selfie", content_type="multipart/form-data", data={
            "csrf_token": token, "ts": stamps, "frame": [(io.BytesIO(f), "f.jpg") for f in frames]})
        assert r.status_code == 400 and r.get_json()["message"], (stamps, r.status_code)
    assert show(verified, uuid)["status"] == "in_progress"


def test_the_hosted_pages_are_rate_limited_per_address(app, verified, monkeypatch):
    uuid, link = launch(verified)
    monkeypatch.setitem(app.config, "HOSTED_RATE_LIMIT", "3 per minute")
    client = app.test_client()
    answers = [client.get(link[:-4] + f"{i:04d}").status_code for i in range(3)]
    assert answers == [404, 404, 404]
    throttled = client.get(link)
    assert throttled.status_code == 429  # guessing tokens by volume stops, the real one too, per address
    assert throttled.headers["Retry-After"] == "60" and throttled.headers["Cache-Control"] == "no-store"
    page = throttled.get_data(as_text=True)
    assert "Please wait a minute" in page and "what you have done so far is kept" in page
    assert "Sign in" not in page and "/login" not in page  # the person's page, not the portal's
    other = app.test_client()
    assert other.get(link, environ_base={"REMOTE_ADDR": "10.1.2.3"}).status_code == 200
