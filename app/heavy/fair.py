"""Fair shares of the heavy workers, kept in Redis (the job queue's): who waits, who runs, who has spent what.

A heavy job is not pushed onto its RQ queue when it is asked for. It waits in its account's pending list, and the
dispatcher (`dispatch`, one Lua script: atomic between every web process and worker) moves jobs onto the RQ queues
only while a heavy slot is free, in this order:

- accounts take turns, least recently served first (a sorted set scored by the sequence number of each account's
  last dispatch; an account that never ran anything comes first), so one account's backlog of 20 jobs delays
  another account's single job by at most the job that is running when it arrives;
- an account runs at most HEAVY_MAX_RUNNING_PER_ACCOUNT jobs at once, whatever is free;
- at most HEAVY_SLOTS jobs are on the RQ queues or running in all (the heavy workers of `make run`): the RQ queues
  never hold a backlog in which fairness would be lost.

It runs when a job is asked for (after the commit), when one ends (in the worker) and on every tick of the sweeper
(app/heavy/services.py), which also frees the slot of a job whose worker died (its RQ job no longer beats).

The cost of work is a token bucket per account in seconds of heavy work: it holds up to HEAVY_BUDGET_SECONDS,
earns HEAVY_BUDGET_REFILL_PER_MINUTE seconds a minute, and each job's measured seconds are taken from it when it
ends. A new job is refused (429 + Retry-After) while the bucket is empty; what is already queued runs."""
from __future__ import annotations

import logging
from dataclasses import dataclass

from flask import Flask, current_app

from app import jobs

log = logging.getLogger(__name__)

_SUBMIT = """
redis.call('RPUSH', KEYS[1], ARGV[2])
local served = redis.call('HGET', KEYS[3], ARGV[1]) or '0'
redis.call('ZADD', KEYS[2], 'NX', served, ARGV[1])
return redis.call('LLEN', KEYS[1])
"""

# KEYS: ring, served, inflight, seq; ARGV: prefix, slots, per-account limit. Returns acct, row, job id triples.
_DISPATCH = """
local prefix, slots, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now = redis.call('TIME')[1]
local out = {}
local busy = redis.call('HLEN', KEYS[3])
while busy < slots do
  local picked = false
  local accounts = redis.call('ZRANGE', KEYS[1], 0, -1)
  for _, acct in ipairs(accounts) do
    local running = prefix .. 'running:' .. acct
    if redis.call('SCARD', running) < limit then
      local pending = prefix .. 'pending:' .. acct
      local row = redis.call('LPOP', pending)
      if row then
        local seq = redis.call('INCR', KEYS[4])
        local jid = 'heavy-' .. row .. '-' .. seq
        redis.call('HSET', KEYS[3], jid, acct .. ':' .. row .. ':' .. now)
        redis.call('SADD', running, jid)
        redis.call('HSET', KEYS[2], acct, seq)
        if redis.call('LLEN', pending) > 0 then
          redis.call('ZADD', KEYS[1], seq, acct)
        else
          redis.call('ZREM', KEYS[1], acct)
        end
        table.insert(out, acct)
        table.insert(out, row)
        table.insert(out, jid)
        busy = busy + 1
        picked = true
        break
      else
        redis.call('ZREM', KEYS[1], acct)
      end
    end
  end
  if not picked then break end
end
return out
"""

# KEYS: inflight; ARGV: prefix, job id. Frees the job's slot; 1 when it held one.
_RELEASE = """
local value = redis.call('HGET', KEYS[1], ARGV[2])
if not value then return 0 end
local acct = string.match(value, '^([^:]+):')
redis.call('HDEL', KEYS[1], ARGV[2])
redis.call('SREM', ARGV[1] .. 'running:' .. acct, ARGV[2])
return 1
"""

# The token bucket. KEYS: bucket; ARGV: capacity, refill per second, cost (0: just read). Returns the balance
# after the refill and the cost, as a string (Lua numbers become integers on the way out).
_BUCKET = """
local capacity, rate, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens') or capacity)
local last = tonumber(redis.call('HGET', KEYS[1], 'ts') or now)
tokens = math.min(capacity, tokens + math.max(0, now - last) * rate)
tokens = math.max(-capacity, tokens - cost)
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
if rate > 0 then
  redis.call('EXPIRE', KEYS[1], math.ceil((capacity - tokens) / rate) + 60)
end
return tostring(tokens)
"""


@dataclass(frozen=True)
class Dispatched:
    account_id: int
    row_token: str   # "<row id>-<queue>"
    job_id: str


def _prefix(app: Flask) -> str:
    return app.config["RQ_QUEUE_PREFIX"] + "heavy:"


