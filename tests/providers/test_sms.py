"""SMS delivery (app/providers/sms.py): Australian mobile numbers, the sandbox outbox (files, never the network) and
the MessageMedia adapter against a real local HTTP server that replays answers recorded in the API's published
format (tests/fixtures/sms) and keeps the requests it got."""
from __future__ import annotations

import base64
import json
import os
import socket
import stat
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable

import pytest

from app.providers.base import ProviderError
from app.providers.sms import (DEFAULT_OUTBOX, MessageMediaSms, OutboxSms, SmsError, SmsMessage, SmsProvider,
                               SmsReceipt, normalise_au_mobile, read_outbox, sms_provider)

RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "sms"
LINK = "https://idpass.example/v/Zq8-secret-token-4Jx"
BODY = f"Acme Pty Ltd asks you to verify your identity: {LINK} (expires in 7 days)"


def recorded(name: str) -> bytes:
    return (RECORDED / name).read_bytes()


# ------------------------------------------------------------------ numbers

@pytest.mark.parametrize("typed", ["0412 345 678", "0412345678", "+61 412 345 678", "+61412345678", "61412345678",
                                   "(04) 1234-5678", " 0412-345-678 ", "+61 (0) 412 345 678", "0412.345.678"])
def test_what_people_type_becomes_the_national_mobile_form(typed):
    assert normalise_au_mobile(typed) == "0412345678"


def test_other_mobile_ranges_normalise():
    assert normalise_au_mobile("+61 491 570 156") == "0491570156"  # ACMA's range for fiction
    assert normalise_au_mobile("0499 999 999") == "0499999999"


@pytest.mark.parametrize("typed", [
    "0293744000", "+61 2 9374 4000", "(02) 9374 4000",  # landlines
    "1300 123 456", "131 450",                            # national numbers
    "041234567", "04123456789", "0412 345 6789",          # wrong length
    "0412 ABC 678", "0412345678x", "mobile 0412345678",   # letters
    "0412345678 ext 12",
    "+64 21 123 4567", "+44 7700 900123",                 # mobiles of other countries
    "0550 123 456", "0412;345678", "", "   ", None, 412345678,
])
def test_anything_else_is_not_an_australian_mobile(typed):
    assert normalise_au_mobile(typed) is None


# ------------------------------------------------------------------ the sandbox outbox

@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("the network was called")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_the_outbox_writes_one_file_per_message_and_never_calls_the_network(tmp_path, no_network):
    outbox = OutboxSms(tmp_path / "sms")
    assert isinstance(outbox, SmsProvider)
    first = outbox.send(SmsMessage(to="+61 412 345 678", body=BODY, reference="ver-1"))
    second = outbox.send(SmsMessage(to="0491570156", body="second", reference="ver/2 ../x"))
    assert isinstance(first, SmsReceipt) and first.provider == "outbox" and first.message_id
    assert first.sent_at.tzinfo is not None and first.message_id != second.message_id

    files = sorted(p.name for p in (tmp_path / "sms").iterdir())
    assert len(files) == 2 and all(name.endswith(".json") for name in files)  # no temporary file left behind
    assert files[0].endswith("-ver-1.json") and files[1].endswith("-ver_2____x.json")  # the reference, file-safe
    assert stat.S_IMODE(os.stat(tmp_path / "sms" / files[0]).st_mode) == 0o600  # the body holds the link

    messages = read_outbox(tmp_path / "sms")
    assert [m["reference"] for m in messages] == ["ver-1", "ver/2 ../x"]
    assert messages[0]["to"] == "0412345678" and messages[0]["to_e164"] == "+61412345678"
    assert messages[0]["body"] == BODY and messages[0]["message_id"] == first.message_id
    assert datetime.fromisoformat(messages[0]["sent_at"]) == first.sent_at


def test_the_same_reference_twice_keeps_both_messages(tmp_path):
    outbox = OutboxSms(tmp_path)
    for _ in range(3):
        outbox.send(SmsMessage(to="0412345678", body=BODY, reference="same"))
    assert len(read_outbox(tmp_path)) == 3


def test_the_outbox_refuses_what_the_gateway_would(tmp_path):
    outbox = OutboxSms(tmp_path)
    with pytest.raises(SmsError, match="not an Australian mobile"):
        outbox.send(SmsMessage(to="02 9374 4000", body=BODY, reference="r"))
    with pytest.raises(SmsError, match="no text"):
        outbox.send(SmsMessage(to="0412345678", body="  ", reference="r"))
    assert read_outbox(tmp_path) == [] and read_outbox(tmp_path / "missing") == []


