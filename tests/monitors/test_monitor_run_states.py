"""A monitor's process_status after its runs end (issue 19): `failed` with the reason when its latest run failed,
null again after a successful one; a failed monitor may be edited (only pending/processing/paused are mid-run);
a chunk given up ends its run failed, charges nothing for its entities, and lets the run's other chunks finish.
Runs are driven by a real RQ worker (in this process), as in test_monitor_runs.py."""
from __future__ import annotations

from sqlalchemy import func, select

from app.accounts.models import CreditEntry
from app.extensions import db
from app.monitors import services
from app.monitors.models import MonitorChunk, MonitorResult
from tests.monitors.test_monitor_runs import PEP, balance, make_monitor, monitor, program_with, run, runs


def _failing(monkeypatch, chunk_seqs=None, message="index unavailable"):
    """Chunks (all, or those of the given seqs) whose screening raises, every attempt: their job fails."""
    real = services.screen_entities

    def screen(work, settings):
        seq = db.session.scalar(select(MonitorChunk.seq).where(MonitorChunk.id == work.chunk_id))
        if chunk_seqs is None or seq in chunk_seqs:
            raise RuntimeError(message)
        return real(work, settings)
    monkeypatch.setattr(services, "screen_entities", screen)


def _chunks(app) -> list[tuple[int, str, int, str | None]]:
    with app.app_context():
        rows = db.session.execute(select(MonitorChunk.seq, MonitorChunk.status, MonitorChunk.attempts,
                                         MonitorChunk.error).order_by(MonitorChunk.seq)).all()
        db.session.rollback()
    return [tuple(r) for r in rows]


def _screened_entity_ids(app) -> set[int]:
    with app.app_context():
        ids = set(db.session.scalars(select(MonitorResult.entity_id)))
        db.session.rollback()
    return ids


def _charges(app) -> list[tuple[int, int]]:
    """(chunk id, credits) of every monitor chunk's ledger row."""
    with app.app_context():
        rows = db.session.execute(select(CreditEntry.monitor_chunk_id, CreditEntry.amount)
                                  .where(CreditEntry.monitor_chunk_id.is_not(None))).all()
        db.session.rollback()
    return [(chunk_id, -amount) for chunk_id, amount in rows]


def test_a_failed_run_leaves_the_monitor_failed_with_the_reason_and_a_good_run_clears_it(app, tenant, work, lists,
                                                                                        monkeypatch):
    p, _hit, _clean = program_with(tenant, n_clean=2)
    m = make_monitor(tenant, p["uuid"])
    with monkeypatch.context() as patch:
        _failing(patch, message="the index could not be opened")
        run(tenant, m["uuid"])
        work()
    (r,) = runs(tenant, m["uuid"])
    assert r["status"] == "failed" and "the index could not be opened" in r["error"]
    assert [(status, attempts) for _, status, attempts, _ in _chunks(app)] == [("failed", services.MAX_CHUNK_ATTEMPTS)]
    failed = monitor(tenant, m["uuid"])
    assert failed["process_status"] == "failed"
    assert failed["process_status_comment"] == r["error"]
    assert failed["has_run_before"] is False and failed["last_run_at"]
    # the next run succeeds: no process status, no comment
    run(tenant, m["uuid"])
    work()
    newest = runs(tenant, m["uuid"])[0]
    assert (newest["status"], newest["entities_processed"]) == ("complete", 3)
    ok = monitor(tenant, m["uuid"])
    assert ok["process_status"] is None and ok["process_status_comment"] is None
    assert ok["has_run_before"] is True


def test_a_failed_monitor_may_be_edited_and_run_again_only_a_run_under_way_refuses(app, tenant, work, lists,
                                                                                   monkeypatch):
    p, _hit, _clean = program_with(tenant, n_clean=1)
    m = make_monitor(tenant, p["uuid"])
    with monkeypatch.context() as patch:
        _failing(patch)
        run(tenant, m["uuid"])
        work()
    assert monitor(tenant, m["uuid"])["process_status"] == "failed"
    r = tenant.api.patch(f"/monitors/{m['uuid']}", json={"monitor_name": "Renamed", "schedule": "every_day"})
    assert r.status_code == 200, r.get_json()
    body = r.get_json()["data"]
    assert (body["monitor_name"], body["schedule"], body["process_status"]) == ("Renamed", "every_day", "failed")
    assert body["next_run_at"]
    # a run under way (pending) is mid-run: 409
    run(tenant, m["uuid"])
    assert monitor(tenant, m["uuid"])["process_status"] == "pending"
    r = tenant.api.patch(f"/monitors/{m['uuid']}", json={"monitor_name": "Again"})
    assert r.status_code == 409, r.get_json()
    work()
    assert tenant.api.patch(f"/monitors/{m['uuid']}", json={"monitor_name": "Again"}).status_code == 200


