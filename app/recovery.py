"""Background work that must end: one recovery mechanism for every kind of it (check runs now; a monitor run's
chunks and webhook deliveries register the same way when they exist).

A domain's own row is the record of its work. The transaction that asks for the work also writes its dispatch
(`job_id`, `enqueued_at`: `app.core.types.DispatchMixin`), and the job is queued only after the commit (the
outbox: `jobs.enqueue`). Between that commit and the work's end the row is in one of these states; the sweeper
(`recover_lost_work`, every RECOVERY_INTERVAL_SECONDS) asks RQ where the job is (`jobs.job_state`) and acts:

| state                                   | the row             | RQ (`job_state`)    | the sweeper                 |
|-----------------------------------------|---------------------|---------------------|-----------------------------|
| committed, enqueue not yet done         | waiting, job_id     | missing             | leaves it for the grace     |
| the process died before the enqueue     | waiting, job_id     | missing             | dispatches it again         |
| enqueued                                | waiting             | queued              | leaves it (any backlog)     |
| taken by a worker                       | waiting             | taken (it beats)    | leaves it                   |
| lost with the worker before it started  | waiting             | abandoned           | dispatches it again         |
| started                                 | running, started_at | taken (it beats)    | leaves it                   |
| lost with the worker while running      | running             | abandoned, ended    | dispatches it again         |
| stuck past its timeout and grace        | running, old start  | any                 | dispatches it again         |
| lost with Redis (restart, FLUSHALL)     | waiting / running   | missing             | dispatches it again         |
| finished                                | ended               | any                 | not open: nothing to do     |

A worker beats for every job it holds (`jobs._Pulse`, every third of the grace) from the moment it takes it to its
end, so a job whose beat is older than the grace (RECOVERY_GRACE_SECONDS) lost its worker. The grace also covers
the moment between a commit and its enqueue. A running row's lease, its job's timeout plus the grace, is the
backstop when Redis cannot say. After the kind's last attempt the work is given up (a check fails and is
refunded, once), and so is work still waiting `give_up_after` seconds after its creation.

Every dispatch gives the row a new job id, and a job acts only while the row still names it (a fencing token):
a job thought lost that wakes up later finds itself replaced and does nothing, so nothing runs twice to its end.
The domain's `redispatch` and `give_up` lock the row and act only if it still names the job the sweeper saw, so
two sweepers at once do the work once. Its `open_items` lists the rows that have not ended."""
from __future__ import annotations

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable, NamedTuple

from flask import current_app

from app import jobs
from app.core.transactions import transaction
from app.core.types import utcnow

log = logging.getLogger(__name__)

WAITING, RUNNING = "waiting", "running"
LEAVE, REDISPATCH, GIVE_UP = "leave", "redispatch", "give_up"


@dataclass(frozen=True)
class OpenItem:
    """A row whose work has not ended, as the sweeper sees it."""
    id: int
    state: str                      # WAITING (no run started since its dispatch) | RUNNING
    job_id: str | None              # its current dispatch (the fencing token)
    created_at: datetime
    enqueued_at: datetime | None    # when its current dispatch was committed
    started_at: datetime | None     # when its current run started
    attempts: int                   # runs started


@dataclass(frozen=True)
class Recoverable:
    """A kind of durable work. `redispatch(id, job_id, why)` and `give_up(id, job_id, reason)` run in a
    transaction of the sweeper's, lock the row, act only if it still names `job_id`, and say whether they did."""
    name: str
    open_items: Callable[[], list[OpenItem]]
    redispatch: Callable[[int, str | None, str], bool]
    give_up: Callable[[int, str | None, str], bool]
    run_timeout: int          # seconds: the job's timeout (RQ stops a run that takes longer)
    max_attempts: int         # runs started before the work is given up
    give_up_after: int        # seconds after its creation that waiting work is given up


class Verdict(NamedTuple):
    action: str   # LEAVE | REDISPATCH | GIVE_UP
    why: str = ""


_kinds: dict[str, Recoverable] = {}


def register(kind: Recoverable) -> Recoverable:
    _kinds[kind.name] = kind
    return kind


def kinds() -> list[Recoverable]:
    return list(_kinds.values())


def new_job_id(prefix: str, key) -> str:
    """A dispatch's job id: `<prefix>-<key>-<random>` (the key names the row: its id, or its uuid for rows whose
    dispatch is written in their INSERT, before they have an id), new on every dispatch (the fencing token)."""
    return f"{prefix}-{key}-{secrets.token_hex(4)}"


