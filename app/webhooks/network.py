"""Where a webhook may be sent: no request forgery. A URL is http(s) with a host and no credentials, and every
address its host resolves to must be public (not private, loopback, link-local, the cloud metadata address,
shared, multicast or reserved) unless it lies in a network the operator allows (WEBHOOK_ALLOWED_NETWORKS, e.g.
`127.0.0.0/8` for a receiver on the same machine). It is checked at registration and again before every
attempt, after DNS resolution; the attempt then connects to the address that was checked (no second lookup
that a rebinding DNS server could answer differently)."""
from __future__ import annotations

import ipaddress
import socket
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_resolver = ThreadPoolExecutor(max_workers=4, thread_name_prefix="webhook-dns")


class Refused(ValueError):
    """A URL we will not send to; the message says why, in words an integrator can act on."""


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str           # as written in the URL (the Host header and the TLS server name)
    port: int
    path: str           # path and query
    address: str        # the checked address to connect to


@lru_cache(maxsize=16)
def allowed_networks(setting: str | None) -> tuple[Network, ...]:
    """WEBHOOK_ALLOWED_NETWORKS: comma-separated networks (CIDR) that may be sent to although not public."""
    nets = []
    for part in (setting or "").split(","):
        if part.strip():
            nets.append(ipaddress.ip_network(part.strip(), strict=False))
    return tuple(nets)


def _public(address: Address) -> bool:
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    return address.is_global and not (address.is_multicast or address.is_reserved)


def address_allowed(address: Address, allowed: tuple[Network, ...]) -> bool:
    return _public(address) or any(address.version == net.version and address in net for net in allowed)


def parse(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path) of a URL we could send to, or Refused."""
    if not isinstance(url, str) or len(url) > 2048:
        raise Refused("Must be an http or https URL of at most 2048 characters.")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise Refused("Must be a valid http or https URL.") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Refused("Must be an http or https URL with a host name.")
    if parts.username is not None or parts.password is not None:
        raise Refused("Must not carry credentials (user:password@): they would be logged with every delivery.")
    if parts.fragment:
        raise Refused("Must not have a fragment (#...).")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), path


def _lookup(host: str, port: int) -> list[str]:
    return sorted({info[4][0] for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)})


def resolve(url: str, *, allowed: tuple[Network, ...], timeout: float = 5.0) -> Target:
    """The URL's target with an address that may be sent to, or Refused: every address the host resolves to must
    be allowed (one private address among public ones refuses the URL: a DNS answer must not choose for us)."""
    scheme, host, port, path = parse(url)
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            addresses = _resolver.submit(_lookup, host, port).result(timeout=timeout)
        except FutureTimeout:
            raise Refused(f"The host {host} did not resolve within {timeout:.0f} s.") from None
        except (OSError, UnicodeError):
            raise Refused(f"The host {host} does not resolve.") from None
    if not addresses:
        raise Refused(f"The host {host} does not resolve.")
    for text in addresses:
        if not address_allowed(ipaddress.ip_address(text.split("%", 1)[0]), allowed):
            raise Refused(f"The host {host} resolves to {text}, a private, loopback, link-local or reserved "
                          "address: webhooks are sent to public addresses only.")
    return Target(scheme=scheme, host=host, port=port, path=path, address=addresses[0].split("%", 1)[0])
