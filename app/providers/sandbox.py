"""Sandbox providers for the check types whose upstream is a paid service we do not call from sandbox accounts
(adverse media, deceased registers, courts, business registries, real estate).

Deterministic: the same subject and config give the same answer on every run. Magic inputs (docs/sandbox.md):
a subject whose `last_name` or `business_name` is `sandbox-fail` (any case) makes the provider fail (the check
ends `failed` and is refunded); `sandbox-hit` returns one `warning` result; `sandbox-timeout` times out (retried,
then failed and refunded); `sandbox-slow` answers clean after two seconds. Anything else is clean. The magic
words also apply to our own providers (see `app.providers.registry`).
"""
from __future__ import annotations

from datetime import date, timedelta
from typing import Any, Callable

from app.providers.base import (MAGIC_HIT, ProviderResult, ResultRow, RunContext, Subject, fingerprint,
                                sandbox_magic, stable_id)


def _subject_fields(subject: Subject, keys: tuple[str, ...]) -> dict[str, Any]:
    values = subject.to_dict()
    return {k: values.get(k) for k in keys}


def _seed(*parts: Any) -> int:
    return int(fingerprint("sandbox", *parts)[:8], 16)


# --------------------------------------------------------------------------- the hit each check type returns

def _adverse_media_hit(subject: Subject, config: dict) -> dict[str, Any]:
    return {"name": subject.display_name.title() or "Sandbox Subject", "age": 47, "location": "Sydney, NSW",
            "summary": "Sandbox article: the subject was named in a regulator's enforcement notice.",
            "links": ["https://sandbox.example/adverse-media/1"], "categories": ["regulatory", "financial crime"]}


def _adc_hit(subject: Subject, config: dict) -> dict[str, Any]:
    return {"reference": f"SBX-{_seed(subject.person_name) % 10**6:06d}", "first_name": subject.first_name,
            "middle_name": subject.middle_name, "last_name": subject.last_name,
            "date_of_birth": subject.dob, "date_of_death": "2021-06-14", "date_of_death_range": None,
            "state": subject.address_state or "NSW"}


def _court_hit(subject: Subject, config: dict) -> dict[str, Any]:
    listing = config.get("listing", "criminal")
    return {"case_number": f"SBX-{_seed(subject.display_name) % 10**5:05d}/2024",
            "court": "Sandbox Local Court", "jurisdiction": subject.address_state or "NSW",
            "case_type": "civil" if listing == "civil" else "criminal",
            "party_role": "plaintiff" if config.get("search_party") == "plaintiff" else "defendant",
            "party_name": subject.display_name.title(), "filed_on": "2024-03-11", "status": "listed",
            "summary": "Sandbox listing: a matter with a party of this name."}


def _realestate_hit(subject: Subject, config: dict) -> dict[str, Any]:
    return {"listing_id": f"SBX-{_seed(subject.address or subject.display_name) % 10**7:07d}",
            "address": subject.address or "1 Sandbox Street, Sydney NSW 2000", "listing_type": "sale",
            "listed_on": config.get("date_from") or "2024-09-02", "price": "AUD 1,250,000",
            "agent": "Sandbox Realty", "status": "active"}


def _list_details(subject_keys: tuple[str, ...], hit_builder: Callable[[Subject, dict], dict], title: str,
                  clean: str, config_in_details: bool):
    def run(subject: Subject, config: dict[str, Any] | None, hit: bool) -> tuple[list[ResultRow], dict, str]:
        config = config or {}
        results = [hit_builder(subject, config)] if hit else []
        rows = [ResultRow(title, "warning", [stable_id("sandbox", title, subject.display_name)],
                          fingerprint("sandbox", title, results[0]))] if hit else [ResultRow(clean, "pass")]
        details = {"subject": _subject_fields(subject, subject_keys),
                   "config": (config or None) if config_in_details else None, "results": results}
        summary = f"1 result: {title.lower()}." if hit else f"{clean}."
        return rows, details, summary
    return run


