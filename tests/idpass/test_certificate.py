"""The IDPass certificate (issue 20 §5): refused before the end; issued once on the first request (code, file and
content hashes, a line of the timeline), then served as stored, byte for byte; the verdict, the requester, the
masked document number, the code and the content hash in the PDF; the images only when the launch asked for them
(and said to be gone after the retention); the account's own only. The public verification page (/verify/<code>):
genuine without revealing the content, a clear 404 for an unknown code, an uploaded file compared with the one
issued, and a per-address limit. The PDF renderer's `data:` images: JPEG and PNG only."""
from __future__ import annotations

import hashlib
import io
import re
import shutil
import subprocess

import pytest
from sqlalchemy import select

from app.extensions import db
from tests.factories import csrf_from
from tests.idchecks.test_id_checks_api import add_oac
from tests.idpass.finished import DESCRIPTIONS, finish
from tests.idpass.images import portrait_jpeg
from tests.idpass.test_idpass_api import body, launch

DESCRIPTION = DESCRIPTIONS["passed"]


@pytest.fixture
def verified(app, tenant):
    add_oac(app, tenant)
    return tenant


@pytest.fixture
def person(verified):
    return verified.entity(verified.program()["uuid"], first_name="Harriet", last_name="Wombatson",
                           birth_date="1990-02-14")


def pdf_text(data: bytes, tmp_path) -> str:
    assert shutil.which("pdftotext"), "pdftotext (poppler-utils) is needed: make system-deps"
    path = tmp_path / "certificate.pdf"
    path.write_bytes(data)
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True,
                          check=True).stdout


def pdf_images(data: bytes, tmp_path) -> int:
    path = tmp_path / "images.pdf"
    path.write_bytes(data)
    out = subprocess.run(["pdfimages", "-list", str(path)], capture_output=True, text=True, check=True).stdout
    return len(out.splitlines()[2:])  # two header lines, then one line per image


def pdf_pages(data: bytes, tmp_path) -> int:
    path = tmp_path / "pages.pdf"
    path.write_bytes(data)
    out = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))


def certificate_row(app, idpass_uuid):
    from app.idpass.models import IdPass
    with app.app_context():
        row = db.session.scalar(select(IdPass).where(IdPass.uuid == idpass_uuid))
        db.session.expunge(row)
        return row


def test_refused_before_the_end_then_issued_once_and_served_as_stored(app, verified, person, other_tenant,
                                                                      tmp_path):
    d = launch(verified, person["uuid"]).get_json()["data"]
    r = verified.api.get(f"/idpasses/{d['uuid']}/pdf")
    assert r.status_code == 409 and "new" in r.get_json()["message"]
    finish(app, d["uuid"])

    r = verified.api.get(f"/idpasses/{d['uuid']}/pdf")
    assert r.status_code == 200, r.get_data()[:300]
    assert r.mimetype == "application/pdf" and r.data.startswith(b"%PDF")
    check_number = d["id_check"]["check_number"]
    assert f'filename="idpass-certificate-{check_number}.pdf"' in r.headers["Content-Disposition"]
    assert pdf_pages(r.data, tmp_path) >= 1

    row = certificate_row(app, d["uuid"])
    assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{16}", row.certificate_code)  # normalised, Crockford base32
    assert row.certificate_sha256 == hashlib.sha256(r.data).hexdigest()
    assert row.certificate_key == f"idpass/{d['uuid']}/certificate.pdf" and row.certificate_issued_at
    assert [e["event"] for e in row.log].count("certificate_issued") == 1
    code = "-".join(row.certificate_code[i:i + 4] for i in range(0, 16, 4))

    text = pdf_text(r.data, tmp_path)
    flat = " ".join(text.split())
    assert "IDENTITY VERIFIED" in flat and DESCRIPTION[:60] in flat
    assert "Bar Bank of Wombats" in flat and "Australian passport" in flat
    assert "••••••567" in flat and "PA1234567" not in flat  # the masked number, never the clear one
    assert code in flat and row.certificate_content_sha256 in flat
    assert f"/verify/{code}" in flat and "0.91" in flat and "0.73" in flat
    assert "HARRLET" in flat  # the person's change, read and confirmed
    assert "idpass-2026-11" in flat and "consent given" in flat.lower()

    again = verified.api.get(f"/idpasses/{d['uuid']}/pdf")
    assert again.status_code == 200 and again.data == r.data  # served as stored: byte-identical
    assert [e["event"] for e in certificate_row(app, d["uuid"]).log].count("certificate_issued") == 1
    assert other_tenant.api.get(f"/idpasses/{d['uuid']}/pdf").status_code == 404

    with app.app_context():
        from app.core.storage import blob_storage
        stored = blob_storage().get(row.certificate_key)
        assert stored != r.data and b"%PDF" not in stored  # sealed at rest


