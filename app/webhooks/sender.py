"""One HTTP attempt of a delivery, with no database in sight: resolve and check the URL (app/webhooks/network.py),
connect to the checked address (TLS verified against the URL's host name), POST the signed body, follow no
redirect, give up after the timeout, and bring back what the log keeps (status, latency, headers, the start of
the body) and what the retry policy needs (`Retry-After`). urllib3 (a dependency of every Python HTTP stack) is
used directly because it lets the connection go to an address we chose while the Host header and the TLS server
name stay the URL's."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

import certifi
import urllib3
from urllib3.exceptions import HTTPError as Urllib3Error
from urllib3.exceptions import NewConnectionError
from urllib3.exceptions import TimeoutError as Urllib3Timeout

from app.webhooks import network

EXCERPT_BYTES = 2048
MAX_HEADERS = 40
USER_AGENT = "Sentinel-Webhooks/1.0"


@dataclass(frozen=True)
class Request:
    url: str
    body: str
    headers: dict[str, str]


@dataclass
class Outcome:
    status_code: int | None = None
    latency_ms: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    excerpt: str | None = None
    error: str | None = None          # no answer: refused URL, DNS, connection, timeout
    retry_after: float | None = None  # seconds asked for by the receiver (Retry-After)

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """A Retry-After header (seconds, or an HTTP date) as seconds from now; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _pool(target: network.Target, timeout: float):
    options = dict(timeout=urllib3.Timeout(total=timeout), retries=False, maxsize=1, block=False)
    if target.scheme == "https":
        return urllib3.HTTPSConnectionPool(target.address, target.port, server_hostname=target.host,
                                           assert_hostname=target.host, cert_reqs="CERT_REQUIRED",
                                           ca_certs=certifi.where(), **options)
    return urllib3.HTTPConnectionPool(target.address, target.port, **options)


def _host_header(target: network.Target) -> str:
    host = f"[{target.host}]" if ":" in target.host else target.host
    default = 443 if target.scheme == "https" else 80
    return host if target.port == default else f"{host}:{target.port}"


def send(request: Request, *, allowed: tuple, timeout: float) -> Outcome:
    """POST the request once; never raises for what the receiver or the network does."""
    started = time.monotonic()
    outcome = Outcome()
    try:
        target = network.resolve(request.url, allowed=allowed, timeout=min(timeout, 5.0))
    except network.Refused as exc:
        outcome.error = f"Not sent: {exc}"
        return outcome
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, "Host": _host_header(target),
               **request.headers}
    pool = _pool(target, timeout)
    try:
        response = pool.urlopen("POST", target.path, body=request.body.encode(), headers=headers, redirect=False,
                                preload_content=False, assert_same_host=False, release_conn=False)
        try:
            outcome.status_code = response.status
            outcome.headers = {k: v[:500] for k, v in list(response.headers.items())[:MAX_HEADERS]}
            excerpt = response.read(EXCERPT_BYTES, decode_content=True) or b""
            outcome.excerpt = excerpt.decode("utf-8", errors="replace") if excerpt else None
        finally:
            response.release_conn()
        outcome.retry_after = retry_after_seconds(response.headers.get("Retry-After"))
    except NewConnectionError as exc:  # a subclass of the connect timeout in urllib3 2: refused, unreachable
        reason = str(exc).split("Failed to establish a new connection: ", 1)[-1]  # "[Errno 111] Connection refused"
        outcome.error = f"Connection failed: {reason}"[:500]
    except Urllib3Timeout:
        outcome.error = f"No answer within {timeout:.0f} s (timeout)."
    except (Urllib3Error, OSError) as exc:
        outcome.error = f"Connection failed: {type(exc).__name__}: {exc}"[:500]
    finally:
        pool.close()
        outcome.latency_ms = int((time.monotonic() - started) * 1000)
    return outcome