def test_an_unwritable_outbox_is_an_sms_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(SmsError, match="cannot be written") as caught:
        OutboxSms(blocker / "sms").send(SmsMessage(to="0412345678", body=BODY, reference="r"))
    assert caught.value.retryable and BODY not in str(caught.value)


def test_the_body_stays_out_of_the_message_repr():
    message = SmsMessage(to="0412345678", body=BODY, reference="r")
    assert LINK not in repr(message) and "0412345678" in repr(message)


# ------------------------------------------------------------------ MessageMedia against a local server

@dataclass
class Answer:
    status: int
    body: bytes | Callable[[dict[str, Any]], bytes] = b""
    delay: float = 0.0
    content_type: str = "application/json"


@dataclass
class Gateway:
    url: str
    answers: list[Answer] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def provider(self, **kwargs) -> MessageMediaSms:
        kwargs = {"sender": None, "timeout": 2.0, **kwargs}
        return MessageMediaSms("test-key", "test-secret", base_url=self.url, **kwargs)


@pytest.fixture
def gateway(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    state = Gateway(url="")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):  # noqa: N802 (http.server's naming)
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            request = {"method": self.command, "path": self.path, "headers": dict(self.headers.items()),
                       "raw": raw}
            state.requests.append(request)
            answer = state.answers.pop(0) if state.answers else Answer(404, b'{"message": "no answer recorded"}')
            if answer.delay:
                time.sleep(answer.delay)
            body = answer.body(request) if callable(answer.body) else answer.body
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (the timeout test)
                pass

        do_GET = do_POST

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()
    thread.join(5)


def message(reference: str = "ver-7f3a") -> SmsMessage:
    return SmsMessage(to="0412 345 678", body=BODY, reference=reference)


def test_a_202_gives_a_receipt_and_the_request_follows_the_interface(gateway):
    gateway.answers.append(Answer(202, recorded("accepted.json")))
    receipt = gateway.provider(sender="AcmeVerify").send(message())
    assert receipt.provider == "messagemedia" and receipt.message_id == "04fe9a97-a579-43c5-bb1a-58ed29bf0a6a"
    assert receipt.sent_at.tzinfo is not None

    [request] = gateway.requests
    assert request["method"] == "POST" and request["path"] == "/v1/messages"
    headers = {k.lower(): v for k, v in request["headers"].items()}
    assert headers["authorization"] == "Basic " + base64.b64encode(b"test-key:test-secret").decode()
    assert headers["content-type"].startswith("application/json") and headers["accept"] == "application/json"
    assert json.loads(request["raw"]) == {"messages": [{
        "content": BODY, "destination_number": "+61412345678", "format": "SMS",
        "metadata": {"reference": "ver-7f3a"},
        "source_number": "AcmeVerify", "source_number_type": "ALPHANUMERIC"}]}


@pytest.mark.parametrize("sender, source", [
    ("0491 570 156", {"source_number": "+61491570156", "source_number_type": "INTERNATIONAL"}),
    ("+6421123456", {"source_number": "+6421123456", "source_number_type": "INTERNATIONAL"}),
    ("19001234", {"source_number": "19001234", "source_number_type": "SHORTCODE"}),
    (None, {}),  # the account's default sender
])
def test_the_sender_and_its_type(gateway, sender, source):
    gateway.answers.append(Answer(202, recorded("accepted.json")))
    gateway.provider(sender=sender).send(message())
    item = json.loads(gateway.requests[0]["raw"])["messages"][0]
    assert {k: v for k, v in item.items() if k.startswith("source_")} == source


def test_a_bad_sender_or_missing_credentials_are_refused_before_any_request():
    with pytest.raises(SmsError, match="SMS_SENDER"):
        MessageMediaSms("k", "s", sender="Acme Verification Services")  # longer than 11 characters
    with pytest.raises(SmsError, match="SMS_API_KEY"):
        MessageMediaSms("k", "")


def test_a_number_that_is_not_an_australian_mobile_is_never_sent(gateway):
    with pytest.raises(SmsError, match="not an Australian mobile"):
        gateway.provider().send(SmsMessage(to="02 9374 4000", body=BODY, reference="r"))
    assert gateway.requests == []


def _echo_content(request: dict[str, Any]) -> bytes:
    """An upstream that quotes what it was sent in its refusal (the error text must still leave it out)."""
    content = json.loads(request["raw"])["messages"][0]["content"]
    return json.dumps({"message": f"Invalid content {content}",
                       "details": [f'content "{content}" is not allowed', f"link {LINK} is blocked"]}).encode()


