"""The JSON-over-HTTPS client the real ID-check adapters share (`dvs`, `nz_identity`, `payroll`), the mapping of
its failures to `ProviderError`, and the scrubbing of every value sent out of an upstream's error texts.

`GatewayClient.post` sends one JSON document with the gateway's key and reads its JSON answer: a timeout or an
unreachable gateway is retryable, refused credentials (HTTP 401/403) are not, another HTTP error is retryable when
429 or 5xx (its JSON reason kept, scrubbed), and an answer that is not a JSON object is unreadable. `scrub` takes
every value we sent (and any long run of digits) out of an upstream's words before they reach an error text or a
result; `answer_words` reads a refusal's JSON words (the SMS gateway's too). `configured` reads a gateway's
`{PREFIX}_URL`, `_KEY` and `_TIMEOUT`; `text_or_none`, `person` and `clean` are the small readers and builders the
adapters have in common."""
from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

import httpx

from app.providers.base import ProviderError, ProviderNotConfigured


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
    """A refusal's reason: the JSON `code` / `message` / `error` / `detail` / `title` it carries, scrubbed."""
    return scrub("; ".join(answer_words(response, ("code", "message", "error", "detail", "title"))), secrets)


def answer_words(response: httpx.Response, keys: Iterable[str]) -> list[str]:
    """The words a refusal's JSON object carries under `keys`, in that order (a list under a key gives its items):
    strings and numbers only, unscrubbed; none when the answer is not a JSON object. The SMS gateway reads its
    refusals with this too, each caller scrubbing the words its own way."""
    try:
        data = response.json()
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    values = [data.get(k) for k in keys]
    items = [i for v in values for i in (v if isinstance(v, list) else [v])]
    return [str(i) for i in items if isinstance(i, (str, int, float)) and not isinstance(i, bool) and str(i).strip()]


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
    """The name and birth date as the DVS hub names them (a middle name only when given); the payroll
    gateway takes the same."""
    return clean({"givenName": data.get("first_name"), "middleName": data.get("middle_name"),
                  "familyName": data.get("last_name"), "birthDate": data.get("birth_date")})


def clean(fields: dict[str, Any]) -> dict[str, Any]:
    """The fields given: None and empty strings left out."""
    return {k: v for k, v in fields.items() if v not in (None, "")}
