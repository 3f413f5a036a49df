"""Short obfuscated public numbers (Sqids) derived from database ids, which are never exposed."""
from __future__ import annotations

from functools import lru_cache

from flask import current_app, has_app_context
from sqids import Sqids

from app.config import Config

KINDS = {"program": 1, "entity": 2, "note": 3, "check": 4, "event": 5, "monitor": 6, "id_check": 7, "idpass": 8}


@lru_cache(maxsize=4)
def _sqids(alphabet: str, min_length: int) -> Sqids:
    return Sqids(alphabet=alphabet, min_length=min_length)


def _coder() -> Sqids:
    if has_app_context():
        cfg = current_app.config
        return _sqids(cfg["SQIDS_ALPHABET"], cfg["SQIDS_MIN_LENGTH"])
    return _sqids(Config.SQIDS_ALPHABET, Config.SQIDS_MIN_LENGTH)


def encode(kind: str, id_: int) -> str:
    if has_app_context():
        cfg = current_app.config
        return _encode(cfg["SQIDS_ALPHABET"], cfg["SQIDS_MIN_LENGTH"], kind, id_)
    return _encode(Config.SQIDS_ALPHABET, Config.SQIDS_MIN_LENGTH, kind, id_)


@lru_cache(maxsize=65536)
def _encode(alphabet: str, min_length: int, kind: str, id_: int) -> str:
    """Memoised: a Sqids encode shuffles the alphabet (~30 us), a list page encodes 30, and a number never changes."""
    return _sqids(alphabet, min_length).encode([KINDS[kind], id_])


def decode(kind: str, number: str) -> int | None:
    """The database id behind a public number of the given kind, or None."""
    try:
        values = _coder().decode(number.strip().upper())
    except Exception:
        return None
    if len(values) != 2 or values[0] != KINDS[kind]:
        return None
    # Sqids decodes some foreign strings; only the canonical encoding counts.
    return values[1] if encode(kind, values[1]) == number.strip().upper() else None
