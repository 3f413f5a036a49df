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

`GatewayClient` is the JSON-over-HTTP client the three ID gateways share (DVS, NZ, payroll and super)."""
from __future__ import annotations

import logging
import re
from typing import Any, Callable, Iterable, Mapping

import httpx

from app.providers.base import ProviderError, ProviderNotConfigured
from app.providers.id_base import IdRequest, IdVerification
from app.providers.id_sandbox import SUMMARIES
from app.providers.id_types import ID_TYPES

log = logging.getLogger(__name__)

CODES = ("Y", "N", "D")
SERVER_ERROR = "S"


# ------------------------------------------------------------------ the shared client

class GatewayClient:
    """POST a JSON document to one gateway and read its JSON answer; every failure becomes `ProviderError`.

    `label` names the gateway in error texts ("The DVS gateway"). `secrets` passed to `post` are the values sent
    (document numbers, names): an upstream's words are kept only with those taken out."""

    def __init__(self, label: str, *, base_url: str, key: str | None, timeout: float,
                 transport: httpx.BaseTransport | None = None):
        self.label = label
        self.base_url = base_url.rstrip("/")
        self.key = key
        self.timeout = httpx.Timeout(timeout)
        self.transport = transport

    def post(self, path: str, payload: dict[str, Any], *, headers: Mapping[str, str] | None = None,
             secrets: Iterable[Any] = ()) -> dict[str, Any]:
        if not self.key:
            raise ProviderNotConfigured(f"{self.label} has no API key configured")
        secrets = list(secrets)
        sent = {"Authorization": f"Bearer {self.key}", "Accept": "application/json", **(headers or {})}
        try:
            with httpx.Client(base_url=self.base_url, timeout=self.timeout, transport=self.transport) as client:
                response = client.post(path.lstrip("/"), json=payload, headers=sent)
        except httpx.TimeoutException:
            raise ProviderError(f"{self.label} did not answer in time", retryable=True) from None
        except httpx.HTTPError as exc:  # the request (its body) stays out of the chain
            raise ProviderError(f"{self.label} unreachable: {scrub(f'{type(exc).__name__}: {exc}', secrets)}",
                                retryable=True) from None
        status = response.status_code
        if status in (401, 403):
            raise ProviderError(f"{self.label} refused our credentials (HTTP {status})")
        if not 200 <= status < 300:
            reason = _reason(response, secrets)
            raise ProviderError(f"{self.label} answered HTTP {status}" + (f": {reason}" if reason else ""),
                                retryable=status == 429 or status >= 500)
        try:
            data = response.json()
        except ValueError:
            raise ProviderError(f"{self.label} answered something that is not JSON") from None
        if not isinstance(data, dict):
            raise ProviderError(f"{self.label} answered a JSON document that is not an object")
        return data


_DIGITS = re.compile(r"[\w/-]*\d{4,}[\w/-]*")


def scrub(text: str, secrets: Iterable[Any]) -> str:
    """An upstream's words made safe to keep and log: every value we sent (longest first, any case; a 2-character
    one as a whole word) and any token with 4 digits in a row taken out, on one line, at most 200 characters."""
    for secret in sorted({str(s).strip() for s in secrets if s is not None}, key=len, reverse=True):
        if len(secret) >= 3:
            text = re.sub(re.escape(secret), "[…]", text, flags=re.I)
        elif len(secret) == 2:
            text = re.sub(rf"\b{re.escape(secret)}\b", "[…]", text, flags=re.I)
    text = _DIGITS.sub("[…]", text)
    return " ".join(text.split())[:200]


def _reason(response: httpx.Response, secrets: list[Any]) -> str:
    """A refusal's reason: the JSON `message` / `error` / `detail` / `title` it carries, scrubbed."""
    try:
        data = response.json()
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    parts = [data.get(k) for k in ("code", "message", "error", "detail", "title")]
    return scrub("; ".join(str(p) for p in parts if isinstance(p, (str, int)) and str(p).strip()), secrets)


def text_or_none(value: Any, what: str, label: str) -> str | None:
    """A reference of the answer: a string (a number becomes its text) or None; anything else is unreadable."""
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ProviderError(f"{label} answered an unreadable {what}")
    return str(value).strip()[:100] or None


def configured(settings: Mapping[str, Any], prefix: str) -> tuple[str, str | None, float]:
    """`{prefix}_URL`, `{prefix}_KEY` and `{prefix}_TIMEOUT` (else `PROVIDER_TIMEOUT`, else 10 seconds)."""
    url = settings.get(f"{prefix}_URL")
    if not url:
        raise ProviderNotConfigured(f"{prefix}_URL is not set")
    timeout = settings.get(f"{prefix}_TIMEOUT") or settings.get("PROVIDER_TIMEOUT") or 10
    return str(url), settings.get(f"{prefix}_KEY") or None, float(timeout)


def person(data: Mapping[str, Any]) -> dict[str, Any]:
    """The name and birth date as the hub names them (a middle name only when given)."""
    return _clean({"givenName": data.get("first_name"), "middleName": data.get("middle_name"),
                   "familyName": data.get("last_name"), "birthDate": data.get("birth_date")})


def _clean(fields: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v not in (None, "")}


def full_name(data: Mapping[str, Any]) -> str:
    return " ".join(str(data[k]) for k in ("first_name", "middle_name", "last_name") if data.get(k))


# ------------------------------------------------------------------ DVS

MEDICARE_CARD_TYPES = {"green": "G", "blue": "B", "yellow": "Y"}

# id_type -> (the hub's document type, the document's own fields from the ID type's data)
DOCUMENTS: dict[str, tuple[str, Callable[[Mapping[str, Any]], dict[str, Any]]]] = {
    "drivers_licence": ("DriverLicence", lambda d: {
        **person(d), "stateOfIssue": d["state"], "licenceNumber": d["licence_number"], "cardNumber": d["card_number"]}),
    "passport": ("Passport", lambda d: {
        **person(d), "travelDocumentNumber": d["document_number"], "gender": d["gender"]}),
    # Medicare checks the name as printed on the card (name line 1, at most 27 characters there), not its parts.
    "medicare": ("Medicare", lambda d: _clean({
        "nameLine1": full_name(d), "birthDate": d.get("birth_date"), "cardNumber": d["card_number"],
        "individualReferenceNumber": d["individual_reference_number"],
        "cardType": MEDICARE_CARD_TYPES[d["card_type"]], "cardExpiry": d["card_expiry"]})),
    "visa": ("Visa", lambda d: {
        **person(d), "passportNumber": d["passport_number"], "countryOfIssue": d["country_of_issue"]}),
    "birth_certificate": ("BirthCertificate", lambda d: _clean({
        **person(d), "registrationState": d["registration_state"], "registrationNumber": d["registration_number"],
        "registrationDate": d.get("registration_date"), "certificateNumber": d.get("certificate_number")})),
    "centrelink": ("CentrelinkCard", lambda d: _clean({
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
        return _clean({"documentType": document_type, "clientReference": request.reference, "consentObtained": True,
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
