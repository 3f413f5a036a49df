"""Sandbox providers (deterministic, magic inputs) and the real registry adapters, tested against responses
recorded in the published formats of ABN Lookup and Companies House (invented companies)."""
from __future__ import annotations

import base64
import json
from datetime import date
from pathlib import Path

import httpx
import pytest

from app.providers import CHECK_TYPES, RunContext, Subject, provider_for, run_provider
from app.providers.abr import AbrProvider
from app.providers.base import ProviderError, ProviderNotConfigured
from app.providers.companies_house import CompaniesHouseProvider
from app.providers.sandbox import SANDBOX_CHECK_TYPES

RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "providers"
CTX = RunContext(sandbox=False)


# ------------------------------------------------------------------ sandbox

SUBJECT = {"first_name": "Marguerite", "last_name": "Okafor-Lindqvist", "dob": "1979-04-02",
           "business_name": "Okafor Lindqvist Holdings", "business_number": "51824753556",
           "address": "12 Example Road, Perth WA 6000", "address_state": "WA"}


@pytest.mark.parametrize("check_type", SANDBOX_CHECK_TYPES)
def test_sandbox_is_clean_and_deterministic(check_type):
    provider = provider_for(check_type, sandbox=True)
    first = provider.run(Subject(**SUBJECT), {}, RunContext())
    again = provider.run(Subject(**SUBJECT), {}, RunContext())
    assert first.outcome == "pass" and [r.status for r in first.results_overview] == ["pass"]
    assert first.details == again.details and first.check_summary == again.check_summary
    assert first.provider == "sandbox"


@pytest.mark.parametrize("check_type", SANDBOX_CHECK_TYPES)
@pytest.mark.parametrize("field", ["last_name", "business_name"])
def test_sandbox_hit_returns_one_warning(check_type, field):
    result = provider_for(check_type, sandbox=True).run(Subject(**{**SUBJECT, field: "Sandbox-Hit"}), {},
                                                         RunContext())
    assert [r.status for r in result.results_overview] == ["warning"]
    assert result.outcome == "warning" and result.results_overview[0].alert_ids


def test_every_check_type_with_a_paid_upstream_has_a_sandbox_answer():
    assert set(SANDBOX_CHECK_TYPES) == {e.name for e in CHECK_TYPES.entries() if not e.providers.ours}


@pytest.mark.parametrize("check_type", CHECK_TYPES.names)
def test_sandbox_fail_fails_every_check_type(check_type):
    provider = provider_for(check_type, sandbox=True)
    with pytest.raises(ProviderError):
        run_provider(provider, Subject(**{**SUBJECT, "last_name": "sandbox-fail", "phone": "+61412345678",
                                          "email": "a@example.org"}), {}, RunContext())


def test_sandbox_details_follow_the_spec_shapes():
    adc = provider_for("adc_check", sandbox=True).run(Subject(**{**SUBJECT, "last_name": "sandbox-hit"}), None,
                                                      RunContext())
    assert set(adc.details) == {"subject", "config", "results"} and adc.details["config"] is None
    assert set(adc.details["subject"]) == {"first_name", "middle_name", "last_name", "dob", "address_state"}
    assert set(adc.details["results"][0]) == {"reference", "first_name", "middle_name", "last_name",
                                              "date_of_birth", "date_of_death", "date_of_death_range", "state"}
    media = provider_for("adverse_media", sandbox=True).run(Subject(**{**SUBJECT, "last_name": "sandbox-hit"}),
                                                            None, RunContext())
    assert set(media.details["results"][0]) == {"name", "age", "location", "summary", "links", "categories"}


def test_live_accounts_without_an_upstream_fail_with_a_reason():
    for check_type in ("adverse_media", "court_check", "business_check", "uk_business_check"):
        with pytest.raises(ProviderNotConfigured, match="no .* upstream is configured"):
            provider_for(check_type, sandbox=False).run(Subject(**SUBJECT), {}, CTX)


def test_a_vendor_class_plugs_in_by_configuration():
    provider = provider_for("adverse_media", sandbox=False,
                            settings={"PROVIDER_CLASSES": {"adverse_media": "tests.providers.vendor:EchoVendor"}})
    result = provider.run(Subject(**SUBJECT), None, CTX)
    assert result.provider == "echo" and result.check_summary == "Echo: Marguerite Okafor-Lindqvist."


def test_unexpected_provider_errors_become_provider_errors():
    class Broken:
        check_type, name = "court_check", "broken"

        def run(self, subject, config, ctx):
            return {}["missing"]

    with pytest.raises(ProviderError, match="unexpected provider error: KeyError"):
        run_provider(Broken(), Subject(), {}, CTX)


# ------------------------------------------------------------------ ABN Lookup

def abr(body: str | None = None, status: int = 200, exc: Exception | None = None):
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if exc is not None:
            raise exc
        return httpx.Response(status, text=body or "")

    return AbrProvider("test-guid", transport=httpx.MockTransport(handler)), seen


def recorded(name: str) -> str:
    return (RECORDED / name).read_text()


