"""The check-type registry is the one list of check types: every other list reads it (issue 18 §1)."""
from __future__ import annotations

import subprocess
import sys
import typing
from pathlib import Path

import pytest

from app.providers import CHECK_TYPES, RunContext, Subject, provider_for
from app.providers.base import ResultRow, stable_id

ROOT = Path(__file__).resolve().parents[2]


def test_every_list_of_check_types_reads_the_registry():
    from app.accounts.models import Account
    from app.billing.models import DEFAULT_PRICES
    from app.checks.schemas import CheckType, LaunchConfig
    from app.portal.checkforms import check_type_choices
    names = CHECK_TYPES.names
    assert len(names) == 11 and names[0] == "pep_sanction_check"
    assert typing.get_args(CheckType) == names
    assert list(LaunchConfig.model_fields) == [e.name for e in CHECK_TYPES.entries() if e.config is not None]
    from app.providers.id_types import ID_TYPES
    from app.providers.id_types import IDPASS_PRICES
    assert DEFAULT_PRICES == {**{e.name: e.price for e in CHECK_TYPES.entries()},
                              **{e.name: e.price for e in ID_TYPES.entries()}, **IDPASS_PRICES}
    assert Account.__table__.c.enabled_check_types.default.arg(None) == list(names)
    offered = check_type_choices(list(names), {})
    assert [(c.check_type, c.name, c.hint) for c in offered][6] == (
        "banned_disqualified_persons", "Banned & Disqualified Persons", "Needs last name or full name")


def test_an_entry_says_what_the_check_type_needs_and_who_answers_it():
    pep = CHECK_TYPES["pep_sanction_check"]
    assert pep.label == "PEP & Sanctions" and pep.uses_index and pep.monitorable and pep.providers.ours
    assert pep.default_config()["similarity_threshold"] == "80" and pep.default_config()["pep_countries"] == []
    assert CHECK_TYPES["phone_check"].default_config() is None
    assert CHECK_TYPES.where(uses_index=True) == ("pep_sanction_check", "banned_disqualified_persons")
    assert {"pep_sanction_check", "banned_disqualified_persons"} <= set(CHECK_TYPES.where(monitorable=True))
    assert not {"phone_check", "email_check"} & set(CHECK_TYPES.where(monitorable=True))
    assert CHECK_TYPES.label("group") == "Group"
    assert provider_for("business_check", sandbox=False, settings={"ABR_GUID": "x"}).name == "abr"
    assert provider_for("business_check", sandbox=True).name == "sandbox"
    with pytest.raises(ValueError, match="unknown check type"):
        provider_for("tarot_reading", sandbox=True)


