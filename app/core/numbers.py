"""Short public numbers derived from database ids, which are never exposed, and which reveal nothing about them.

A number reads `ENT-K3QX7RTAMV9`: a prefix naming the kind of record, then 11 characters of an alphabet without
the characters people confuse when they read a number aloud or type it from paper (no 0/O, 1/I/L, 5/S, 2/Z,
8/B). They are the id run through a keyed pseudorandom permutation of 48-bit numbers (a balanced Feistel network
of ROUNDS rounds whose round function is HMAC-SHA256 under the deployment's own key and the record's kind), written
in base 25: without the key, consecutive records get unrelated numbers, so no tenant can tell an id, an order or
how many records the platform holds (docs/decisions.md, "Public numbers"). The key is made once per deployment
(its first migration) and kept in the database (`deployment_settings`), so that every web host and worker agrees.

Records numbered before that (an existing deployment) keep their numbers: Sqids over SQIDS_ALPHABET of [kind,
id], for ids up to the last one of each kind at the migration (`numbers_legacy_max_ids`); those are at most 10
characters long, so the two kinds never meet. Wherever a user types a number, it is accepted in any case, with
or without its prefix and dash."""
from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import threading
from functools import lru_cache

from flask import current_app, has_app_context
from sqids import Sqids

from app.config import Config

KINDS = {"program": 1, "entity": 2, "note": 3, "check": 4, "event": 5, "monitor": 6, "id_check": 7, "idpass": 8}
PREFIXES = {"program": "PRG", "entity": "ENT", "note": "NTE", "check": "CHK", "event": "EVT", "monitor": "MON",
            "id_check": "IDC", "idpass": "IDP"}
CONFUSABLE = set("0O1IL5S2Z8B")
KEY_SETTING = "numbers_key"
LEGACY_SETTING = "numbers_legacy_max_ids"
BITS = 48                 # ids up to 2.8e14
HALF = BITS // 2
ROUNDS = 10               # as FF1: beyond the 4 of Luby-Rackoff, for a margin at this small block size
BODY_LENGTH = 11          # 25 ** 11 > 2 ** 48
_MASK = (1 << HALF) - 1


@lru_cache(maxsize=4)
def _sqids(alphabet: str, min_length: int) -> Sqids:
    bad = CONFUSABLE & set(alphabet.upper())
    if bad:
        raise ValueError(f"SQIDS_ALPHABET holds look-alike characters: {''.join(sorted(bad))}")
    if len(set(alphabet.upper())) ** BODY_LENGTH < 1 << BITS:
        raise ValueError("SQIDS_ALPHABET needs at least 21 different characters")
    return Sqids(alphabet=alphabet, min_length=min_length)


def _settings() -> tuple[str, int]:
    if has_app_context():
        cfg = current_app.config
        return cfg["SQIDS_ALPHABET"], cfg["SQIDS_MIN_LENGTH"]
    return Config.SQIDS_ALPHABET, Config.SQIDS_MIN_LENGTH


# ------------------------------------------------------------------ the deployment's key

_state: dict[str, tuple[bytes, tuple[tuple[str, int], ...]]] = {}
_lock = threading.Lock()


def _load() -> tuple[bytes, tuple[tuple[str, int], ...]]:
    """(key, legacy max ids) of this app's database, read once per process. The key is made at the migration;
    a database made otherwise gets one on first use (two processes racing: the first insert wins, both read it)."""
    from sqlalchemy import insert, select
    from sqlalchemy.exc import IntegrityError

    from app.core.models import DeploymentSetting
    from app.core.types import utcnow
    from app.extensions import db
    where = current_app.config["SQLALCHEMY_DATABASE_URI"]
    known = _state.get(where)
    if known is not None:
        return known
    with _lock:
        table = DeploymentSetting.__table__
        with db.engine.connect() as conn:  # its own connection: never part of the caller's transaction
            values = dict(conn.execute(select(table.c.name, table.c.value).where(
                table.c.name.in_((KEY_SETTING, LEGACY_SETTING)))).all())
        if KEY_SETTING not in values:
            try:
                with db.engine.begin() as conn:
                    conn.execute(insert(table).values(name=KEY_SETTING, value=secrets.token_hex(32),
                                                      created_at=utcnow()))
            except IntegrityError:
                pass  # another process made it first
            with db.engine.connect() as conn:
                values[KEY_SETTING] = conn.execute(select(table.c.value).where(table.c.name == KEY_SETTING)).scalar()
        legacy = json.loads(values.get(LEGACY_SETTING) or "{}")
        state = (bytes.fromhex(values[KEY_SETTING]), tuple(sorted((k, int(v)) for k, v in legacy.items())))
        _state[where] = state
        return state


