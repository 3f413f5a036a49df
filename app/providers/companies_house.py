"""uk_business_check against the Companies House public data REST API.

Interface (published by Companies House; an API key is the HTTP Basic user name, the password empty; the limit
is 600 requests per 5 minutes per key, beyond which it answers 429):
    GET /company/{company_number}                       company_name, company_status, date_of_creation, type,
                                                        registered_office_address{...}, sic_codes[]
    GET /company/{company_number}/filing-history        items[] {date, category, description, type}
    GET /company/{company_number}/officers              items[] {name, officer_role, appointed_on, resigned_on}

Alerting follows `config.uk_business_check`: `yes` alerts, `on_change` records the fact for audit, `no` skips;
the month windows (`recent_filings`, `officer_changes`) count back from the run date. A 429 or a 5xx fails the
check (refunded) as retryable.
"""
from __future__ import annotations

import re
from datetime import date
from typing import Any

import httpx
from dateutil.relativedelta import relativedelta

from app.providers.base import ProviderError, ProviderResult, ResultRow, RunContext, Subject, fingerprint, stable_id
from app.providers.names import name_similarity

BASE_URL = "https://api.company-information.service.gov.uk"


class CompaniesHouseProvider:
    check_type = "uk_business_check"
    name = "companies_house"

    def __init__(self, api_key: str, *, base_url: str = BASE_URL, timeout: float = 10.0,
                 transport: httpx.BaseTransport | None = None, today: date | None = None):
        self.client = httpx.Client(base_url=base_url, timeout=timeout, transport=transport, auth=(api_key, ""))
        self.today = today

    def _get(self, path: str, params: dict | None = None) -> dict[str, Any] | None:
        try:
            response = self.client.get(path, params=params)
        except httpx.TimeoutException as exc:
            raise ProviderError("Companies House timed out", retryable=True) from exc
        except httpx.HTTPError as exc:
            raise ProviderError(f"Companies House unreachable: {exc}", retryable=True) from exc
        if response.status_code == 404:
            return None
        if response.status_code == 429:
            raise ProviderError("Companies House rate limit reached (600 requests per 5 minutes)", retryable=True)
        if response.status_code in (401, 403):
            raise ProviderError("Companies House refused the API key")
        if response.status_code != 200:
            raise ProviderError(f"Companies House answered HTTP {response.status_code}",
                                retryable=response.status_code >= 500)
        try:
            data = response.json()
        except ValueError as exc:
            raise ProviderError("Companies House answered something that is not JSON") from exc
        if not isinstance(data, dict):
            raise ProviderError("Companies House answered an unexpected document")
        return data

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        config = dict(config or {})
        number = re.sub(r"\s", "", (subject.business_number or "")).upper()
        if not re.fullmatch(r"[A-Z0-9]{8}", number):
            if re.fullmatch(r"\d{1,7}", number):
                number = number.zfill(8)
            else:
                raise ProviderError(f"{subject.business_number!r} is not a Companies House number (8 characters)")
        today = self.today or date.today()
        company = self._get(f"/company/{number}")
        findings: list[dict[str, Any]] = []
        rows: list[ResultRow] = []

        def finding(code: str, message: str, mode: str, *facts: Any) -> None:
            alert = mode == "yes"
            findings.append({"code": code, "message": message, "alert": alert})
            if alert:
                rows.append(ResultRow(message, "warning", [stable_id("ch", code, number, *facts)],
                                      fingerprint("ch", code, number, *facts)))

        record = None
        if company is None:
            finding("not_found", f"No company {number} at Companies House.", "yes")
        else:
            address = company.get("registered_office_address") or {}
            record = {"company_number": company.get("company_number", number),
                      "company_name": company.get("company_name"), "company_status": company.get("company_status"),
                      "company_type": company.get("type"), "date_of_creation": company.get("date_of_creation"),
                      "registered_office_address": ", ".join(str(address[k]) for k in (
                          "premises", "address_line_1", "address_line_2", "locality", "region", "postal_code",
                          "country") if address.get(k)) or None,
                      "sic_codes": list(company.get("sic_codes") or []), "recent_filings": [], "officer_changes": []}
            mode = config.get("name_match", "similar")
            if mode != "no" and subject.business_name:
                similarity = name_similarity(subject.business_name, record["company_name"] or "")
                record["name_similarity"] = round(similarity, 3)
                if similarity < (0.999 if mode == "exact" else 0.8):
                    finding("name_mismatch", f"Registered name “{record['company_name']}” does not match "
                                             f"“{subject.business_name}”.", "yes", record["company_name"])
            if (record["company_status"] or "") != "active":
                finding("company_not_active", f"Company status is {record['company_status'] or 'unknown'}.",
                        config.get("company_status", "yes"), record["company_status"])
            months = config.get("recent_filings", "3")
            if months != "no":
                since = today - relativedelta(months=int(months))
                history = self._get(f"/company/{number}/filing-history", {"items_per_page": 50}) or {}
                recent = [{"date": i.get("date"), "category": i.get("category"), "type": i.get("type"),
                           "description": i.get("description")} for i in history.get("items") or []
                          if (i.get("date") or "") >= since.isoformat()]
                record["recent_filings"] = recent
                if recent:
                    finding("recent_filings", f"{len(recent)} filing{'s' if len(recent) != 1 else ''} since "
                                              f"{since.isoformat()}.", "on_change", [r["date"] for r in recent])
            months = config.get("officer_changes", "3")
            if months != "no":
                since = (today - relativedelta(months=int(months))).isoformat()
                officers = self._get(f"/company/{number}/officers", {"items_per_page": 100}) or {}
                changes = []
                for o in officers.get("items") or []:
                    for key, kind in (("appointed_on", "appointed"), ("resigned_on", "resigned")):
                        if (o.get(key) or "") >= since:
                            changes.append({"name": o.get("name"), "role": o.get("officer_role"), "change": kind,
                                            "date": o.get(key)})
                record["officer_changes"] = sorted(changes, key=lambda c: c["date"], reverse=True)
                if changes:
                    finding("officer_changes", f"{len(changes)} officer change{'s' if len(changes) != 1 else ''} "
                                               f"since {since}.", "yes", sorted(map(repr, changes)))
            for key, code, value in (("registered_address_change", "registered_address",
                                      record["registered_office_address"]),
                                     ("sic_codes_change", "sic_codes", record["sic_codes"])):
                if config.get(key, "on_change") == "on_change":
                    findings.append({"code": code, "alert": False, "value": value,
                                     "message": f"Recorded for change tracking: {code.replace('_', ' ')}."})
        if not rows:
            rows.append(ResultRow("Company registration as expected", "pass"))
        summary = (f"{record['company_name']} ({record['company_number']}): {record['company_status']}" if record
                   else f"{number}: not found at Companies House")
        return ProviderResult(results_overview=rows,
                              details={"subject": {"business_name": subject.business_name,
                                                   "business_number": subject.business_number},
                                       "config": config, "registry": "companies_house", "record": record,
                                       "findings": findings},
                              check_summary=summary + ".", data_summary=subject.business_name or number,
                              provider="companies_house")