def test_the_registry_imports_without_the_database_or_the_domains_above_it():
    """accounts and billing read the registry at import time: it must not import them back (no cycle), nor
    the Flask extensions, nor a provider's libraries before a provider is built."""
    code = ("import sys; import app; before = set(sys.modules); import app.providers.registry; "
            "new = sorted(m for m in set(sys.modules) - before if m.startswith('app.')); print(' '.join(new))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.split()
    assert set(loaded) <= {"app.core", "app.core.errors", "app.core.schemas", "app.core.subject", "app.providers",
                           "app.providers.base", "app.providers.configs", "app.providers.registry"}, loaded


# ------------------------------------------------------------------ one Subject

def test_one_subject_for_the_engine_and_the_providers():
    from app.screening import engine
    assert engine.Subject is Subject
    subject = Subject.from_dict({"first_name": " Jane ", "last_name": "Citizen", "date_of_birth": "1970",
                                 "phone": "", "unknown": "x"})
    assert (subject.first_name, subject.dob, subject.phone) == ("Jane", "1970", None)
    assert engine.screened(subject) == {"full_name": None, "first_name": "Jane", "middle_name": None,
                                        "last_name": "Citizen", "dob": "1970", "business_name": None,
                                        "vessel_name": None, "address_country": None}


def test_the_adhoc_schema_and_form_take_the_subject_keys():
    from app.checks.schemas import AdhocSubject
    from app.core.subject import ADHOC_KEYS
    from app.portal.checkforms import ADHOC_CHOICES, ADHOC_FIELDS
    assert tuple(AdhocSubject.model_fields) == ADHOC_KEYS == tuple(k for k, _ in ADHOC_FIELDS)
    assert "schema" not in ADHOC_KEYS and dict(ADHOC_FIELDS)["dob"] == "Date of birth"
    assert dict(ADHOC_FIELDS)["nationality"] == "Nationality (ISO code)"
    assert ADHOC_CHOICES["business_number_type"][1] == ("au_abn", "ABN")


# ------------------------------------------------------------------ alert ids (issue 18 §4)

def test_every_alert_id_is_a_decimal_string_made_where_results_are_made():
    row = ResultRow("Vendor hit", "warning", ["MA-991", "7", "007", 12, str(2 ** 60)])
    assert all(i.isdigit() and int(i) < 2 ** 48 for i in row.alert_ids)
    assert row.alert_ids[0] == stable_id("alert id", "MA-991") == ResultRow("Again", "fail", ["MA-991"]).alert_ids[0]
    assert row.alert_ids[1:4] == ["7", "12"] + [stable_id("alert id", str(2 ** 60))]  # "007" is "7": once
    no_ids = ResultRow("Row without ids", "fail")
    assert no_ids.alert_ids == [stable_id("alert row", "Row without ids")]
    assert ResultRow("Clean", "pass", ["x"]).alert_ids == []


def test_a_vendor_with_its_own_ids_gets_decimal_ids_the_same_on_every_run():
    settings = {"PROVIDER_CLASSES": {"adverse_media": "tests.providers.vendor:LabelledVendor"}}
    provider = provider_for("adverse_media", sandbox=False, settings=settings)
    first = provider.run(Subject(last_name="Citizen"), None, RunContext(sandbox=False))
    again = provider.run(Subject(last_name="Citizen"), None, RunContext(sandbox=False))
    assert first.results_overview[0].alert_ids == again.results_overview[0].alert_ids
    assert first.results_overview[0].alert_ids[0].isdigit()


# ------------------------------------------------------------------ the launch's lookups, at the service

def test_config_resolution_and_subject_needs_read_the_registry():
    from app.checks.schemas import LaunchConfig
    from app.checks.services import missing_subject, resolve_configs
    from app.core.errors import Invalid
    config = LaunchConfig.model_validate({"pep_sanction_check": {"similarity_threshold": 90}})
    resolved = resolve_configs(["pep_sanction_check", "court_check", "phone_check"], config)
    assert resolved["pep_sanction_check"]["similarity_threshold"] == "90"
    assert resolved["pep_sanction_check"]["search_type"] == "medium_search"  # defaults merged
    assert resolved["court_check"] == {"listing": "criminal", "search_party": "defendant"}
    assert resolved["phone_check"] is None
    with pytest.raises(Invalid) as refused:
        resolve_configs(["phone_check"], config)
    assert refused.value.errors == {"config.pep_sanction_check": ["pep_sanction_check is not among check_types."]}
    errors = missing_subject(["adc_check", "phone_check"], {"first_name": "Jane"}, "data.")
    assert errors == {"data.last_name": ["adc_check needs last_name."], "data.dob": ["adc_check needs dob."],
                      "data.phone": ["phone_check needs phone."]}


def test_an_event_title_says_its_score_once():
    from app.providers.vocabulary import titled
    assert titled("Sanctions match: Jane DOE (100%)", 1.0) == "Sanctions match: Jane DOE (100%)"
    assert titled("Adverse media: 3 articles", 0.873) == "Adverse media: 3 articles (score 87%)"
    assert titled("Phone: not reachable", None) == "Phone: not reachable"