def _business(subject: Subject, config: dict[str, Any] | None, hit: bool) -> tuple[list[ResultRow], dict, str]:
    config = config or {}
    number = (subject.business_number or "").replace(" ", "") or f"{_seed(subject.business_name) % 10**11:011d}"
    name = (subject.business_name or "Sandbox Pty Ltd").upper()
    record = {"abn": number if len(number) == 11 else None, "acn": number[-9:] if len(number) >= 9 else None,
              "entity_name": name, "entity_type": "Australian Private Company", "abn_status": "Active",
              "abn_status_from": "2015-07-01", "gst_registered_from": "2015-07-01",
              "business_names": [name.title()], "state": subject.address_state or "NSW", "postcode": "2000"}
    findings = []
    if hit:
        record.update(abn_status="Cancelled", abn_status_from="2024-02-29")
        findings.append({"code": "abn_inactive", "message": "Sandbox: the ABN was cancelled on 2024-02-29.",
                         "alert": True})
    rows = ([ResultRow("ABN not active", "warning", [stable_id("sandbox", "abn_inactive", number)],
                       fingerprint("abn_inactive", number, record["abn_status_from"]))] if hit
            else [ResultRow("Business registration as expected", "pass")])
    details = {"subject": _subject_fields(subject, ("business_name", "business_number", "business_number_type")),
               "config": config, "registry": "abr", "record": record, "findings": findings}
    summary = f"{name}: ABN {record['abn_status'].lower()}" + (", GST registered." if not hit else ".")
    return rows, details, summary


def _uk_business(subject: Subject, config: dict[str, Any] | None, hit: bool) -> tuple[list[ResultRow], dict, str]:
    config = config or {}
    number = (subject.business_number or "").upper().replace(" ", "") or f"{_seed(subject.business_name) % 10**8:08d}"
    name = (subject.business_name or "SANDBOX LIMITED").upper()
    record = {"company_number": number, "company_name": name, "company_status": "dissolved" if hit else "active",
              "company_type": "ltd", "date_of_creation": "2012-05-14",
              "registered_office_address": "1 Sandbox Lane, London, EC1A 1AA", "sic_codes": ["62020"],
              "recent_filings": [{"date": (date(2026, 1, 1) - timedelta(days=30)).isoformat(),
                                  "category": "accounts", "description": "Sandbox annual accounts"}],
              "officer_changes": []}
    findings = ([{"code": "company_not_active", "message": "Sandbox: the company is dissolved.", "alert": True}]
                if hit else [])
    rows = ([ResultRow("Company not active", "warning", [stable_id("sandbox", "uk_status", number)],
                       fingerprint("uk_status", number, "dissolved"))] if hit
            else [ResultRow("Company registration as expected", "pass")])
    details = {"subject": _subject_fields(subject, ("business_name", "business_number")), "config": config,
               "registry": "companies_house", "record": record, "findings": findings}
    return rows, details, f"{name} ({number}): {record['company_status']}."


_ANSWERS: dict[str, Callable[[Subject, dict | None, bool], tuple[list[ResultRow], dict, str]]] = {
    "adverse_media": _list_details(("first_name", "middle_name", "last_name", "dob", "business_name",
                                    "address_country"), _adverse_media_hit, "Adverse media mention",
                                   "No adverse media found", False),
    "adc_check": _list_details(("first_name", "middle_name", "last_name", "dob", "address_state"), _adc_hit,
                               "Death record found", "No death record found", False),
    "adc_custodian_check": _list_details(("first_name", "middle_name", "last_name", "dob", "address_state"),
                                         _adc_hit, "Death record found", "No death record found", True),
    "court_check": _list_details(("first_name", "middle_name", "last_name", "business_name", "dob",
                                  "address_state"), _court_hit, "Court listing found", "No court listing found",
                                 True),
    "realestate_check": _list_details(("address",), _realestate_hit, "Property listing found",
                                      "No property listing found", True),
    "business_check": _business,
    "uk_business_check": _uk_business,
}
SANDBOX_CHECK_TYPES = tuple(_ANSWERS)


class SandboxProvider:
    name = "sandbox"

    def __init__(self, check_type: str):
        if check_type not in _ANSWERS:
            raise ValueError(f"no sandbox provider for {check_type}")
        self.check_type = check_type

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        magic = sandbox_magic(subject, self.check_type)
        rows, details, summary = _ANSWERS[self.check_type](subject, config, magic == MAGIC_HIT)
        return ProviderResult(results_overview=rows, details=details, check_summary=summary,
                              data_summary=subject.display_name or None, provider="sandbox")