@pytest.mark.parametrize("answer, expected, retryable", [
    (Answer(400, recorded("invalid_request.json")), "HTTP 400: Invalid or missing parameters; destination_number",
     False),
    (Answer(401, recorded("unauthorized.json")), "HTTP 401: Unauthenticated", False),
    (Answer(500, recorded("server_error.json")), "HTTP 500: An internal error occurred", True),
    (Answer(429, b""), "HTTP 429", True),
    (Answer(502, b"<html><body>Bad Gateway</body></html>", content_type="text/html"), "HTTP 502", True),
    (Answer(400, _echo_content), "HTTP 400: Invalid content [message]", False),
], ids=["400", "401", "500", "429", "502-html", "400-echoes-the-content"])
def test_refusals_are_sms_errors_without_the_body(gateway, answer, expected, retryable):
    gateway.answers.append(answer)
    with pytest.raises(SmsError) as caught:
        gateway.provider().send(message())
    text = str(caught.value)
    assert text.startswith("MessageMedia answered " + expected)
    assert BODY not in text and LINK not in text and "secret-token" not in text
    assert caught.value.retryable is retryable and not caught.value.maybe_sent
    assert isinstance(caught.value, ProviderError)


@pytest.mark.parametrize("fixture", ["garbled.json", "accepted_without_id.json"])
def test_an_unreadable_acceptance_is_an_sms_error_that_may_have_sent(gateway, fixture):
    gateway.answers.append(Answer(202, recorded(fixture)))
    with pytest.raises(SmsError, match="without a readable message id") as caught:
        gateway.provider().send(message())
    assert caught.value.maybe_sent and not caught.value.retryable and LINK not in str(caught.value)


def test_a_timeout_is_a_retryable_sms_error_that_may_have_sent(gateway):
    gateway.answers.append(Answer(202, recorded("accepted.json"), delay=1.5))
    started = time.monotonic()
    with pytest.raises(SmsError, match="did not answer in time") as caught:
        gateway.provider(timeout=0.3).send(message())
    assert time.monotonic() - started < 1.4
    assert caught.value.retryable and caught.value.maybe_sent and LINK not in str(caught.value)
    assert len(gateway.requests) == 1


def test_an_unreachable_gateway_is_a_retryable_sms_error():
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = MessageMediaSms("k", "s", base_url=f"http://127.0.0.1:{port}", timeout=2.0)
    with pytest.raises(SmsError, match="unreachable|reached") as caught:
        provider.send(message())
    assert caught.value.retryable and not caught.value.maybe_sent and LINK not in str(caught.value)


# ------------------------------------------------------------------ choice by configuration

LIVE = {"SMS_PROVIDER": "messagemedia", "SMS_API_KEY": "k", "SMS_API_SECRET": "s", "SMS_SENDER": "Acme",
        "SMS_BASE_URL": "http://127.0.0.1:9", "PROVIDER_TIMEOUT": 4}


def test_sandbox_accounts_always_get_the_outbox(tmp_path):
    provider = sms_provider({**LIVE, "SMS_OUTBOX_DIR": str(tmp_path)}, sandbox=True)
    assert isinstance(provider, OutboxSms) and provider.folder == tmp_path


def test_without_a_provider_live_accounts_get_the_outbox_too(tmp_path):
    assert sms_provider({}, sandbox=False, default_outbox=tmp_path / "o").folder == tmp_path / "o"
    assert sms_provider({"SMS_PROVIDER": ""}, sandbox=False).folder == DEFAULT_OUTBOX
    assert DEFAULT_OUTBOX.parts[-2:] == ("instance", "sms-outbox")


def test_messagemedia_by_configuration():
    provider = sms_provider(LIVE, sandbox=False)
    assert isinstance(provider, MessageMediaSms) and provider.name == "messagemedia"
    assert provider.base_url == "http://127.0.0.1:9" and provider.auth == ("k", "s")
    assert provider.source == ("Acme", "ALPHANUMERIC") and provider.timeout.read == 4
    assert sms_provider({**LIVE, "SMS_BASE_URL": None}, sandbox=False).base_url == "https://api.messagemedia.com"


def test_a_provider_named_but_unusable_is_an_sms_error():
    with pytest.raises(SmsError, match="SMS_API_KEY"):
        sms_provider({**LIVE, "SMS_API_SECRET": None}, sandbox=False)
    with pytest.raises(SmsError, match="not known"):
        sms_provider({**LIVE, "SMS_PROVIDER": "carrier-pigeon"}, sandbox=False)


def test_the_app_config_has_the_sms_keys():
    from app.config import Config
    for key in ("SMS_PROVIDER", "SMS_API_KEY", "SMS_API_SECRET", "SMS_BASE_URL", "SMS_SENDER", "SMS_OUTBOX_DIR"):
        assert hasattr(Config, key)
