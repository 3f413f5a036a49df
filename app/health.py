"""Health of the process's dependencies, for `GET /healthz` (load balancers and orchestrators).

The database is required: without it nothing can be served, so the answer is 503 and the instance should be
taken out of rotation. Redis is not: without it the app serves reads and writes that need no background
work, refuses the rest with 503, and rate limits fail open; so "redis": "down" still answers 200."""
from __future__ import annotations

import logging

from sqlalchemy import text
from app.extensions import db
from app.jobs import redis_available

log = logging.getLogger(__name__)


def _database() -> str:
    try:
        db.session.execute(text("SELECT 1"))
        return "ok"
    except Exception as exc:
        log.warning("health: database unreachable: %s", exc)
        return "down"
    finally:
        db.session.remove()


def _redis() -> str:
    available = redis_available()
    if available is None:
        return "not_configured"  # embedded mode: jobs in-process, rate limits in memory
    return "ok" if available else "down"


def database_warnings() -> list[str]:
    """Settings of the database server the product runs badly without, said once when the scheduler starts.
    PostgreSQL's autovacuum also keeps the planner's statistics: with it off, tables that started empty keep being
    planned as empty as they grow, and reads by uuid turn into nested loops (docs/performance.md, the load run of
    28 Nov 2026)."""
    if db.engine.dialect.name != "postgresql":
        return []
    try:
        autovacuum = db.session.execute(text("SHOW autovacuum")).scalar()
    finally:
        db.session.remove()
    if autovacuum != "on":
        return ["PostgreSQL's autovacuum is off: the planner's statistics go stale as tables grow and reads slow "
                "down (turn it on, or ANALYZE on a schedule: docs/operations.md)."]
    return []


def health() -> tuple[dict[str, str], int]:
    body = {"database": _database(), "redis": _redis()}
    return body, 200 if body["database"] == "ok" else 503
