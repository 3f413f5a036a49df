"""business_check against the Australian Business Register's ABN Lookup web services (JSON flavour).

Interface (published by the ABR, registration gives a GUID):
    GET https://abr.business.gov.au/json/AbnDetails.aspx?abn=<11 digits>&guid=<GUID>&callback=c
    GET https://abr.business.gov.au/json/AcnDetails.aspx?acn=<9 digits>&guid=<GUID>&callback=c
answer JSONP `c({...})` with Abn, AbnStatus ("Active"/"Cancelled"), AbnStatusEffectiveFrom, Acn, AddressDate,
AddressPostcode, AddressState, BusinessName (list), EntityName, EntityTypeCode, EntityTypeName, Gst (the date GST
registration began, or null) and Message (non-empty when the lookup failed, e.g. an unknown GUID or number).

Alerting follows `config.business_check`: `yes` alerts, `on_change` records the fact for audit (no alert), `no`
skips. ABN Lookup publishes no lodgement history, so `recent_documents` and `recent_business_names` are recorded
as "not available from ABN Lookup" rather than guessed.
"""
from __future__ import annotations

import json
import re
from typing import Any

import httpx

from app.providers.base import ProviderError, ProviderResult, ResultRow, RunContext, Subject, fingerprint, stable_id
from app.providers.names import name_similarity

BASE_URL = "https://abr.business.gov.au/json"
_JSONP = re.compile(r"^\s*\w+\((.*)\)\s*;?\s*$", re.S)


class AbrProvider:
    check_type = "business_check"
    name = "abr"

    def __init__(self, guid: str, *, base_url: str = BASE_URL, timeout: float = 10.0,
                 transport: httpx.BaseTransport | None = None):
        self.guid = guid
        self.client = httpx.Client(base_url=base_url, timeout=timeout, transport=transport)

    def lookup(self, number: str) -> dict[str, Any]:
        digits = re.sub(r"\D", "", number or "")
        if len(digits) == 11:
            path, params = "/AbnDetails.aspx", {"abn": digits}
        elif len(digits) == 9:
            path, params = "/AcnDetails.aspx", {"acn": digits}
        else:
            raise ProviderError(f"{number!r} is neither an ABN (11 digits) nor an ACN (9 digits)")
        try:
            response = self.client.get(path, params={**params, "guid": self.guid, "callback": "c"})
        except httpx.TimeoutException as exc:
            raise ProviderError("ABN Lookup timed out", retryable=True) from exc
        except httpx.HTTPError as exc:
            raise ProviderError(f"ABN Lookup unreachable: {exc}", retryable=True) from exc
        if response.status_code != 200:
            raise ProviderError(f"ABN Lookup answered HTTP {response.status_code}",
                                retryable=response.status_code >= 500 or response.status_code == 429)
        match = _JSONP.match(response.text)
        try:
            data = json.loads(match.group(1) if match else response.text)
        except (ValueError, AttributeError) as exc:
            raise ProviderError("ABN Lookup answered something that is not its JSON") from exc
        if not isinstance(data, dict):
            raise ProviderError("ABN Lookup answered something that is not its JSON")
        if data.get("Message"):
            if "not a valid" in data["Message"].lower() or "no record" in data["Message"].lower() \
                    or "search text is not a valid" in data["Message"].lower():
                return {}
            raise ProviderError(f"ABN Lookup refused the request: {data['Message']}")
        if not data.get("Abn"):
            return {}
        return data

    def run(self, subject: Subject, config: dict[str, Any] | None, ctx: RunContext) -> ProviderResult:
        config = dict(config or {})
        data = self.lookup(subject.business_number or "")
        findings: list[dict[str, Any]] = []
        rows: list[ResultRow] = []
        number = re.sub(r"\D", "", subject.business_number or "")

        def finding(code: str, message: str, mode: str, *facts: Any) -> None:
            alert = mode == "yes"
            findings.append({"code": code, "message": message, "alert": alert})
            if alert:
                rows.append(ResultRow(message, "warning", [stable_id("abr", code, number)],
                                      fingerprint("abr", code, number, *facts)))

        if not data:
            finding("not_found", f"No ABN or ACN {number} on the Australian Business Register.", "yes")
            record = None
        else:
            record = {"abn": data.get("Abn"), "acn": data.get("Acn") or None, "entity_name": data.get("EntityName"),
                      "entity_type": data.get("EntityTypeName"), "abn_status": data.get("AbnStatus"),
                      "abn_status_from": data.get("AbnStatusEffectiveFrom") or None,
                      "gst_registered_from": data.get("Gst") or None,
                      "business_names": list(data.get("BusinessName") or []),
                      "state": data.get("AddressState") or None, "postcode": data.get("AddressPostcode") or None}
            name_mode = config.get("name_match", "similar")
            if name_mode != "no" and subject.business_name:
                names = [record["entity_name"] or "", *record["business_names"]]
                best = max((name_similarity(subject.business_name, n) for n in names if n), default=0.0)
                ok = best >= (0.999 if name_mode == "exact" else 0.8)
                record["name_similarity"] = round(best, 3)
                if not ok:
                    finding("name_mismatch", f"Registered name “{record['entity_name']}” does not match "
                                             f"“{subject.business_name}”.", "yes", record["entity_name"])
            if (record["abn_status"] or "").lower() != "active":
                finding("abn_inactive", f"ABN {record['abn']} is {(record['abn_status'] or 'unknown').lower()} "
                                        f"since {record['abn_status_from'] or '?'}.",
                        config.get("abn_active", "yes"), record["abn_status"], record["abn_status_from"])
            if record["acn"] is None and "company" in (record["entity_type"] or "").lower():
                finding("acn_missing", "The company has no ACN on the register.", config.get("acn_active", "yes"))
            if not record["gst_registered_from"]:
                finding("gst_not_registered", "Not registered for GST.", config.get("gst_registered", "yes"))
            for key in ("recent_documents", "recent_business_names"):
                if config.get(key, "3") != "no":
                    findings.append({"code": f"{key}_unavailable", "alert": False,
                                     "message": f"{key.replace('_', ' ').capitalize()}: not available from ABN Lookup."})
        if not rows:
            rows.append(ResultRow("Business registration as expected", "pass"))
        subject_out = {"business_name": subject.business_name, "business_number": subject.business_number,
                       "business_number_type": subject.business_number_type}
        summary = (f"{record['entity_name']}: ABN {(record['abn_status'] or '?').lower()}"
                   + (", GST registered" if record["gst_registered_from"] else ", not GST registered")
                   if record else f"{number}: not on the register")
        return ProviderResult(results_overview=rows, details={"subject": subject_out, "config": config,
                                                              "registry": "abr", "record": record,
                                                              "findings": findings},
                              check_summary=summary + ".", data_summary=subject.business_name or number,
                              provider="abr")