def dispatch(row, job: str, prefix: str, *, at: datetime | None = None, key=None) -> None:
    """Ask for `job` on a DispatchMixin row: a new job id (`new_job_id`, named by `key`, default the row's id; the
    fencing token the job is given as its second argument, after the row's id) and `enqueued_at`, written in the
    caller's transaction; the job is queued once it commits (`jobs.enqueue`: 503 before anything is written when
    Redis is down), or scheduled to run at `at` (a retry after a backoff; RQ holds it as scheduled, which the
    sweeper leaves). Rows written with their dispatch in one statement queue theirs with `jobs.enqueue_many`."""
    row.enqueued_at = utcnow()
    row.job_id = new_job_id(prefix, row.id if key is None else key)
    if at is None:
        jobs.enqueue(job, row.id, row.job_id, _job_id=row.job_id)
    else:
        jobs.enqueue_later(job, at, row.id, row.job_id, _job_id=row.job_id)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _duration(seconds: int) -> str:
    return _plural(seconds // 3600, "hour") if seconds >= 2 * 3600 else _plural(seconds // 60, "minute")


def judge(kind: Recoverable, item: OpenItem, now: datetime, grace: float,
          probe: Callable[[str | None], str | None]) -> Verdict:
    """What to do with one open row. `probe(job_id)` is `jobs.job_state` (asked only when the row's own times
    cannot tell)."""
    if item.state == RUNNING:
        started = item.started_at or item.enqueued_at or item.created_at
        if started > now - timedelta(seconds=grace):
            return Verdict(LEAVE)
        lease = kind.run_timeout + grace
        if started > now - timedelta(seconds=lease):
            state = probe(item.job_id)
            if state is None or state in (jobs.JOB_QUEUED, jobs.JOB_TAKEN):
                return Verdict(LEAVE)  # its worker beats (or Redis cannot say): let it run to its timeout
            why = f"{jobs.JOB_STATE_WORDS[state]} while it ran"
        else:
            why = f"its run did not end within {lease:.0f} s of its start (worker stopped)"
        if item.attempts >= kind.max_attempts:
            return Verdict(GIVE_UP, f"the run was lost {_plural(item.attempts, 'time')} (worker stopped)")
        return Verdict(REDISPATCH, why)
    if item.created_at < now - timedelta(seconds=kind.give_up_after):
        return Verdict(GIVE_UP, f"it could not be run within {_duration(kind.give_up_after)}")
    if (item.enqueued_at or item.created_at) > now - timedelta(seconds=grace):
        return Verdict(LEAVE)  # just dispatched: its enqueue follows the commit
    state = probe(item.job_id)
    if state is None or state in (jobs.JOB_QUEUED, jobs.JOB_TAKEN):
        return Verdict(LEAVE)  # waiting its turn, running, or Redis cannot say (then nothing could be queued)
    if item.attempts >= kind.max_attempts:
        return Verdict(GIVE_UP, f"the run was lost {_plural(item.attempts, 'time')}")
    return Verdict(REDISPATCH, jobs.JOB_STATE_WORDS[state])


def sweep(now: datetime | None = None, grace: float | None = None) -> dict[str, dict[str, int]]:
    """One pass over every registered kind: each open row judged, each action in its own transaction (one row
    that fails must not stop the sweep). Returns {kind: {"redispatched": n, "given_up": n}}."""
    grace = current_app.config["RECOVERY_GRACE_SECONDS"] if grace is None else grace

    def probe(job_id):
        return jobs.job_state(job_id, fresh=grace)

    counts: dict[str, dict[str, int]] = {}
    for kind in kinds():
        done = counts[kind.name] = {"redispatched": 0, "given_up": 0}
        with transaction():  # read only
            items = kind.open_items()
        for item in items:
            verdict = judge(kind, item, now or utcnow(), grace, probe)
            if verdict.action == LEAVE:
                continue
            try:
                with transaction():
                    act = kind.redispatch if verdict.action == REDISPATCH else kind.give_up
                    acted = act(item.id, item.job_id, verdict.why)
            except Exception:  # noqa: BLE001 - e.g. Redis down for the new dispatch: the next sweep tries again
                log.exception("recovery: %s %s could not be %s", kind.name, item.id, verdict.action)
                continue
            if acted:
                done["redispatched" if verdict.action == REDISPATCH else "given_up"] += 1
                log.warning("recovery: %s %s (job %s, %s, attempt %s of %s): %s; %s", kind.name, item.id,
                            item.job_id, item.state, item.attempts, kind.max_attempts, verdict.why,
                            "dispatched again" if verdict.action == REDISPATCH else "given up")
    return counts


@jobs.job("maintenance", every="RECOVERY_INTERVAL_SECONDS")
def recover_lost_work() -> dict[str, dict[str, int]]:
    """The sweeper: work lost with a worker, with Redis or with the process that committed it is dispatched
    again, and given up after its last attempt."""
    return sweep()
