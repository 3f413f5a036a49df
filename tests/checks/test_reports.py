"""The printable check report, read back with pdftotext (poppler-utils)."""
from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from tests.checks.conftest import save_lists


def pdf_text(data: bytes, tmp_path) -> str:
    assert shutil.which("pdftotext"), "pdftotext (poppler-utils) is needed: make system-deps"
    path = tmp_path / "report.pdf"
    path.write_bytes(data)
    return subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True,
                          check=True).stdout


def test_entity_check_report(app, tenant, work, tmp_path):
    save_lists(app)
    program = tenant.program(program_name="Retail onboarding")
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                           birth_date="1961-03-14")
    launch = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                             json={"check_types": ["pep_sanction_check"]}).get_json()["data"]
    work()
    event = tenant.api.get("/events").get_json()["data"][0]
    tenant.api.patch(f"/events/{event['uuid']}", json={"status": "closed_confirmed",
                                                       "note": "Confirmed against the passport."})
    r = tenant.api.get(f"/checks/{launch['uuid']}/pdf")
    assert r.status_code == 200 and r.mimetype == "application/pdf"
    assert r.headers["Content-Disposition"].startswith("attachment; filename=\"check-")
    text = pdf_text(r.data, tmp_path)
    flat = " ".join(text.split())
    for expected in ("Retail onboarding", "Bartholomew Quenneville", "PEP & Sanctions", "Medium search",
                     "test_sanctions (version v1)", "1. Bartholomew QUENNEVILLE · score 100%", "quenneville",
                     "TEST-1", "Confirmed match", "reason: “Confirmed against the passport.”",
                     "New → Confirmed match", "(API key)", "Page 1 of", "Content hash (SHA-256):"):
        assert expected in flat, expected
    assert re.search(r"Launched \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC by ", flat)
    digest = re.search(r"Content hash \(SHA-256\): ([0-9a-f]{64})", flat).group(1)
    again = " ".join(pdf_text(tenant.api.get(f"/checks/{launch['uuid']}/pdf").data, tmp_path).split())
    assert digest in again  # the same content, the same hash


def test_adhoc_report_and_scoping(app, tenant, other_tenant, work, tmp_path):
    launch = tenant.api.post("/adhoc-checks", json={"check_types": ["phone_check", "email_check"],
                                                    "data": {"phone": "+61 1900 654 321",
                                                             "email": "x@mailinator.com"}}).get_json()["data"]
    work()
    r = tenant.api.get(f"/adhoc-checks/{launch['uuid']}/pdf")
    assert r.status_code == 200
    flat = " ".join(pdf_text(r.data, tmp_path).split())
    assert "Phone Check" in flat and "Email Check" in flat and "premium rate" in flat
    assert "Events" not in flat  # adhoc checks raise none
    assert other_tenant.api.get(f"/adhoc-checks/{launch['uuid']}/pdf").status_code == 404
    assert tenant.api.get(f"/checks/{launch['uuid']}/pdf").status_code == 404


def test_the_renderer_fetches_only_bundled_assets(app, tmp_path):
    from app.core.pdf import make_fetcher
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "ok.css").write_text("p{}")
    fetch = make_fetcher(tmp_path / "assets")
    assert fetch.fetch("asset:ok.css").read() == b"p{}"
    for url in ("file:///etc/passwd", f"file://{secret}", "http://127.0.0.1:9/x", "asset:../secret.txt",
                "asset:/../../etc/passwd"):
        with pytest.raises(ValueError):
            fetch.fetch(url)
