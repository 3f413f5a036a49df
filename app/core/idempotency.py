"""Idempotency-Key on POST: replay, 409 while in flight, 422 on reuse with another body.

Records live in their own table and are written on their own connection, outside the request's
transaction, so that the unique (account, key) constraint arbitrates concurrent requests."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from app.core.models import IdempotencyRecord
from app.core.errors import Conflict, Invalid, Unprocessable
from app.core.types import utcnow
from app.extensions import db

MAX_KEY_LENGTH = 255


def request_fingerprint(method: str, path: str, raw_body: bytes, form: dict | None = None,
                        files: dict[str, bytes] | None = None) -> str:
    """Hash of the request: method, path and the parsed JSON body (key order and whitespace do not matter).
    A multipart body is fingerprinted by its fields and file contents, not its random boundary."""
    if form is not None or files:
        canonical = json.dumps({"form": form or {}, "files": {name: hashlib.sha256(data).hexdigest()
                                                             for name, data in (files or {}).items()}},
                               sort_keys=True)
    else:
        try:
            canonical = json.dumps(json.loads(raw_body or b"null"), sort_keys=True, separators=(",", ":"))
        except ValueError:
            canonical = raw_body.decode("utf-8", "replace")
    return hashlib.sha256(f"{method} {path}\n{canonical}".encode()).hexdigest()


@dataclass
class Replay:
    status: int
    body: str


def begin(account_id: int, key: str, method: str, path: str, fingerprint: str, ttl_hours: int) -> int | Replay:
    """Claim the key for this request (returns the record id) or answer from an earlier one."""
    if not key or len(key) > MAX_KEY_LENGTH:
        raise Invalid.field("Idempotency-Key", f"Must be 1 to {MAX_KEY_LENGTH} characters.")
    now = utcnow()
    with db.engine.begin() as conn:
        conn.execute(delete(IdempotencyRecord).where(IdempotencyRecord.account_id == account_id,
                                                     IdempotencyRecord.key == key,
                                                     IdempotencyRecord.expires_at < now))
    try:
        with db.engine.begin() as conn:
            result = conn.execute(insert(IdempotencyRecord).values(
                account_id=account_id, key=key, request_hash=fingerprint, method=method, path=path,
                state="processing", created_at=now, expires_at=now + timedelta(hours=ttl_hours)))
            return result.inserted_primary_key[0]
    except IntegrityError:
        pass
    with db.engine.connect() as conn:
        row = conn.execute(select(IdempotencyRecord.request_hash, IdempotencyRecord.state,
                                  IdempotencyRecord.response_status, IdempotencyRecord.response_body)
                           .where(IdempotencyRecord.account_id == account_id, IdempotencyRecord.key == key)).first()
    if row is None:  # the holder failed and released the key in between: the caller may retry
        raise Conflict("A request with this Idempotency-Key is already being processed.")
    if row.request_hash != fingerprint:
        raise Unprocessable("This Idempotency-Key was reused with a different request body.")
    if row.state != "done":
        raise Conflict("A request with this Idempotency-Key is already being processed.")
    return Replay(status=row.response_status, body=row.response_body)


def finish(record_id: int, status: int, body: str) -> None:
    with db.engine.begin() as conn:
        if status >= 500 or status in (409, 429):
            conn.execute(delete(IdempotencyRecord).where(IdempotencyRecord.id == record_id))
        else:
            conn.execute(update(IdempotencyRecord).where(IdempotencyRecord.id == record_id)
                         .values(state="done", response_status=status, response_body=body))


def release(record_id: int) -> None:
    with db.engine.begin() as conn:
        conn.execute(delete(IdempotencyRecord).where(IdempotencyRecord.id == record_id))


def purge_expired() -> int:
    result = db.session.execute(delete(IdempotencyRecord).where(IdempotencyRecord.expires_at < utcnow()))
    return result.rowcount or 0