def test_abr_active_company_passes():
    provider, seen = abr(recorded("abr_active.jsonp"))
    result = provider.run(Subject(business_name="Harbourline Logistics Pty Ltd", business_number="51 824 753 556"),
                          {"name_match": "similar"}, CTX)
    assert result.outcome == "pass", result.details["findings"]
    assert seen[0].url.path == "/json/AbnDetails.aspx"
    assert seen[0].url.params["abn"] == "51824753556" and seen[0].url.params["guid"] == "test-guid"
    record = result.details["record"]
    assert record["abn_status"] == "Active" and record["gst_registered_from"] == "2000-07-01"
    assert record["business_names"] == ["Harbourline Freight"] and record["name_similarity"] == 1.0


def test_abr_acn_lookup_uses_the_acn_endpoint():
    provider, seen = abr(recorded("abr_active.jsonp"))
    provider.run(Subject(business_number="824 753 556"), {}, CTX)
    assert seen[0].url.path == "/json/AcnDetails.aspx" and seen[0].url.params["acn"] == "824753556"


def test_abr_cancelled_abn_and_no_gst_alert_by_config():
    provider, _ = abr(recorded("abr_cancelled.jsonp"))
    result = provider.run(Subject(business_name="Wattlegrove Trading", business_number="33102417032"), {}, CTX)
    codes = {f["code"]: f["alert"] for f in result.details["findings"]}
    assert codes["abn_inactive"] is True and codes["gst_not_registered"] is True
    assert [r.status for r in result.results_overview] == ["warning", "warning"]
    quiet, _ = abr(recorded("abr_cancelled.jsonp"))
    audit_only = quiet.run(Subject(business_number="33102417032"),
                           {"abn_active": "on_change", "gst_registered": "no"}, CTX)
    assert audit_only.outcome == "pass"
    assert {f["code"]: f["alert"] for f in audit_only.details["findings"]}["abn_inactive"] is False


def test_abr_name_mismatch_alerts():
    provider, _ = abr(recorded("abr_active.jsonp"))
    result = provider.run(Subject(business_name="Completely Different Bakery", business_number="51824753556"),
                          {"name_match": "similar"}, CTX)
    assert any(f["code"] == "name_mismatch" and f["alert"] for f in result.details["findings"])


@pytest.mark.parametrize("body, status, exc, retryable", [
    (recorded("abr_bad_guid.jsonp"), 200, None, False),
    ("<html>Service Unavailable</html>", 503, None, True),
    ("c({not json", 200, None, False),
    (None, 200, httpx.ReadTimeout("slow"), True),
    (None, 200, httpx.ConnectError("refused"), True),
])
def test_abr_upstream_failures_are_provider_errors(body, status, exc, retryable):
    provider, _ = abr(body, status, exc)
    with pytest.raises(ProviderError) as caught:
        provider.run(Subject(business_number="51824753556"), {}, CTX)
    assert caught.value.retryable is retryable


# ------------------------------------------------------------------ Companies House

def companies_house(routes: dict[str, tuple[int, str]]):
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        status, body = routes.get(request.url.path, (404, '{"errors":[{"error":"company-profile-not-found"}]}'))
        return httpx.Response(status, text=body, headers={"Content-Type": "application/json"})

    return CompaniesHouseProvider("ch-key", transport=httpx.MockTransport(handler), today=date(2026, 11, 23)), seen


CH_OK = {"/company/09876543": (200, recorded("ch_company.json")),
         "/company/09876543/filing-history": (200, recorded("ch_filings.json")),
         "/company/09876543/officers": (200, recorded("ch_officers.json"))}


def test_companies_house_recent_officer_changes_alert():
    provider, seen = companies_house(CH_OK)
    result = provider.run(Subject(business_name="Bramblegate Analytics Ltd", business_number="9876543"), {}, CTX)
    assert seen[0].headers["Authorization"] == "Basic " + base64.b64encode(b"ch-key:").decode()
    record = result.details["record"]
    assert record["company_status"] == "active" and record["company_number"] == "09876543"
    assert [c["change"] for c in record["officer_changes"]] == ["resigned", "appointed"]
    assert [f["date"] for f in record["recent_filings"]] == ["2026-10-05"]
    assert [r.title for r in result.alerts] == ["2 officer changes since 2026-08-23."]
    findings = {f["code"]: f["alert"] for f in result.details["findings"]}
    assert findings["recent_filings"] is False and findings["registered_address"] is False


def test_companies_house_windows_and_switches_follow_config():
    provider, seen = companies_house(CH_OK)
    result = provider.run(Subject(business_number="09876543"),
                          {"officer_changes": "no", "recent_filings": "no"}, CTX)
    assert result.outcome == "pass"
    assert [r.url.path for r in seen] == ["/company/09876543"]


def test_companies_house_unknown_company_alerts():
    provider, _ = companies_house({})
    result = provider.run(Subject(business_number="00000001"), {}, CTX)
    assert [r.title for r in result.alerts] == ["No company 00000001 at Companies House."]


@pytest.mark.parametrize("status, retryable", [(429, True), (500, True), (401, False)])
def test_companies_house_errors(status, retryable):
    provider, _ = companies_house({"/company/09876543": (status, json.dumps({"error": "x"}))})
    with pytest.raises(ProviderError) as caught:
        provider.run(Subject(business_number="09876543"), {}, CTX)
    assert caught.value.retryable is retryable


def test_companies_house_rejects_a_bad_number_before_calling():
    provider, seen = companies_house(CH_OK)
    with pytest.raises(ProviderError, match="not a Companies House number"):
        provider.run(Subject(business_number="not a number!"), {}, CTX)
    assert seen == []