def forget() -> None:
    """Read the key again on next use (tests that change it)."""
    _state.clear()


def _context() -> tuple[str, int, bytes, tuple[tuple[str, int], ...]]:
    if not has_app_context():
        raise RuntimeError("public numbers need the app (its database holds the deployment's key)")
    alphabet, min_length = _settings()
    key, legacy = _load()
    return alphabet, min_length, key, legacy


# ------------------------------------------------------------------ the permutation

def _round(key: bytes, kind: str, index: int, half: int) -> int:
    digest = hmac.new(key, f"{kind}:{index}:{half}".encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:HALF // 8], "big")


def _permute(key: bytes, kind: str, value: int) -> int:
    left, right = value >> HALF, value & _MASK
    for i in range(ROUNDS):
        left, right = right, left ^ _round(key, kind, i, right)
    return (left << HALF) | right


def _unpermute(key: bytes, kind: str, value: int) -> int:
    left, right = value >> HALF, value & _MASK
    for i in reversed(range(ROUNDS)):
        left, right = right ^ _round(key, kind, i, left), left
    return (left << HALF) | right


def _digits(value: int, alphabet: str) -> str:
    out = []
    for _ in range(BODY_LENGTH):
        value, digit = divmod(value, len(alphabet))
        out.append(alphabet[digit])
    return "".join(reversed(out))


def _value(text: str, alphabet: str) -> int | None:
    value = 0
    for ch in text:
        digit = alphabet.find(ch)
        if digit < 0:
            return None
        value = value * len(alphabet) + digit
    return value


# ------------------------------------------------------------------ encode, decode

def encode(kind: str, id_: int) -> str:
    alphabet, min_length, key, legacy = _context()
    return _encode(alphabet, min_length, key, legacy, kind, id_)


def _legacy_max(legacy: tuple[tuple[str, int], ...], kind: str) -> int:
    return next((n for k, n in legacy if k == kind), 0)


@lru_cache(maxsize=65536)
def _encode(alphabet: str, min_length: int, key: bytes, legacy: tuple, kind: str, id_: int) -> str:
    """Memoised: a list page encodes 30 numbers, and a number never changes."""
    if id_ <= _legacy_max(legacy, kind):
        return f"{PREFIXES[kind]}-{_sqids(alphabet, min_length).encode([KINDS[kind], id_])}"
    if not 0 < id_ < (1 << BITS):
        raise ValueError(f"no public number for id {id_}")
    return f"{PREFIXES[kind]}-{_digits(_permute(key, kind, id_), alphabet.upper())}"


_SPACES = re.compile(r"[\s\-_.]+")


def decode(kind: str, number: str) -> int | None:
    """The database id behind a public number of the given kind (any case, prefix optional), or None."""
    text = _SPACES.sub("", (number or "").strip().upper())
    prefix = PREFIXES[kind]
    if text.startswith(prefix):
        text = text[len(prefix):]
    if not text or not text.isalnum() or not text.isascii() or len(text) > 32:
        return None
    alphabet, min_length, key, legacy = _context()
    if len(text) == BODY_LENGTH:
        value = _value(text, alphabet.upper())
        if value is None or value >= (1 << BITS):
            return None
        id_ = _unpermute(key, kind, value)
        return id_ if id_ > _legacy_max(legacy, kind) else None
    try:
        values = _sqids(alphabet, min_length).decode(text)
    except Exception:
        return None
    if len(values) != 2 or values[0] != KINDS[kind] or not 0 < values[1] <= _legacy_max(legacy, kind):
        return None
    # Sqids decodes some foreign strings; only the canonical encoding counts.
    return values[1] if _encode(alphabet, min_length, key, legacy, kind, values[1]) == f"{prefix}-{text}" else None
