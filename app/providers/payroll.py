"""Payroll and superannuation verification (`payroll_super`, details shape 6) through a gateway's REST interface:
is this person paid by the employer with this ABN, and a member of the super fund with this USI and member number?

No issuer publishes one interface for this; the adapter assumes this JSON shape (docs/idchecks.md, "Real
providers"):

    POST {PAYROLL_GATEWAY_URL}/verifications
    Authorization: Bearer {PAYROLL_GATEWAY_KEY}
    {"clientReference": "<ID check uuid>", "consentObtained": true, "requesterName": "...",
     "person": {"givenName": ..., "middleName": ..., "familyName": ..., "birthDate": "YYYY-MM-DD"},
     "payroll": {"employerAbn": "51824753556"},                          (only when an ABN is given)
     "superannuation": {"fundUsi": "...", "memberNumber": "..."}}        (only when a USI is given)

answered 200 with:

    {"apiReference": "...", "payrollPerson": "Y" | "N" | null, "superPerson": "Y" | "N" | null}

a `Y` or `N` for each source asked (null for a source not asked). The check passes when a source asked answers `Y`
(docs/idchecks.md: "a `Y` from payroll or super"). A source asked without an answer, a timeout, an HTTP error or an
unreadable answer raise `ProviderError` (`id_gateway.GatewayClient`): nothing is recorded or charged."""
from __future__ import annotations

import logging
from typing import Any, Mapping

import httpx

from app.providers.base import ProviderError
from app.providers.id_base import IdRequest, IdVerification
from app.providers.id_gateway import GatewayClient, clean, configured, person, text_or_none
from app.providers.id_sandbox import SUMMARIES

log = logging.getLogger(__name__)


class PayrollProvider:
    name = "payroll"
    label = "The payroll and super gateway"

    def __init__(self, settings: Mapping[str, Any], id_type: str | None = None, *,
                 transport: httpx.BaseTransport | None = None):
        url, key, timeout = configured(settings, "PAYROLL_GATEWAY")
        self.id_type = id_type or "payroll_super"
        self.client = GatewayClient(self.label, base_url=url, key=key, timeout=timeout, transport=transport)

    def payload(self, data: Mapping[str, Any], request: IdRequest) -> dict[str, Any]:
        if not (data.get("employer_abn") or data.get("super_fund_usi")):
            raise ProviderError("a payroll and super check needs the employer's ABN or the fund's USI")
        return clean({"clientReference": request.reference, "consentObtained": True,
                      "requesterName": request.requester_name, "person": person(data),
                      "payroll": {"employerAbn": data["employer_abn"]} if data.get("employer_abn") else None,
                      "superannuation": {"fundUsi": data["super_fund_usi"], "memberNumber": data.get("member_number")}
                      if data.get("super_fund_usi") else None})

    def verify(self, data: dict[str, Any], request: IdRequest, id_type: str | None = None) -> IdVerification:
        payload = self.payload(data, request)
        answer = self.client.post("/verifications", payload, secrets=data.values())
        reference = text_or_none(answer.get("apiReference"), "API reference", self.label)
        if reference is None:
            raise ProviderError(f"{self.label} answered without an API reference")
        found = {}
        for key, source in (("payrollPerson", "payroll"), ("superPerson", "superannuation")):
            value = answer.get(key)
            value = value.strip().upper() if isinstance(value, str) else value
            if source not in payload:
                found[key] = None  # not asked: whatever came back is not ours to record
            elif value in ("Y", "N"):
                found[key] = value
            else:
                raise ProviderError(f"{self.label} answered no readable {source} result")
        passed = "Y" in found.values()
        log.info("Payroll and super %s: payroll %s, super %s (reference %s)", request.reference,
                 found["payrollPerson"], found["superPerson"], reference)
        return IdVerification(outcome="pass" if passed else "fail", outcome_summary=SUMMARIES["Y" if passed else "N"],
                              provider=self.name,
                              details={"api_reference": reference, "payroll_person": found["payrollPerson"],
                                       "super_person": found["superPerson"]})
