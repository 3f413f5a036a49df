"""The only module that reads environment variables."""
from __future__ import annotations

import json
import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


class Config:
    SECRET_KEY = _env("SECRET_KEY", "dev-insecure-change-me")
    SQLALCHEMY_DATABASE_URI = _env("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'instance' / 'screening.db'}"
    SQLALCHEMY_ENGINE_OPTIONS: dict = {"pool_pre_ping": True}
    REDIS_URL = _env("REDIS_URL")
    # RQ: when no REDIS_URL is configured jobs run in-process (a background thread after commit).
    RQ_QUEUE_PREFIX = _env("RQ_QUEUE_PREFIX", "")

    # Sessions and CSRF
    SESSION_COOKIE_HTTPONLY = True
    SESSION_COOKIE_SAMESITE = "Lax"
    SESSION_COOKIE_SECURE = _env("SESSION_COOKIE_SECURE", "0") == "1"
    REMEMBER_COOKIE_HTTPONLY = True
    REMEMBER_COOKIE_SECURE = SESSION_COOKIE_SECURE
    REMEMBER_COOKIE_SAMESITE = "Lax"
    WTF_CSRF_TIME_LIMIT = None
    PERMANENT_SESSION_LIFETIME = 60 * 60 * 12

    # Rate limiting (Flask-Limiter). Storage is Redis when REDIS_URL is set.
    RATELIMIT_ENABLED = _env("RATELIMIT_ENABLED", "1") == "1"
    RATELIMIT_HEADERS_ENABLED = True
    RATELIMIT_HEADER_LIMIT = "RateLimit-Limit"
    RATELIMIT_HEADER_REMAINING = "RateLimit-Remaining"
    RATELIMIT_HEADER_RESET = "RateLimit-Reset"
    RATELIMIT_HEADER_RETRY_AFTER = "Retry-After"
    RATELIMIT_HEADER_RETRY_AFTER_VALUE = "delta-seconds"
    RATELIMIT_KEY_PREFIX = _env("RATELIMIT_KEY_PREFIX", "screening")
    DEFAULT_API_RATE_LIMIT = int(_env("DEFAULT_API_RATE_LIMIT", "600"))
    LOGIN_RATE_LIMIT = _env("LOGIN_RATE_LIMIT", "10 per minute")

    # Public short numbers (Sqids). Changing the alphabet changes every public number.
    SQIDS_ALPHABET = _env("SQIDS_ALPHABET", "K3Q8ZXWN7RT5V2HJ9MCP4YFL6BGDS")
    SQIDS_MIN_LENGTH = int(_env("SQIDS_MIN_LENGTH", "7"))

    # `flask lists update`: a JSON object {list name: {"format": ..., "files": {filename: url}}} that replaces
    # the built-in official publication URLs entry by entry (app/screening/sources.py).
    SCREENING_LIST_SOURCES = json.loads(_env("SCREENING_LIST_SOURCES", "{}"))

    # Built screening indexes (one directory per set of list versions, memory-mapped by every process that
    # screens). Empty: each process builds its index in memory (tests).
    SCREENING_INDEX_DIR = _env("SCREENING_INDEX_DIR", str(BASE_DIR / "instance" / "screening-index"))
    # Approximate bytes of each in-process cache of the index (part matches, postings, decoded records).
    SCREENING_INDEX_CACHE_BYTES = int(_env("SCREENING_INDEX_CACHE_BYTES", str(16 * 1024 * 1024)))

    SOFT_DELETE_RECOVERY_DAYS = 30
    IDEMPOTENCY_TTL_HOURS = 24
    JSON_SORT_KEYS = False


class TestConfig(Config):
    TESTING = True
    WTF_CSRF_ENABLED = True
    SECRET_KEY = "test-secret"
    SCREENING_INDEX_DIR = ""  # in memory per process; tests/screening point it at a temporary folder


def ratelimit_storage_uri(redis_url: str | None) -> str:
    return redis_url if redis_url else "memory://"
