"""A local ID gateway for the adapters' tests (test_dvs.py, test_nz_identity.py, test_payroll.py): a real HTTP server
on 127.0.0.1 that replays answers hand-written to the shapes the adapters assume (tests/fixtures/id_providers) and
keeps the requests it got."""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "id_providers"


def recorded(name: str) -> bytes:
    return (RECORDED / name).read_bytes()


@dataclass
class Answer:
    status: int
    body: bytes = b""
    delay: float = 0.0
    content_type: str = "application/json"


@dataclass
class LocalGateway:
    """A real HTTP server on 127.0.0.1: answers each request with the next `Answer` and keeps what it was sent."""

    url: str = ""
    answers: list[Answer] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __enter__(self) -> "LocalGateway":
        state = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 (http.server's naming)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                state.requests.append({"method": self.command, "path": self.path, "raw": raw,
                                       "headers": {k.lower(): v for k, v in self.headers.items()}})
                answer = state.answers.pop(0) if state.answers else Answer(404, b'{"message": "no answer"}')
                if answer.delay:
                    time.sleep(answer.delay)
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", answer.content_type)
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (the timeout tests)
                    pass

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def answer(self, status: int, fixture: str | None = None, *, body: bytes = b"", delay: float = 0.0,
               content_type: str = "application/json") -> None:
        self.answers.append(Answer(status, recorded(fixture) if fixture else body, delay, content_type))

    @property
    def sent(self) -> dict[str, Any]:
        return json.loads(self.requests[-1]["raw"])
