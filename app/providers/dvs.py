"""The Australian Document Verification Service (DVS) through a Gateway Service Provider's REST interface.

Businesses reach the DVS hub only through a Gateway Service Provider (GSP), and each GSP publishes its own REST
(or SOAP) wrapper around the hub's document verification requests. This adapter speaks one JSON shape that keeps
the hub's names, one request per document (docs/idchecks.md, "Real providers", says what it assumes; a GSP with
another shape plugs in through `ID_PROVIDER_CLASSES`):

    POST {DVS_GATEWAY_URL}/verifications
    Authorization: Bearer {DVS_GATEWAY_KEY}
    X-DVS-OAC: {the account's DVS identity (OAC)}
    {"documentType": "DriverLicence", "clientReference": "<ID check uuid>", "consentObtained": true,
     "requesterName": "<organisation shown to issuers>",
     "document": {"givenName": ..., "middleName": ..., "familyName": ..., "birthDate": "YYYY-MM-DD",
                  "stateOfIssue": "NSW", "licenceNumber": ..., "cardNumber": ...}}

answered 200 with the hub's result:

    {"verificationResultCode": "Y" | "N" | "D" | "S", "verificationRequestNumber": "...", "activityId": "...",
     "originatingAgencyCode": "RA-NSW", "additionalInformation": ["..."]}

`Y` the issuer's record matches, `N` it does not, `D` a document error (no such document, or its data cannot be
checked): each is an answer, recorded and charged. `S` (the hub's or the issuer's system failed), a timeout, a
refused or failed request (HTTP 4xx/5xx) and anything unreadable raise `ProviderError`: nothing is recorded or
charged (`app/idchecks/services.py` answers 503). Document numbers are sent in the body only: never in a URL, a
log line or an error text (an upstream's words are scrubbed of every value sent).

The HTTP client, its error mapping and the scrubbing are shared with the NZ and payroll adapters
(`app/providers/id_gateway.py`)."""
from __future__ import annotations

import logging
from typing import Any, Callable, Mapping

import httpx

from app.providers.base import ProviderError
from app.providers.id_base import IdRequest, IdVerification
from app.providers.id_gateway import GatewayClient, clean, configured, person, scrub, text_or_none
from app.providers.id_sandbox import SUMMARIES
from app.providers.id_types import ID_TYPES

log = logging.getLogger(__name__)

CODES = ("Y", "N", "D")
SERVER_ERROR = "S"
MEDICARE_CARD_TYPES = {"green": "G", "blue": "B", "yellow": "Y"}


def full_name(data: Mapping[str, Any]) -> str:
    return " ".join(str(data[k]) for k in ("first_name", "middle_name", "last_name") if data.get(k))


# id_type -> (the hub's document type, the document's own fields from the ID type's data)
DOCUMENTS: dict[str, tuple[str, Callable[[Mapping[str, Any]], dict[str, Any]]]] = {
    "drivers_licence": ("DriverLicence", lambda d: {
        **person(d), "stateOfIssue": d["state"], "licenceNumber": d["licence_number"], "cardNumber": d["card_number"]}),
    "passport": ("Passport", lambda d: {
        **person(d), "travelDocumentNumber": d["document_number"], "gender": d["gender"]}),
    # Medicare checks the name as printed on the card (name line 1, at most 27 characters there), not its parts.
    "medicare": ("Medicare", lambda d: clean({
        "nameLine1": full_name(d), "birthDate": d.get("birth_date"), "cardNumber": d["card_number"],
        "individualReferenceNumber": d["individual_reference_number"],
        "cardType": MEDICARE_CARD_TYPES[d["card_type"]], "cardExpiry": d["card_expiry"]})),
    "visa": ("Visa", lambda d: {
        **person(d), "passportNumber": d["passport_number"], "countryOfIssue": d["country_of_issue"]}),
    "birth_certificate": ("BirthCertificate", lambda d: clean({
        **person(d), "registrationState": d["registration_state"], "registrationNumber": d["registration_number"],
        "registrationDate": d.get("registration_date"), "certificateNumber": d.get("certificate_number")})),
    "centrelink": ("CentrelinkCard", lambda d: clean({
        "name": full_name(d), "birthDate": d.get("birth_date"), "cardType": d["card_type"],
        "customerReferenceNumber": d["customer_reference_number"], "cardExpiry": d["card_expiry"]})),
    "citizenship_certificate": ("CitizenshipCertificate", lambda d: {
        **person(d), "stockNumber": d["stock_number"], "acquisitionDate": d["acquisition_date"]}),
}