def test_issued_in_the_background_when_the_idpass_ends(app, verified, person, work):
    """A worker issues the certificate once the end is committed, so the first download reads the stored file."""
    d = launch(verified, person["uuid"]).get_json()["data"]
    finish(app, d["uuid"])
    assert certificate_row(app, d["uuid"]).certificate_code is None  # queued, not yet run
    work()
    row = certificate_row(app, d["uuid"])
    assert row.certificate_code and row.certificate_sha256
    issued = [e for e in row.log if e["event"] == "certificate_issued"]
    assert len(issued) == 1 and "when the IDPass ended" in issued[0]["message"]
    r = verified.api.get(f"/idpasses/{d['uuid']}/pdf")
    assert r.status_code == 200 and hashlib.sha256(r.data).hexdigest() == row.certificate_sha256
    assert [e["event"] for e in certificate_row(app, d["uuid"]).log].count("certificate_issued") == 1


def test_the_end_commits_when_the_certificate_cannot_be_queued(app, verified, person, monkeypatch, caplog):
    from app import jobs

    def down(*args, **kwargs):
        raise ConnectionError("Redis is down")

    monkeypatch.setattr(jobs, "enqueue_now", down)
    d = launch(verified, person["uuid"]).get_json()["data"]
    finish(app, d["uuid"])
    assert verified.api.get(f"/idpasses/{d['uuid']}").get_json()["data"]["status"] == "complete"
    assert "rendered on its first download" in caplog.text
    monkeypatch.undo()
    r = verified.api.get(f"/idpasses/{d['uuid']}/pdf")
    assert r.status_code == 200 and r.data.startswith(b"%PDF")


def test_images_only_when_the_launch_asked_and_the_certificate_survives_their_deletion(app, verified, person,
                                                                                       tmp_path):
    with_images = launch(verified, person["uuid"]).get_json()["data"]
    without = launch(verified, person["uuid"], body(return_verification_images=False)).get_json()["data"]
    for d in (with_images, without):
        finish(app, d["uuid"])
    shown = verified.api.get(f"/idpasses/{with_images['uuid']}/pdf")
    hidden = verified.api.get(f"/idpasses/{without['uuid']}/pdf")
    assert pdf_images(shown.data, tmp_path) == 2 and pdf_images(hidden.data, tmp_path) == 0
    assert len(shown.data) > len(hidden.data) + 20_000
    assert len(shown.data) < 1024 * 1024  # downscaled: well under the verify page's upload limit
    assert "without return_verification_images" in " ".join(pdf_text(hidden.data, tmp_path).split())

    # The images deleted under the data retention before the first request: issued without them, saying so.
    late = launch(verified, person["uuid"]).get_json()["data"]
    finish(app, late["uuid"])
    with app.app_context():
        from app.core.transactions import commit
        from app.idpass import images
        from app.idpass.models import IdPass
        images.purge(db.session.scalar(select(IdPass).where(IdPass.uuid == late["uuid"])))
        commit()
    r = verified.api.get(f"/idpasses/{late['uuid']}/pdf")
    assert r.status_code == 200 and pdf_images(r.data, tmp_path) == 0
    assert "deleted on" in pdf_text(r.data, tmp_path) and "data retention" in pdf_text(r.data, tmp_path)


