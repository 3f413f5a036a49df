"""Encryption at rest of what must not be kept in clear (ID document numbers, later images): Fernet (AES-128-CBC
with HMAC-SHA256, from `cryptography`), with the keys from configuration (`ID_DATA_KEYS`: newest first, every one
decrypts, so keys rotate without re-encrypting at once)."""
from __future__ import annotations

import base64
import json
from functools import lru_cache
from typing import Any

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from flask import current_app


class SealError(Exception):
    """A sealed value that no configured key opens (a key removed too early, or tampered data)."""


def _derived(secret: str) -> bytes:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"id-data-at-rest", info=b"fernet").derive(secret.encode())
    return base64.urlsafe_b64encode(key)


@lru_cache(maxsize=8)
def _fernet(keys: str | None, secret: str) -> MultiFernet:
    raw = [k.strip() for k in (keys or "").split(",") if k.strip()] or [_derived(secret).decode()]
    return MultiFernet([Fernet(k.encode()) for k in raw])


def _current() -> MultiFernet:
    cfg = current_app.config
    return _fernet(cfg.get("ID_DATA_KEYS"), cfg["SECRET_KEY"])


def seal(value: Any) -> bytes:
    """A JSON value encrypted with the newest key."""
    return _current().encrypt(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def unseal(token: bytes) -> Any:
    try:
        return json.loads(_current().decrypt(bytes(token)))
    except InvalidToken:
        raise SealError("no configured ID_DATA_KEYS key opens this value") from None


def seal_bytes(data: bytes) -> bytes:
    return _current().encrypt(data)


def unseal_bytes(token: bytes) -> bytes:
    try:
        return _current().decrypt(bytes(token))
    except InvalidToken:
        raise SealError("no configured ID_DATA_KEYS key opens this value") from None
