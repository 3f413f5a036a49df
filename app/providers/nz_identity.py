"""New Zealand documents through an identity gateway's REST interface: the NZ Transport Agency's driver licence
verification (NZTA DLV, `nz_drivers_licence`, details shape 4 `nz_licence`) and the Department of Internal Affairs'
passport verification (DIA, `nz_passport`, shape 5 `nz_passport`).

Both services are reached through an accredited intermediary, whose JSON shape this adapter assumes (docs/idchecks.md,
"Real providers"):

    POST {NZ_GATEWAY_URL}/driver-licence-verifications          POST {NZ_GATEWAY_URL}/passport-verifications
    Authorization: Bearer {NZ_GATEWAY_KEY}
    {"clientReference": "<ID check uuid>", "consentObtained": true, "requesterName": "...",
     "person": {"givenName": ..., "middleName": ..., "familyName": ..., "dateOfBirth": "YYYY-MM-DD"},
     "licence": {"number": "DI123456", "version": "001"}}       ... "passport": {"number": ..., "expiryDate": ...}

answered 200 with:

    {"apiReference": "...", "reportingReference": "...", "matchStatus": "Match" | "NoMatch" | "NotFound",
     "documentVerified": true | false, "additionalInformation": "..." | null}

`Match` with the document verified passes; `NoMatch` fails; `NotFound` (the issuer has no such document) fails as
`NoMatch` saying so, as the sandbox does. Timeouts, HTTP errors and unreadable answers raise `ProviderError`
(`id_gateway.GatewayClient`): nothing is recorded or charged."""
from __future__ import annotations

import logging
from typing import Any, Mapping

import httpx

from app.providers.base import ProviderError
from app.providers.id_base import IdRequest, IdVerification
from app.providers.id_gateway import GatewayClient, clean, configured, scrub, text_or_none
from app.providers.id_sandbox import SUMMARIES

log = logging.getLogger(__name__)

# id_type -> (path, the service's name, the document's fields)
SERVICES = {
    "nz_drivers_licence": ("/driver-licence-verifications", "NZTA driver licence verification",
                           lambda d: {"licence": {"number": d["licence_number"], "version": d["version_number"]}}),
    "nz_passport": ("/passport-verifications", "DIA passport verification",
                    lambda d: {"passport": {"number": d["passport_number"], "expiryDate": d["expiry_date"]}}),
}
STATUSES = {"match": "Match", "nomatch": "NoMatch", "notfound": "NotFound"}


class NzIdentityProvider:
    name = "nz_identity"
    label = "The NZ identity gateway"

    def __init__(self, settings: Mapping[str, Any], id_type: str | None = None, *,
                 transport: httpx.BaseTransport | None = None):
        url, key, timeout = configured(settings, "NZ_GATEWAY")
        self.id_type = id_type or ""
        self.client = GatewayClient(self.label, base_url=url, key=key, timeout=timeout, transport=transport)

    def payload(self, id_type: str, data: Mapping[str, Any], request: IdRequest) -> dict[str, Any]:
        if id_type not in SERVICES:
            raise ProviderError(f"the NZ identity adapter verifies no {id_type or 'unnamed'} documents")
        person = clean({"givenName": data.get("first_name"), "middleName": data.get("middle_name"),
                        "familyName": data.get("last_name"), "dateOfBirth": data.get("birth_date")})
        try:
            document = SERVICES[id_type][2](data)
        except KeyError as exc:
            raise ProviderError(f"the {id_type} data lacks {exc.args[0]}") from None
        return clean({"clientReference": request.reference, "consentObtained": True,
                      "requesterName": request.requester_name, "person": person, **document})

    def verify(self, data: dict[str, Any], request: IdRequest, id_type: str | None = None) -> IdVerification:
        id_type = id_type or self.id_type
        payload = self.payload(id_type, data, request)
        path, service, _ = SERVICES[id_type]
        answer = self.client.post(path, payload, secrets=data.values())
        status = STATUSES.get(str(answer.get("matchStatus") or "").strip().lower())
        verified = answer.get("documentVerified")
        reference = text_or_none(answer.get("apiReference"), "API reference", self.label)
        if status is None or not isinstance(verified, bool) or reference is None:
            raise ProviderError(f"{self.label} answered without a readable match status, verification or reference")
        info = answer.get("additionalInformation")
        if info is not None and not isinstance(info, str):
            raise ProviderError(f"{self.label} answered unreadable additional information")
        code = "Y" if status == "Match" and verified else "D" if status == "NotFound" else "N"
        information = scrub(info, data.values()) if info and info.strip() else None
        log.info("%s %s: %s (document verified: %s, reference %s)", service, request.reference, status, verified,
                 reference)
        return IdVerification(
            outcome="pass" if code == "Y" else "fail", outcome_summary=SUMMARIES[code], provider=self.name,
            details={"api_reference": reference,
                     "reporting_reference": text_or_none(answer.get("reportingReference"), "reporting reference",
                                                         self.label),
                     "match_status": "Match" if status == "Match" else "NoMatch", "document_verified": code == "Y",
                     "additional_information": information or (None if code == "Y" else SUMMARIES[code])})
