"""Names in any script print in the check report: the PDF embeds fonts covering CJK, Arabic, Cyrillic, Hebrew,
Thai and Devanagari (Debian Noto, installed by `make run` / `make test`), so no name prints as empty boxes."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.checks.conftest import save_lists
from tests.checks.test_reports import pdf_text

# (first name, last name, the font it prints in): DejaVu has Latin, Greek, Cyrillic, Arabic and Hebrew; Noto the rest.
NAMES = [("小明", "王", "Noto-Sans-CJK-SC"), ("محمد", "الرشيد", "DejaVu-Sans"), ("Иван", "Петров", "DejaVu-Sans"),
         ("דוד", "כהן", "DejaVu-Sans"), ("สมชาย", "ใจดี", "Noto-Sans-Thai"), ("राहुल", "शर्मा", "Noto-Sans-Devanagari")]


def pdf_fonts(data: bytes, tmp_path) -> str:
    assert shutil.which("pdffonts"), "pdffonts (poppler-utils) is needed: make system-deps"
    path = tmp_path / "fonts.pdf"
    path.write_bytes(data)
    return subprocess.run(["pdffonts", str(path)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("first_name, last_name, font", NAMES)
def test_a_name_in_any_script_prints_in_an_embedded_font(app, tenant, work, tmp_path, first_name, last_name, font):
    save_lists(app)
    program = tenant.program()
    entity = tenant.entity(program["uuid"], first_name=first_name, last_name=last_name)
    launch = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                             json={"check_types": ["pep_sanction_check"]}).get_json()["data"]
    work()
    data = tenant.api.get(f"/checks/{launch['uuid']}/pdf").data
    fonts = pdf_fonts(data, tmp_path)
    rows = [line.split() for line in fonts.splitlines()[2:]]
    assert all(row[-5] == "yes" for row in rows), fonts  # every font embedded
    assert font in {row[0].split("+")[-1] for row in rows}, fonts
    text = pdf_text(data, tmp_path)
    # read back as written (pdftotext reorders Devanagari's vowel signs: its first name only)
    expected = first_name if font == "Noto-Sans-Devanagari" else f"{first_name} {last_name}"
    assert expected in text, text
