"""A real HTTP receiver on 127.0.0.1 (a thread of this process) that records every request and answers as a test
tells it, and `verify`, which checks a delivery with libraries that are not our code (`standardwebhooks`, `svix`).
Import the `receiver` fixture into a test module or conftest to use it."""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from standardwebhooks.webhooks import Webhook as StandardWebhook
from svix.webhooks import Webhook as SvixWebhook


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    @property
    def json(self) -> dict:
        return json.loads(self.body)

    @property
    def webhook_id(self) -> str:
        return self.headers["webhook-id"]


@dataclass
class Receiver:
    """Answers `status` (or the next of `script`, a list of statuses or (status, headers) pairs) to every POST;
    `hold` (a threading.Event) keeps a request open until it is set."""
    url: str = ""
    got: list[Received] = field(default_factory=list)
    status: int = 200
    script: list = field(default_factory=list)
    hold: threading.Event | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def of_type(self, kind: str) -> list[Received]:
        with self.lock:
            return [r for r in self.got if r.json.get("type") == kind]

    def wait(self, n: int = 1, kind: str | None = None, timeout: float = 20.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.of_type(kind) if kind else list(self.got)
            if len(found) >= n:
                return found
            time.sleep(0.05)
        return self.of_type(kind) if kind else list(self.got)


def verify(received: Received, secret: str) -> dict:
    """The payload, verified by both libraries (each raises on a bad signature or timestamp)."""
    payload = StandardWebhook(secret).verify(received.body, received.headers)
    SvixWebhook(secret).verify(received.body, received.headers)
    return payload


@pytest.fixture
def receiver():
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with state.lock:
                state.got.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body,
                                          time.time()))
                answer = state.script.pop(0) if state.script else state.status
            if state.hold is not None:
                state.hold.wait(30)
            status, headers = answer if isinstance(answer, tuple) else (answer, {})
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            reply = b'{"ok": true}'
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    if state.hold is not None:
        state.hold.set()
    server.shutdown()
    server.server_close()
