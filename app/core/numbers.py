"""Short obfuscated public numbers (Sqids) derived from database ids, which are never exposed.

A number reads `ENT-K3QX7RT`: a prefix naming the kind of record, then Sqids over an alphabet without the
characters people confuse when they read a number aloud or type it from paper (no 0/O, 1/I/L, 5/S, 2/Z, 8/B).
Wherever a user types one, it is accepted in any case, with or without its prefix and dash."""
from __future__ import annotations

import re
from functools import lru_cache

from flask import current_app, has_app_context
from sqids import Sqids

from app.config import Config

KINDS = {"program": 1, "entity": 2, "note": 3, "check": 4, "event": 5, "monitor": 6, "id_check": 7, "idpass": 8}
PREFIXES = {"program": "PRG", "entity": "ENT", "note": "NTE", "check": "CHK", "event": "EVT", "monitor": "MON",
            "id_check": "IDC", "idpass": "IDP"}
CONFUSABLE = set("0O1IL5S2Z8B")


@lru_cache(maxsize=4)
def _sqids(alphabet: str, min_length: int) -> Sqids:
    bad = CONFUSABLE & set(alphabet.upper())
    if bad:
        raise ValueError(f"SQIDS_ALPHABET holds look-alike characters: {''.join(sorted(bad))}")
    return Sqids(alphabet=alphabet, min_length=min_length)


def _settings() -> tuple[str, int]:
    if has_app_context():
        cfg = current_app.config
        return cfg["SQIDS_ALPHABET"], cfg["SQIDS_MIN_LENGTH"]
    return Config.SQIDS_ALPHABET, Config.SQIDS_MIN_LENGTH


def encode(kind: str, id_: int) -> str:
    alphabet, min_length = _settings()
    return _encode(alphabet, min_length, kind, id_)


@lru_cache(maxsize=65536)
def _encode(alphabet: str, min_length: int, kind: str, id_: int) -> str:
    """Memoised: a Sqids encode shuffles the alphabet (~30 us), a list page encodes 30, and a number never changes."""
    return f"{PREFIXES[kind]}-{_sqids(alphabet, min_length).encode([KINDS[kind], id_])}"


_SPACES = re.compile(r"[\s\-_.]+")


def decode(kind: str, number: str) -> int | None:
    """The database id behind a public number of the given kind (any case, prefix optional), or None."""
    text = _SPACES.sub("", (number or "").strip().upper())
    prefix = PREFIXES[kind]
    if text.startswith(prefix):
        text = text[len(prefix):]
    if not text or not text.isalnum() or not text.isascii() or len(text) > 32:
        return None
    alphabet, min_length = _settings()
    try:
        values = _sqids(alphabet, min_length).decode(text)
    except Exception:
        return None
    if len(values) != 2 or values[0] != KINDS[kind]:
        return None
    # Sqids decodes some foreign strings; only the canonical encoding counts.
    return values[1] if _encode(alphabet, min_length, kind, values[1]) == f"{prefix}-{text}" else None