class DvsProvider:
    """Verifies the DVS documents (`DOCUMENTS`) under the account's DVS identity (OAC). Built by the ID types'
    registry for live accounts when `DVS_GATEWAY_URL` is set: `DvsProvider(settings, id_type=...)`."""

    name = "dvs"
    label = "The DVS gateway"

    def __init__(self, settings: Mapping[str, Any], id_type: str | None = None, *,
                 transport: httpx.BaseTransport | None = None):
        url, key, timeout = configured(settings, "DVS_GATEWAY")
        self.id_type = id_type or ""
        self.client = GatewayClient(self.label, base_url=url, key=key, timeout=timeout, transport=transport)

    def payload(self, id_type: str, data: Mapping[str, Any], request: IdRequest) -> dict[str, Any]:
        if id_type not in DOCUMENTS:
            raise ProviderError(f"the DVS adapter verifies no {id_type or 'unnamed'!s} documents")
        document_type, fields = DOCUMENTS[id_type]
        try:
            document = fields(data)
        except KeyError as exc:
            raise ProviderError(f"the {document_type} data lacks {exc.args[0]}") from None
        return clean({"documentType": document_type, "clientReference": request.reference, "consentObtained": True,
                      "requesterName": request.requester_name, "document": document})

    def verify(self, data: dict[str, Any], request: IdRequest, id_type: str | None = None) -> IdVerification:
        id_type = id_type or self.id_type
        payload = self.payload(id_type, data, request)
        if not request.oac:
            raise ProviderError("a DVS document is verified under a DVS identity (OAC): none was given")
        answer = self.client.post("/verifications", payload, headers={"X-DVS-OAC": request.oac},
                                  secrets=data.values())
        code = str(answer.get("verificationResultCode") or "").strip().upper()
        if code == SERVER_ERROR:
            raise ProviderError("the DVS hub or the issuer's system failed (result code S)", retryable=True)
        if code not in CODES:
            raise ProviderError(f"{self.label} answered without a readable result code")
        number = text_or_none(answer.get("verificationRequestNumber"), "verification request number", self.label) \
            or text_or_none(answer.get("activityId"), "activity id", self.label)
        agency = text_or_none(answer.get("originatingAgencyCode"), "originating agency code", self.label) \
            or _agency(ID_TYPES[id_type].agency, data)
        info = answer.get("additionalInformation")
        info = [info] if isinstance(info, str) else info if isinstance(info, list) else []
        information = [scrub(str(i), data.values()) for i in info
                       if isinstance(i, (str, int)) and str(i).strip()]
        if code != "Y" and not information:
            information = [SUMMARIES[code]]
        log.info("DVS %s %s: result %s (request number %s, agency %s)", payload["documentType"],
                 request.reference, code, number, agency)
        return IdVerification(outcome="pass" if code == "Y" else "fail", outcome_summary=SUMMARIES[code],
                              provider=self.name,
                              details={"verification_result_code": code, "originating_agency_code": agency,
                                       "verification_request_number": number,
                                       "additional_information": information})


def _agency(agency: str | None, data: Mapping[str, Any]) -> str | None:
    """The originating agency when the gateway does not say it, as the sandbox names it (RA-NSW, BDM-VIC, DFAT)."""
    if agency == "state":
        return f"RA-{data.get('state')}"
    if agency == "BDM":
        return f"BDM-{data.get('registration_state')}"
    return agency