def test_deleted_by_the_retention_it_is_issued_again_under_the_same_code(app, verified, person, client, tmp_path):
    d = launch(verified, person["uuid"]).get_json()["data"]
    finish(app, d["uuid"])
    first = verified.api.get(f"/idpasses/{d['uuid']}/pdf").data
    code = certificate_row(app, d["uuid"]).certificate_code
    with app.app_context():  # the data retention runs out: the images and the stored certificate file go
        from dateutil.relativedelta import relativedelta

        from app.core.transactions import commit
        from app.core.types import utcnow
        from app.idpass import retention
        assert retention.enforce(utcnow() + relativedelta(years=20))["idpasses_purged"] == 1
        commit()
    second = verified.api.get(f"/idpasses/{d['uuid']}/pdf")
    assert second.status_code == 200 and second.data != first and pdf_images(second.data, tmp_path) == 0
    row = certificate_row(app, d["uuid"])
    assert row.certificate_code == code and row.certificate_sha256 == hashlib.sha256(second.data).hexdigest()
    assert row.log[-1]["event"] == "certificate_reissued"
    assert "deleted on" in pdf_text(second.data, tmp_path)
    assert verified.api.get(f"/idpasses/{d['uuid']}/pdf").data == second.data
    page = client.get(f"/verify/{code}").get_data(as_text=True)
    assert row.certificate_sha256 in page and hashlib.sha256(first).hexdigest() in page  # both files, named
    # A copy of the first file still verifies, as the earlier file issued under this code.
    assert "identical to a certificate issued under this code" in upload(client, code, first)


def upload(client, code: str, data: bytes, name: str = "certificate.pdf") -> str:
    page = client.get(f"/verify/{code}")
    token = csrf_from(page.get_data(as_text=True))
    r = client.post(f"/verify/{code}", data={"csrf_token": token, "file": (io.BytesIO(data), name)},
                    content_type="multipart/form-data")
    assert r.status_code == 200, r.get_data(as_text=True)[:500]
    return " ".join(r.get_data(as_text=True).split())


