"""The API's rate limit: one budget per API key across every endpoint, counted by the `limits` library.

The counter lives in Redis when `REDIS_URL` is set (shared by every web worker and host) and in process
memory only in the embedded mode. A fixed one-minute window: `RateLimit-Reset` is the number of seconds
until the window ends (IETF draft "RateLimit header fields for HTTP" semantics).

When the storage cannot be reached the limiter fails open: requests are served without a budget, a warning
is logged at most once a minute, and the storage is not tried again for a few seconds (so an outage does
not cost every request a connection attempt). Counting resumes by itself once Redis answers again.
"""
from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from limits import RateLimitItemPerMinute
from limits.storage import storage_from_string
from limits.strategies import FixedWindowRateLimiter

log = logging.getLogger(__name__)

RETRY_STORAGE_AFTER = 2.0  # seconds the limiter stays open before it tries a failed storage again


class ThrottledLog:
    """Logs a message at most once per `interval` seconds (outage warnings, not one per request)."""

    def __init__(self, logger: logging.Logger, interval: float = 60.0):
        self.logger = logger
        self.interval = interval
        self._last = float("-inf")
        self._suppressed = 0
        self._lock = threading.Lock()

    def ready(self) -> bool:
        """True at most once per interval: the caller may log now."""
        with self._lock:
            now = time.monotonic()
            if now - self._last < self.interval:
                self._suppressed += 1
                return False
            self._last = now
            return True

    def warning(self, message: str, *args) -> bool:
        if not self.ready():
            return False
        with self._lock:
            suppressed, self._suppressed = self._suppressed, 0
        if suppressed:
            message += " (%d similar warnings suppressed)"
            args = (*args, suppressed)
        self.logger.warning(message, *args)
        return True


class OncePerMinuteFilter(logging.Filter):
    """For loggers we do not own (Flask-Limiter logs every request it cannot count while its storage is
    down): let one warning a minute through, without its traceback."""

    def __init__(self) -> None:
        super().__init__()
        self._gate = ThrottledLog(log)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        if not self._gate.ready():
            return False
        record.exc_info, record.exc_text = None, None
        return True


@dataclass(frozen=True)
class Budget:
    limit: int
    remaining: int
    reset_after: int  # whole seconds until the window resets (at least 1)
    exceeded: bool

    def headers(self) -> dict[str, str]:
        return {"RateLimit-Limit": str(self.limit), "RateLimit-Remaining": str(self.remaining),
                "RateLimit-Reset": str(self.reset_after)}


# One round trip for a hit on Redis: the count and the window's remaining seconds, where the `limits` library
# sends three commands (its increment script, GET, TTL). Same key and same fixed window as the library's.
HIT_SCRIPT = """
local current = redis.call("incrby", KEYS[1], ARGV[2])
if tonumber(current) == tonumber(ARGV[2]) then
    redis.call("expire", KEYS[1], ARGV[1])
end
local ttl = redis.call("ttl", KEYS[1])
if ttl < 0 then
    redis.call("expire", KEYS[1], ARGV[1])
    ttl = tonumber(ARGV[1])
end
return {current, ttl}
"""


class RateLimiter:
    def __init__(self, storage_uri: str, *, prefix: str = "ratelimit", socket_timeout: float = 0.25):
        options = {}
        if storage_uri.startswith(("redis://", "rediss://", "unix://")):
            options = {"socket_timeout": socket_timeout, "socket_connect_timeout": socket_timeout}
        self.storage = storage_from_string(storage_uri, key_prefix=prefix, **options)
        self.strategy = FixedWindowRateLimiter(self.storage)
        self.warnings = ThrottledLog(log)
        self._open_until = 0.0
        self._script = None
        if options and hasattr(self.storage, "get_connection") and hasattr(self.storage, "prefixed_key"):
            self._script = self.storage.get_connection().register_script(HIT_SCRIPT)

    @property
    def storage_available(self) -> bool:
        return time.monotonic() >= self._open_until

    def hit(self, identity: str, per_minute: int) -> Budget | None:
        """Spend one request of `identity`'s budget. None when the storage is down (fail open)."""
        if not self.storage_available:
            return None
        item = RateLimitItemPerMinute(per_minute)
        try:
            if self._script is not None:
                count, ttl = self._script([self.storage.prefixed_key(item.key_for(identity))],
                                          [item.get_expiry(), 1])
                count, reset_after = int(count), max(1, int(ttl))
            else:  # process memory (the embedded mode)
                allowed = self.strategy.hit(item, identity)
                stats = self.strategy.get_window_stats(item, identity)
                count = per_minute - stats.remaining if allowed else per_minute + 1
                reset_after = max(1, int(stats.reset_time - time.time() + 0.999))
        except Exception as exc:  # redis-py raises ConnectionError, TimeoutError, ...
            self._open_until = time.monotonic() + RETRY_STORAGE_AFTER
            self.warnings.warning("rate-limit storage unreachable, serving without limits: %s", exc)
            return None
        return Budget(limit=per_minute, remaining=max(0, per_minute - count), reset_after=reset_after,
                      exceeded=count > per_minute)

    def reset(self) -> None:
        self.storage.reset()


class FailureThrottle:
    """Counts failures (sign-ins) per identity in a fixed window and says when an identity must wait.

    Failing open like the API limiter: with the storage down nothing is counted and nobody waits."""

    def __init__(self, storage_uri: str, *, prefix: str, amount: int, seconds: int, socket_timeout: float = 0.25):
        from limits import RateLimitItemPerSecond
        options = {}
        if storage_uri.startswith(("redis://", "rediss://", "unix://")):
            options = {"socket_timeout": socket_timeout, "socket_connect_timeout": socket_timeout}
        self.storage = storage_from_string(storage_uri, key_prefix=prefix, **options)
        self.strategy = FixedWindowRateLimiter(self.storage)
        self.item = RateLimitItemPerSecond(amount, seconds)
        self.warnings = ThrottledLog(log)

    def wait_seconds(self, identity: str) -> int:
        """0 when the identity may try; else the seconds until its window resets."""
        try:
            if self.strategy.test(self.item, identity):
                return 0
            stats = self.strategy.get_window_stats(self.item, identity)
        except Exception as exc:
            self.warnings.warning("sign-in throttle storage unreachable, not throttling: %s", exc)
            return 0
        return max(1, int(stats.reset_time - time.time() + 0.999))

    def failed(self, identity: str) -> None:
        try:
            self.strategy.hit(self.item, identity)
        except Exception as exc:
            self.warnings.warning("sign-in throttle storage unreachable, not counting: %s", exc)

    def clear(self, identity: str) -> None:
        try:
            self.strategy.clear(self.item, identity)
        except Exception:
            pass
