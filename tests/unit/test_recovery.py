"""The recovery policy (app/recovery.py): what the sweeper does with one open row, for each state a job can be in
between the commit that asked for it and its end. Plain values: RQ's answer is a stub probe here; the tests in
tests/jobs/test_recovery_drills.py put real workers, a real Redis and real processes through the same states."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from app import jobs
from app.recovery import GIVE_UP, LEAVE, REDISPATCH, RUNNING, WAITING, OpenItem, Recoverable, judge

NOW = datetime(2026, 3, 29, 1, 30, tzinfo=timezone.utc)
GRACE = 30.0
KIND = Recoverable(name="thing", open_items=list, redispatch=lambda *a: True, give_up=lambda *a: True,
                   run_timeout=60, max_attempts=3, give_up_after=30 * 60)


def item(state, *, created=600, enqueued=None, started=None, attempts=0):
    ago = lambda s: None if s is None else NOW - timedelta(seconds=s)  # noqa: E731
    return OpenItem(id=1, state=state, job_id="job-1", created_at=ago(created), enqueued_at=ago(enqueued),
                    started_at=ago(started), attempts=attempts)


class Probe:
    def __init__(self, answer):
        self.answer, self.asked = answer, 0

    def __call__(self, job_id):
        self.asked += 1
        assert job_id == "job-1"
        return self.answer


@pytest.mark.parametrize("state", [jobs.JOB_QUEUED, jobs.JOB_TAKEN, None])
def test_waiting_work_whose_job_is_queued_or_taken_is_left_however_old(state):
    """A backlog is not a loss: a job still in its queue (or taken by a live worker, or Redis cannot say) is left."""
    probe = Probe(state)
    assert judge(KIND, item(WAITING, enqueued=20 * 60, created=20 * 60), NOW, GRACE, probe).action == LEAVE
    assert probe.asked == 1


@pytest.mark.parametrize("state, words", [
    (jobs.JOB_MISSING, "not in Redis"),            # the web died after its commit, or Redis restarted empty
    (jobs.JOB_ABANDONED, "worker that took its job stopped"),  # taken, then the worker died before the run
    (jobs.JOB_ENDED, "ended without finishing"),   # RQ ran it, yet the row never started (e.g. the database failed)
])
def test_waiting_work_whose_job_is_lost_is_dispatched_again(state, words):
    verdict = judge(KIND, item(WAITING, enqueued=GRACE + 1), NOW, GRACE, Probe(state))
    assert verdict.action == REDISPATCH and words in verdict.why


def test_just_dispatched_work_is_not_judged_within_the_grace():
    """Between the commit and its enqueue there is no job yet: the probe is not even asked."""
    probe = Probe(jobs.JOB_MISSING)
    assert judge(KIND, item(WAITING, enqueued=GRACE - 1), NOW, GRACE, probe).action == LEAVE
    assert judge(KIND, item(WAITING, created=GRACE - 1), NOW, GRACE, probe).action == LEAVE  # no dispatch time
    assert probe.asked == 0
    assert judge(KIND, item(WAITING, created=GRACE + 1), NOW, GRACE, probe).action == REDISPATCH


def test_running_work_is_left_while_its_worker_beats():
    probe = Probe(jobs.JOB_TAKEN)
    assert judge(KIND, item(RUNNING, started=GRACE - 1, attempts=1), NOW, GRACE, probe).action == LEAVE
    assert probe.asked == 0  # just started: not even asked
    assert judge(KIND, item(RUNNING, started=GRACE + 20, attempts=1), NOW, GRACE, probe).action == LEAVE
    assert judge(KIND, item(RUNNING, started=GRACE + 20, attempts=1), NOW, GRACE, Probe(None)).action == LEAVE


@pytest.mark.parametrize("state, words", [
    (jobs.JOB_ABANDONED, "worker that took its job stopped while it ran"),  # SIGKILLed mid-run
    (jobs.JOB_MISSING, "not in Redis"),                                    # Redis restarted empty
    (jobs.JOB_ENDED, "ended without finishing"),                           # the job died after its start
])
def test_running_work_whose_worker_stopped_is_dispatched_again_then_given_up(state, words):
    verdict = judge(KIND, item(RUNNING, started=GRACE + 1, attempts=1), NOW, GRACE, Probe(state))
    assert verdict.action == REDISPATCH and words in verdict.why
    verdict = judge(KIND, item(RUNNING, started=GRACE + 1, attempts=3), NOW, GRACE, Probe(state))
    assert verdict == (GIVE_UP, "the run was lost 3 times (worker stopped)")


def test_running_work_past_its_lease_is_lost_whatever_redis_says():
    """The backstop: RQ stops a job at its timeout, so a run older than timeout + grace is over."""
    lease = KIND.run_timeout + GRACE
    probe = Probe(jobs.JOB_TAKEN)
    verdict = judge(KIND, item(RUNNING, started=lease + 1, attempts=1), NOW, GRACE, probe)
    assert verdict.action == REDISPATCH and "within 90 s" in verdict.why and probe.asked == 0


def test_work_lost_after_its_last_attempt_or_waiting_too_long_is_given_up():
    verdict = judge(KIND, item(WAITING, enqueued=GRACE + 1, attempts=3), NOW, GRACE, Probe(jobs.JOB_MISSING))
    assert verdict == (GIVE_UP, "the run was lost 3 times")
    verdict = judge(KIND, item(WAITING, created=KIND.give_up_after + 1, enqueued=1), NOW, GRACE,
                    Probe(jobs.JOB_QUEUED))
    assert verdict == (GIVE_UP, "it could not be run within 30 minutes")