def test_the_public_page_confirms_a_certificate_without_revealing_it(app, verified, person, client):
    d = launch(verified, person["uuid"]).get_json()["data"]
    finish(app, d["uuid"])
    pdf = verified.api.get(f"/idpasses/{d['uuid']}/pdf").data
    row = certificate_row(app, d["uuid"])
    code = "-".join(row.certificate_code[i:i + 4] for i in range(0, 16, 4))

    r = client.get(f"/verify/{code}")
    assert r.status_code == 200 and r.headers["Cache-Control"] == "no-store"
    html = " ".join(r.get_data(as_text=True).split())
    assert "A genuine certificate issued by Sentinel Screening on" in html and "Bar Bank of Wombats" in html
    assert row.certificate_sha256 in html and row.certificate_content_sha256 in html
    said = html.replace(row.certificate_sha256, "").replace(row.certificate_content_sha256, "").replace(code, "")
    for secret in ("Harriet", "HARRIET", "Wombatson", "WOMBATSON", "1990-02-14", "567", "passport", "passed",
                   "verified", "review", "failed", str(d["uuid"]), d["id_check"]["check_number"]):
        assert secret not in said, secret
    assert "http://" not in html and "https://" not in html and "<script" not in html  # nothing third-party

    # Typed loosely: lower case, no dashes, O for 0, I or L for 1; through the form, to the canonical address.
    loose = row.certificate_code.lower().replace("0", "o").replace("1", "l")
    assert client.get(f"/verify/{loose}").status_code == 200
    r = client.get(f"/verify?code={loose[:8]}-{loose[8:]}")
    assert r.status_code == 303 and r.headers["Location"].endswith(f"/verify/{code}")
    form = client.get("/verify")
    assert form.status_code == 200 and 'name="code"' in form.get_data(as_text=True)
    assert client.get("/verify?code=nonsense").status_code == 400

    wrong = "ZZZZ-ZZZZ-ZZZZ-ZZZZ" if row.certificate_code != "Z" * 16 else "YYYY-YYYY-YYYY-YYYY"
    for path in (f"/verify/{wrong}", "/verify/not-a-code", "/verify/" + "A" * 70):
        r = client.get(path)
        page = r.get_data(as_text=True)
        assert r.status_code == 404 and "No certificate has this code" in page, path
        assert "Traceback" not in page and "Sign in" not in page

    assert "Unaltered: identical to the certificate issued" in upload(client, code, pdf)
    altered = bytearray(pdf)
    altered[len(altered) // 2] ^= 0x01  # one byte changed
    assert "This file differs from the certificate issued under this code" in upload(client, code, bytes(altered))
    page = client.get(f"/verify/{code}")
    no_file = client.post(f"/verify/{code}", data={"csrf_token": csrf_from(page.get_data(as_text=True))},
                          content_type="multipart/form-data")
    assert no_file.status_code == 400 and "Choose the certificate" in no_file.get_data(as_text=True)
    assert client.post(f"/verify/{code}", data={"file": (io.BytesIO(pdf), "c.pdf")},
                       content_type="multipart/form-data").status_code == 400  # CSRF


def test_look_ups_are_limited_per_address(app, verified, person, client):
    d = launch(verified, person["uuid"]).get_json()["data"]
    finish(app, d["uuid"], verdict="failed", document_photos=[], selfie=False)
    assert verified.api.get(f"/idpasses/{d['uuid']}/pdf").status_code == 200
    code = certificate_row(app, d["uuid"]).certificate_code
    limit = int(app.config.get("VERIFY_RATE_LIMIT", "30 per minute").split()[0])
    statuses = [client.get(f"/verify/{code if i % 2 else 'ZZZZZZZZZZZZZZZZ'}").status_code for i in range(limit)]
    assert set(statuses) <= {200, 404} and 200 in statuses
    r = client.get(f"/verify/{code}")
    assert r.status_code == 429 and "Too many look-ups" in r.get_data(as_text=True)
    assert r.headers["Retry-After"]
    other = app.test_client()
    assert other.get(f"/verify/{code}", environ_base={"REMOTE_ADDR": "10.1.2.3"}).status_code == 200


def test_a_failed_verdict_reads_as_failed(app, verified, person, tmp_path):
    d = launch(verified, person["uuid"]).get_json()["data"]
    finish(app, d["uuid"], verdict="failed", document_photos=[], selfie=False)
    r = verified.api.get(f"/idpasses/{d['uuid']}/pdf")
    flat = " ".join(pdf_text(r.data, tmp_path).split())
    assert "NOT VERIFIED" in flat and "FACE_MISMATCH" in flat and "IDENTITY VERIFIED" not in flat


def test_the_renderer_takes_only_jpeg_and_png_data_images(tmp_path):
    import base64

    from app.core.pdf import data_uri, make_fetcher
    (tmp_path / "assets").mkdir()
    fetch = make_fetcher(tmp_path / "assets")
    jpeg, png = portrait_jpeg(), b"\x89PNG\r\n\x1a\n" + b"\0" * 16
    assert fetch.fetch(data_uri(jpeg, "image/jpeg")).read() == jpeg
    assert fetch.fetch(f"data:image/png;base64,{base64.b64encode(png).decode()}").read() == png
    svg = base64.b64encode(b"<svg xmlns='http://www.w3.org/2000/svg'/>").decode()
    for url in (f"data:image/svg+xml;base64,{svg}", "data:text/css,p{}", "data:image/jpeg,rawbytes",
                f"data:image/png;base64,{base64.b64encode(jpeg).decode()}",  # not what it says it is
                "data:image/jpeg;base64,@@@", f"data:text/html;base64,{svg}", "file:///etc/passwd"):
        with pytest.raises(ValueError):
            fetch.fetch(url)


def test_codes_are_typable_and_forgiving(app):
    from app.reports import CODE_ALPHABET, format_code, new_certificate_code, normalise_code
    codes = {new_certificate_code() for _ in range(200)}
    assert len(codes) == 200 and all(len(c) == 16 and set(c) <= set(CODE_ALPHABET) for c in codes)
    assert len(CODE_ALPHABET) == 32  # 16 characters of 5 bits: 80 bits
    code = "7KQ2M9XA4RB8PC3D"
    assert format_code(code) == "7KQ2-M9XA-4RB8-PC3D"
    for typed in ("7kq2-m9xa-4rb8-pc3d", " 7KQ2 M9XA 4RB8 PC3D ", "7KQ2M9XA4RB8PC3D", "7KQ2–M9XA–4RB8–PC3D"):
        assert normalise_code(typed) == code, typed
    assert normalise_code("O1IL" + "0" * 12) == "0111" + "0" * 12
    for bad in ("", None, "7KQ2-M9XA-4RB8", "7KQ2-M9XA-4RB8-PC3U", "7KQ2-M9XA-4RB8-PC3D-0", "x" * 100):
        assert normalise_code(bad) is None
