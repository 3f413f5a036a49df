"""One vocabulary (issue 18 §3): the check page, the PDF report and the report e-mail say the same words for the
same check: labels for check types, subject keys, options and their values, one score format, one word per result
status, and one formatter for config values (the default `pep_countries: []` is every jurisdiction everywhere)."""
from __future__ import annotations

import html
import re

from sqlalchemy import select

from app.extensions import db
from tests.checks.conftest import fresh_index_holder, save_lists  # noqa: F401 (fixtures)
from tests.checks.test_reports import pdf_text
from tests.portal.conftest import text


def _screened(app, tenant, work):
    save_lists(app)
    program = tenant.program(program_name="Retail", report_emails=["mlro@example.com"])
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                           birth_date="1961-03-14")
    launch = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                             json={"check_types": ["pep_sanction_check"]}).get_json()["data"]
    work()
    return launch


def _words(markup: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def test_the_check_page_shows_labels_not_codes(app, tenant, admin, work):
    launch = _screened(app, tenant, work)
    page = text(admin.get(f"/checks/{launch['uuid']}"))
    config = _words(page[page.index('data-testid="check-config"'):].split("</dl>")[0])
    subject = _words(page[page.index('data-testid="check-subject"'):].split("</dl>")[0])
    assert "PEP countries All jurisdictions" in config and "Sanctions countries AU, CA, NZ, GB, US" in config
    assert "Search type Medium search" in config and "Similarity threshold 80%" in config
    assert "Extended result (all record details) Yes" in config
    assert "Date of birth 1961-03-14" in subject and "First name Bartholomew" in subject
    words = _words(page)
    assert "100%" in words and "Medium search" in words
    assert "PEP & Sanctions Complete Warning" in words  # the check's outcome: one word, as in the PDF
    for code in ("Pep countries", "Dob ", "medium_search", "medium search", "Alert "):
        assert code not in words, code


def test_the_pdf_report_says_the_same_words(app, tenant, work, tmp_path):
    launch = _screened(app, tenant, work)
    flat = " ".join(pdf_text(tenant.api.get(f"/checks/{launch['uuid']}/pdf").data, tmp_path).split())
    for expected in ("Check PEP & Sanctions · entity check", "Search type Medium search",
                     "Similarity threshold 80%", "PEP countries All jurisdictions",
                     "Sanctions countries AU, CA, NZ, GB, US", "Date of birth 1961-03-14",
                     "1. Bartholomew QUENNEVILLE · score 100% · FAIL", "outcome WARNING", "name score 100%"):
        assert expected in flat, expected
    sections = flat.split(" Events (")[0]  # the events' part is pdf/_event.html's (events and notes)
    for code in ("medium_search", "Pep countries", "score 1.00", "pep countries none", "Dob "):
        assert code not in sections, code


def test_the_report_email_says_the_same_words(app, tenant, work):
    _screened(app, tenant, work)
    from app.notify.models import ReportEmail
    with app.app_context():
        email = db.session.scalar(select(ReportEmail))
        body, subject = email.body, email.subject
    assert subject.endswith("Bartholomew Quenneville (PEP & Sanctions)")
    assert "The PEP & Sanctions check" in body and "QUENNEVILLE (100%)" in body and "(score" not in body
    assert "  Search type: Medium search" in body and "  PEP countries: All jurisdictions" in body
    assert "  Similarity threshold: 80%" in body
    assert "pep_sanction_check" not in body and "1.00" not in body


def test_the_ledger_names_the_check_type_by_its_label(app, tenant, admin, work):
    launch = _screened(app, tenant, work)
    reasons = [e["reason"] for e in tenant.api.get("/credit/ledger").get_json()["data"]]
    assert f"PEP & Sanctions {launch['check_number']}" in reasons
    assert f"PEP &amp; Sanctions {launch['check_number']}" in text(admin.get("/credit"))


def test_the_hit_says_which_rule_paired_each_name_part_in_the_subjects_order(app, tenant, admin, work):
    """Issue 23: the explanation lists the name parts in the order of the subject's name, says which rule
    aligned each ("nickname of") with its weight, and agrees with the table beside it: a qualifier that
    changed nothing is not "+0 points"."""
    from tests.checks.conftest import sanctioned

    listed = sanctioned()
    listed.countries = ["gb"]  # a country that matches: no effect on the score (only a conflict counts)
    save_lists(app, [listed])
    program = tenant.program(program_name="Retail")
    entity = tenant.entity(program["uuid"], first_name="Bart", last_name="Quenneville", address_country="GB")
    launch = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                             json={"check_types": ["pep_sanction_check"]}).get_json()["data"]
    work()
    page = text(admin.get(f"/checks/{launch['uuid']}"))
    table = page[page.index('data-testid="compare"'):].split("</table>")[0]
    words = _words(table)
    assert "bart bartholomew" in words and "nickname of" in words, words
    assert words.index("bart bartholomew") < words.index("quenneville quenneville")  # the subject's order
    assert 'data-testid="part-rule"' in table and "weight" in words
    explained = _words(page[page.index("How the score was reached"):].split("</details>")[0])
    assert "+0 points" not in explained and "country: no effect" in explained, explained