def test_a_chunk_that_fails_every_attempt_fails_its_run_charges_nothing_for_it_and_the_others_finish(
        app, tenant, work, lists, monkeypatch):
    monkeypatch.setitem(app.config, "MONITOR_CHUNK_SIZE", 2)
    p, _hit, _clean = program_with(tenant, n_clean=5)   # 6 entities: 3 chunks
    m = make_monitor(tenant, p["uuid"])
    price = tenant.api.get("/credit").get_json()["data"]["prices"][PEP]
    before = balance(tenant)
    with monkeypatch.context() as patch:
        _failing(patch, chunk_seqs={0}, message="screening blew up")  # its retries end after the other chunks
        run(tenant, m["uuid"])
        work()
    chunks = _chunks(app)
    assert [(seq, status) for seq, status, _, _ in chunks] == [(0, "failed"), (1, "done"), (2, "done")]
    assert chunks[0][2] == services.MAX_CHUNK_ATTEMPTS and "screening blew up" in chunks[0][3]
    (r,) = runs(tenant, m["uuid"])
    assert r["status"] == "failed" and "screening blew up" in r["error"] and r["ended_at"]
    assert (r["entities_total"], r["entities_processed"], r["entities_skipped"]) == (6, 4, 2)
    assert (r["checks_charged"], r["credits_charged"]) == (4, 4 * price)
    assert before - balance(tenant) == 4 * price
    with app.app_context():
        failed_chunk = db.session.scalar(select(MonitorChunk).where(MonitorChunk.seq == 0))
        failed_ids, failed_id = set(failed_chunk.entity_ids), failed_chunk.id
        db.session.rollback()
    assert failed_id not in {c for c, _ in _charges(app)}
    assert sum(amount for _, amount in _charges(app)) == 4 * price
    screened = _screened_entity_ids(app)
    assert len(screened) == 4 and not screened & failed_ids
    m_now = monitor(tenant, m["uuid"])
    assert m_now["process_status"] == "failed" and m_now["process_status_comment"] == r["error"]


def test_a_chunk_given_up_by_the_sweeper_fails_its_run_and_the_other_chunks_still_complete(app, tenant, work, lists,
                                                                                           monkeypatch):
    monkeypatch.setitem(app.config, "MONITOR_CHUNK_SIZE", 2)
    p, _hit, _clean = program_with(tenant, n_clean=5)
    m = make_monitor(tenant, p["uuid"])
    price = tenant.api.get("/credit").get_json()["data"]["prices"][PEP]
    before = balance(tenant)
    run(tenant, m["uuid"])
    with app.app_context():
        chunk = db.session.scalar(select(MonitorChunk).where(MonitorChunk.seq == 1))
        lost_ids, lost_id = set(chunk.entity_ids), chunk.id
        assert services.fail_chunk(chunk.id, chunk.job_id, "lost with its worker 3 times") is True
        assert services.fail_chunk(chunk.id, chunk.job_id, "again") is False   # once
        db.session.commit()
    assert monitor(tenant, m["uuid"])["process_status"] == "pending"   # the other chunks have not run yet
    work()   # the given-up chunk's job finds it ended and skips it
    assert [(seq, status) for seq, status, _, _ in _chunks(app)] == [(0, "done"), (1, "failed"), (2, "done")]
    (r,) = runs(tenant, m["uuid"])
    assert r["status"] == "failed" and "lost with its worker" in r["error"]
    assert (r["entities_processed"], r["entities_skipped"], r["credits_charged"]) == (4, 2, 4 * price)
    assert before - balance(tenant) == 4 * price
    assert lost_id not in {c for c, _ in _charges(app)}
    assert not _screened_entity_ids(app) & lost_ids and len(_screened_entity_ids(app)) == 4
    m_now = monitor(tenant, m["uuid"])
    assert m_now["process_status"] == "failed" and "lost with its worker" in m_now["process_status_comment"]
    assert m_now["has_run_before"] is True


def test_a_run_whose_every_chunk_is_given_up_charges_nothing(app, tenant, work, lists):
    p, _hit, _clean = program_with(tenant, n_clean=2)
    m = make_monitor(tenant, p["uuid"])
    before = balance(tenant)
    run(tenant, m["uuid"])
    with app.app_context():
        (chunk,) = db.session.scalars(select(MonitorChunk)).all()
        services.fail_chunk(chunk.id, chunk.job_id, "could not be run within a day")
        db.session.commit()
        assert db.session.scalar(select(func.count()).select_from(MonitorResult)) == 0
        db.session.rollback()
    work()
    (r,) = runs(tenant, m["uuid"])
    assert (r["status"], r["entities_processed"], r["credits_charged"]) == ("failed", 0, 0)
    assert balance(tenant) == before and _charges(app) == []
    failed = monitor(tenant, m["uuid"])
    assert failed["process_status"] == "failed" and "could not be run within a day" in failed["process_status_comment"]
