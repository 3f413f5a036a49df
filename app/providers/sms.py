"""Text messages (IDPass `delivery_method: sms`): an SMS provider interface, its sandbox and one real gateway.

A message holds a secret (the person's hosted link), so its body is kept out of every error, `repr` and log line
this module makes: an error says what went wrong (HTTP status, the gateway's reason with links and quoted values
taken out), never what was being sent.

Providers (`sms_provider`):
- `OutboxSms`: sandbox accounts, and any account when no `SMS_PROVIDER` is configured. It writes each message as
  one JSON file into a folder (`SMS_OUTBOX_DIR`, default `<instance>/sms-outbox`) and sends nothing, ever: the spec
  says "In sandbox no text message is sent either way". `read_outbox` lists what it wrote (tests, the demo).
- `MessageMediaSms`: `SMS_PROVIDER=messagemedia`, the MessageMedia Messages API v1 (Australia's common gateway,
  now part of Sinch), see the class.

Numbers: `normalise_au_mobile` accepts what people type and answers the national form `04xxxxxxxx` (what
IDPass stores as `delivery_phone`), or None for anything that is not an Australian mobile; the gateway is given
the E.164 form (`+614xxxxxxxx`).
"""
from __future__ import annotations

import json
import os
import re
import tempfile
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Protocol, runtime_checkable

import httpx
import phonenumbers
from phonenumbers import PhoneNumberType

from app.config import BASE_DIR
from app.providers.base import ProviderError
from app.providers.id_gateway import answer_words

SMS_PROVIDERS = ("messagemedia",)
DEFAULT_OUTBOX = BASE_DIR / "instance" / "sms-outbox"  # Flask's default instance folder for this package
MESSAGEMEDIA_URL = "https://api.messagemedia.com"

_TYPED = re.compile(r"^[\d\s+\-().]+$")  # digits and the punctuation people type; no letters (vanity numbers)


def normalise_au_mobile(value: Any) -> str | None:
    """`0412 345 678`, `+61 412 345 678`, `61412345678`, `(04) 1234-5678` -> `0412345678`; None when the value is
    not an Australian mobile number (a landline, 1300/13 numbers, a foreign number, the wrong length, letters).

    `phonenumbers` (libphonenumber's metadata) decides that the number is valid and a MOBILE in country code 61;
    the national form must also be 10 digits starting `04`."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 40 or not _TYPED.match(text):
        return None
    try:
        number = phonenumbers.parse(text, "AU")
    except phonenumbers.NumberParseException:
        return None
    if number.country_code != 61 or number.extension or not phonenumbers.is_valid_number(number):
        return None
    if phonenumbers.number_type(number) != PhoneNumberType.MOBILE:
        return None
    national = "0" + phonenumbers.national_significant_number(number)
    return national if len(national) == 10 and national.startswith("04") and national.isdigit() else None


def e164_au_mobile(national: str) -> str:
    """`0412345678` -> `+61412345678` (the argument is a normalised national mobile number)."""
    return "+61" + national[1:]


class SmsError(ProviderError):
    """The message was not handed over: a bad number, a gateway that refused, failed, timed out or answered
    something unreadable, or a configuration that names no usable gateway. The text never holds the body.

    `retryable`: another try may succeed (timeouts, 429, 5xx, the gateway unreachable). `maybe_sent`: the gateway
    may have taken the message although we saw no receipt (no answer in time, or a 2xx we could not read), so a
    retry may text the person twice."""

    def __init__(self, message: str, *, retryable: bool = False, maybe_sent: bool = False):
        super().__init__(message, retryable=retryable)
        self.maybe_sent = maybe_sent


@dataclass
class SmsMessage:
    to: str                                  # an Australian mobile, as `normalise_au_mobile` accepts it
    body: str = field(repr=False)            # holds the secret link: out of repr (and so out of logs)
    reference: str                           # ours, e.g. the verification's uuid: the outbox file name, metadata


@dataclass
class SmsReceipt:
    provider: str                            # "outbox" | "messagemedia"
    message_id: str                          # the gateway's id (the outbox makes a uuid)
    sent_at: datetime                        # when it was handed over (UTC, aware)


@runtime_checkable
class SmsProvider(Protocol):
    name: str

    def send(self, message: SmsMessage) -> SmsReceipt:
        ...


def _recipient(message: SmsMessage) -> str:
    national = normalise_au_mobile(message.to)
    if national is None:
        raise SmsError("the recipient is not an Australian mobile number (10 digits starting 04)")
    if not (message.body or "").strip():
        raise SmsError("the message has no text")
    return national


# ------------------------------------------------------------------ sandbox: an outbox folder

class OutboxSms:
    """Writes each message into `folder` as `<UTC timestamp>-<reference>.json` ({"to", "to_e164", "body",
    "reference", "sent_at", "message_id", "provider"}), atomically (a temporary file in the same folder, then a
    rename), readable by its owner only (the body holds the link). Sends nothing."""

    name = "outbox"

    def __init__(self, folder: str | os.PathLike[str]):
        self.folder = Path(folder)

    def send(self, message: SmsMessage) -> SmsReceipt:
        national = _recipient(message)
        sent_at = datetime.now(timezone.utc)
        message_id = str(uuid.uuid4())
        record = {"to": national, "to_e164": e164_au_mobile(national), "body": message.body,
                  "reference": message.reference, "sent_at": sent_at.isoformat(), "message_id": message_id,
                  "provider": self.name}
        stem = f"{sent_at:%Y%m%dT%H%M%S%fZ}-{_file_safe(message.reference)}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            target = self.folder / f"{stem}.json"
            n = 1
            while target.exists():  # the same reference twice in one microsecond
                n += 1
                target = self.folder / f"{stem}-{n}.json"
            fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".", suffix=".tmp")  # mode 0600
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(record, fh, ensure_ascii=False, indent=2)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, target)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise SmsError(f"the SMS outbox {self.folder} cannot be written: {type(exc).__name__}",
                           retryable=True) from None
        return SmsReceipt(provider=self.name, message_id=message_id, sent_at=sent_at)


def _file_safe(reference: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", str(reference or ""))[:80] or "message"


def read_outbox(folder: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The messages an `OutboxSms` wrote into `folder`, oldest first (none, or no folder: [])."""
    path = Path(folder)
    if not path.is_dir():
        return []
    files = sorted(p for p in path.glob("*.json") if not p.name.startswith("."))
    return [json.loads(p.read_text(encoding="utf-8")) for p in files]