def _conn(app: Flask):
    """The job queue's Redis, with the web's short timeouts: every call here is one quick command or script."""
    return jobs.redis_connection(app)


def _script(app: Flask, name: str, source: str):
    key = f"heavy_script_{name}"
    script = app.extensions.get(key)
    if script is None:
        script = app.extensions[key] = _conn(app).register_script(source)
    return script


def submit(account_id: int, row_token: str, app: Flask | None = None) -> int:
    """Put a job in its account's pending list (after its row is committed); the account's pending count."""
    app = app or current_app._get_current_object()
    p = _prefix(app)
    return int(_script(app, "submit", _SUBMIT)(keys=[f"{p}pending:{account_id}", f"{p}ring", f"{p}served"],
                                                  args=[account_id, row_token]))


def dispatch(app: Flask | None = None) -> list[Dispatched]:
    """Take the jobs that may run now, fairly (see the module), and mark their slots taken. The caller pushes
    them onto their RQ queues (`services.dispatch`)."""
    app = app or current_app._get_current_object()
    p = _prefix(app)
    out = _script(app, "dispatch", _DISPATCH)(
        keys=[f"{p}ring", f"{p}served", f"{p}inflight", f"{p}seq"],
        args=[p, int(app.config["HEAVY_SLOTS"]), int(app.config["HEAVY_MAX_RUNNING_PER_ACCOUNT"])])
    items = [x.decode() if isinstance(x, bytes) else str(x) for x in out]
    return [Dispatched(int(items[i]), items[i + 1], items[i + 2]) for i in range(0, len(items), 3)]


def release(job_id: str, app: Flask | None = None) -> bool:
    """Free the slot of a dispatched job (it ended, or its worker died); False when it held none."""
    app = app or current_app._get_current_object()
    p = _prefix(app)
    return bool(_script(app, "release", _RELEASE)(keys=[f"{p}inflight"], args=[p, job_id]))


def inflight(app: Flask | None = None) -> dict[str, tuple[int, int, int]]:
    """{job id: (account id, row id, unix time of its dispatch)} of the jobs holding a slot."""
    app = app or current_app._get_current_object()
    raw = _conn(app).hgetall(f"{_prefix(app)}inflight")
    out = {}
    for k, v in raw.items():
        acct, token, when = v.decode().split(":")
        out[k.decode()] = (int(acct), int(token.split("-")[0]), int(when))
    return out


def pending_rows(app: Flask | None = None) -> set[int]:
    """The row ids waiting in every account's pending list."""
    app = app or current_app._get_current_object()
    conn = _conn(app)
    rows: set[int] = set()
    for key in conn.scan_iter(match=f"{_prefix(app)}pending:*", count=500):
        rows.update(int(x.split(b"-")[0]) for x in conn.lrange(key, 0, -1))
    return rows


def queued_ahead(account_id: int, row_token: str, app: Flask | None = None) -> int | None:
    """How many of the account's own jobs wait before this one (None when it is not waiting)."""
    app = app or current_app._get_current_object()
    pos = _conn(app).lpos(f"{_prefix(app)}pending:{account_id}", row_token)
    return None if pos is None else int(pos)


# ------------------------------------------------------------------ the token bucket of work seconds

def _bucket(app: Flask, account_id: int, cost: float) -> float:
    capacity = float(app.config["HEAVY_BUDGET_SECONDS"])
    rate = float(app.config["HEAVY_BUDGET_REFILL_PER_MINUTE"]) / 60.0
    raw = _script(app, "bucket", _BUCKET)(
        keys=[f"{_prefix(app)}budget:{account_id}"], args=[capacity, rate, cost])
    return float(raw.decode() if isinstance(raw, bytes) else raw)


def budget_wait(account_id: int, app: Flask | None = None) -> int:
    """0 when the account may ask for heavy work now; else the seconds until its bucket holds work again."""
    app = app or current_app._get_current_object()
    tokens = _bucket(app, account_id, 0.0)
    if tokens > 0:
        return 0
    rate = float(app.config["HEAVY_BUDGET_REFILL_PER_MINUTE"]) / 60.0
    return max(1, int((-tokens + 1.0) / rate + 0.999)) if rate > 0 else 3600


def spend(account_id: int, seconds: float, app: Flask | None = None) -> float:
    """Take a job's measured seconds from the account's bucket; the balance left."""
    app = app or current_app._get_current_object()
    return _bucket(app, account_id, max(0.0, float(seconds)))


def budget_balance(account_id: int, app: Flask | None = None) -> float:
    app = app or current_app._get_current_object()
    return _bucket(app, account_id, 0.0)