# ------------------------------------------------------------------ MessageMedia Messages API v1

class MessageMediaSms:
    """The MessageMedia Messages API v1 (https://messagemedia.github.io/documentation/#tag/Messages/operation/
    SendMessages; formerly https://developers.messagemedia.com/code/messages-api-documentation/; the official
    SDKs, e.g. github.com/messagemedia/messages-python-sdk, follow the same interface).

        POST https://api.messagemedia.com/v1/messages
        Authorization: Basic base64(<API key>:<API secret>)    (HMAC signing is the other option; not used here)
        Content-Type: application/json, Accept: application/json
        {"messages": [{"content": "...", "destination_number": "+61491570156", "format": "SMS",
                       "metadata": {"reference": "..."},          # up to 10 keys; key <= 100, value <= 256 chars
                       "source_number": "...", "source_number_type": "INTERNATIONAL" | "ALPHANUMERIC" | "SHORTCODE"}]}

    answers 202 Accepted with the messages echoed, each with its `message_id` (a UUID) and `status` ("queued"):
    {"messages": [{"message_id": "...", "status": "queued", "content": ..., "destination_number": ..., ...}]}.
    Errors: 400 invalid request ({"message": ..., "details": [...]}), 401 bad credentials, 403 feature not enabled,
    404, 5xx. Without `source_number` the account's default sender (a shared number) is used; an alphanumeric
    sender (up to 11 characters) must be registered for Australian destinations (the ACMA sender ID register).

    Any answer that is not a 2xx with a readable message id, a timeout or an unreachable gateway raises `SmsError`;
    its text names the status and the gateway's reason with links and long quoted values removed, never the body.
    """

    name = "messagemedia"

    def __init__(self, api_key: str, api_secret: str, *, sender: str | None = None,
                 base_url: str = MESSAGEMEDIA_URL, timeout: float = 10.0,
                 transport: httpx.BaseTransport | None = None):
        if not api_key or not api_secret:
            raise SmsError("MessageMedia needs an API key and secret (SMS_API_KEY, SMS_API_SECRET)")
        self.auth = (api_key, api_secret)
        self.source = _source(sender)
        self.base_url = (base_url or MESSAGEMEDIA_URL).rstrip("/")
        self.timeout = httpx.Timeout(timeout)
        self.transport = transport

    def payload(self, message: SmsMessage) -> dict[str, Any]:
        national = _recipient(message)
        item: dict[str, Any] = {"content": message.body, "destination_number": e164_au_mobile(national),
                                "format": "SMS", "metadata": {"reference": str(message.reference)[:256]}}
        if self.source:
            item["source_number"], item["source_number_type"] = self.source
        return {"messages": [item]}

    def send(self, message: SmsMessage) -> SmsReceipt:
        payload = self.payload(message)
        secret = message.body
        try:
            with httpx.Client(base_url=self.base_url, auth=self.auth, timeout=self.timeout,
                              transport=self.transport) as client:
                response = client.post("/v1/messages", json=payload, headers={"Accept": "application/json"})
        except httpx.ConnectTimeout:
            raise SmsError("MessageMedia could not be reached in time", retryable=True) from None
        except httpx.TimeoutException:
            raise SmsError("MessageMedia did not answer in time (the message may have been sent)",
                           retryable=True, maybe_sent=True) from None
        except httpx.HTTPError as exc:  # the request (and its body) stays out of the chain
            raise SmsError(f"MessageMedia unreachable: {_scrub(f'{type(exc).__name__}: {exc}', secret)}",
                           retryable=True) from None
        status = response.status_code
        if not 200 <= status < 300:
            reason = _reason(response, secret)
            raise SmsError(f"MessageMedia answered HTTP {status}" + (f": {reason}" if reason else ""),
                           retryable=status == 429 or status >= 500)
        try:
            data = response.json()
            message_id = data["messages"][0]["message_id"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise SmsError(f"MessageMedia answered HTTP {status} without a readable message id (the message may "
                           "have been sent)", maybe_sent=True) from None
        if not isinstance(message_id, str) or not message_id.strip():
            raise SmsError(f"MessageMedia answered HTTP {status} without a readable message id (the message may "
                           "have been sent)", maybe_sent=True)
        return SmsReceipt(provider=self.name, message_id=message_id.strip(), sent_at=datetime.now(timezone.utc))


def _source(sender: str | None) -> tuple[str, str] | None:
    """SMS_SENDER as (source_number, source_number_type): a mobile or +E.164 number is INTERNATIONAL, 3 to 8 digits a
    SHORTCODE, up to 11 letters and digits (at least one letter) ALPHANUMERIC; unset: the account's default."""
    text = (sender or "").strip()
    if not text:
        return None
    mobile = normalise_au_mobile(text)
    if mobile:
        return e164_au_mobile(mobile), "INTERNATIONAL"
    if re.fullmatch(r"\+\d{8,15}", text):
        return text, "INTERNATIONAL"
    if re.fullmatch(r"\d{3,8}", text):
        return text, "SHORTCODE"
    if re.fullmatch(r"[A-Za-z0-9 ]{1,11}", text) and re.search(r"[A-Za-z]", text):
        return text, "ALPHANUMERIC"
    raise SmsError("SMS_SENDER is neither a phone number, a short code nor an alphanumeric sender (up to 11 "
                   "letters and digits)")


_URL = re.compile(r"(?i)\b(?:https?://|www\.)\S+")
_LONG_QUOTED = re.compile(r"\"[^\"]{24,}\"|'[^']{24,}'")


def _scrub(text: str, secret: str) -> str:
    """An upstream's words made safe to keep: the message body, any link and any long quoted value (where an API
    would echo the content) taken out, on one line, at most 300 characters."""
    if secret:
        text = text.replace(secret, "[message]")
    text = _LONG_QUOTED.sub('"…"', _URL.sub("[link]", text))
    text = " ".join(text.split())
    return text[:300]


def _reason(response: httpx.Response, secret: str) -> str:
    """The gateway's reason for a refusal: its JSON `message` and `details`, scrubbed; nothing if unreadable."""
    return _scrub("; ".join(answer_words(response, ("message", "details"))), secret)


# ------------------------------------------------------------------ choice by configuration

def sms_provider(config: Mapping[str, Any], *, sandbox: bool,
                 default_outbox: str | os.PathLike[str] | None = None) -> SmsProvider:
    """The SMS provider for an account: sandbox accounts, or no `SMS_PROVIDER` configured -> `OutboxSms` in
    `SMS_OUTBOX_DIR`, else `default_outbox` (a caller with an app passes `Path(app.instance_path) / "sms-outbox"`),
    else `DEFAULT_OUTBOX` (<project>/instance/sms-outbox, Flask's default instance folder).
    `SMS_PROVIDER=messagemedia` -> `MessageMediaSms` with `SMS_API_KEY`, `SMS_API_SECRET`, `SMS_SENDER` (optional),
    `SMS_BASE_URL` (optional) and `PROVIDER_TIMEOUT` seconds. A provider named but unusable raises `SmsError`."""
    chosen = str(config.get("SMS_PROVIDER") or "").strip().lower()
    if sandbox or not chosen:
        return OutboxSms(config.get("SMS_OUTBOX_DIR") or default_outbox or DEFAULT_OUTBOX)
    if chosen == "messagemedia":
        return MessageMediaSms(config.get("SMS_API_KEY") or "", config.get("SMS_API_SECRET") or "",
                               sender=config.get("SMS_SENDER"), base_url=config.get("SMS_BASE_URL") or MESSAGEMEDIA_URL,
                               timeout=float(config.get("PROVIDER_TIMEOUT") or 10))
    raise SmsError(f"SMS_PROVIDER {chosen!r} is not known (known: {', '.join(SMS_PROVIDERS)})")
