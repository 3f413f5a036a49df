"""A worker SIGKILLed mid-run: every entity is screened, charged and alerted exactly once (real worker processes,
real RQ, Redis and PostgreSQL; the recovery sweeper's interval and grace cut to seconds)."""
from __future__ import annotations

import random
import time
import uuid

import pytest
from sqlalchemy import func, select

from app.accounts.models import CreditEntry
from app.events.models import Event
from app.extensions import db
from app.monitors.models import MonitorChunk, MonitorResult, MonitorRun
from tests.checks.conftest import save_lists
from tests.jobs.test_recovery_drills import Stack
from tests.monitors.test_monitor_runs import PEP, make_monitor, run

pytestmark = pytest.mark.integration
N = 1200


def _chunk_states(app) -> dict[str, int]:
    with app.app_context():
        rows = db.session.execute(select(MonitorChunk.status, func.count()).group_by(MonitorChunk.status)).all()
        db.session.rollback()
    return dict(rows)


def test_workers_killed_mid_run_screen_charge_and_alert_every_entity_exactly_once(app, tenant, tmp_path,
                                                                                  monkeypatch):
    monkeypatch.setitem(app.config, "MONITOR_CHUNK_SIZE", 150)
    save_lists(app)
    program = tenant.program(program_name="Kill drill")
    with app.app_context():
        from app.accounts.services import cli_actor, get_account
        from app.billing.services import top_up
        from app.entities.synthetic import generate_entities
        actor = cli_actor(get_account(uuid.UUID(tenant.account_uuid)))
        generate_entities(actor, uuid.UUID(program["uuid"]), N - 1, seed=3)
        top_up(actor, 10 * N, "kill drill")
        db.session.commit()
    tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville", birth_date="1961-03-14")
    m = make_monitor(tenant, program["uuid"])
    price = tenant.api.get("/credit").get_json()["data"]["prices"][PEP]
    before = tenant.api.get("/credit").get_json()["data"]["balance"]
    stack = Stack(app, tmp_path)
    stack.args["worker"] = ["jobs", "worker", "--queue", "monitors", "--queue", "maintenance"]
    rng = random.Random(19)
    kills = 0
    try:
        stack.start("scheduler")
        stack.start("worker")
        stack.worker_ready()
        run(tenant, m["uuid"])
        for _ in range(3):
            deadline = time.monotonic() + 60
            while not _chunk_states(app).get("processing"):
                assert time.monotonic() < deadline, (_chunk_states(app), stack.logs())
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.2))
            stack.kill("worker")
            kills += 1
            stack.start("worker")
            stack.worker_ready()
        deadline = time.monotonic() + 180
        while True:
            with app.app_context():
                status = db.session.scalar(select(MonitorRun.status))
                db.session.rollback()
            if status in ("complete", "failed"):
                break
            assert time.monotonic() < deadline, (_chunk_states(app), stack.logs())
            stack.keep_running()
            time.sleep(0.5)
    finally:
        stack.close()
    with app.app_context():
        r = db.session.scalar(select(MonitorRun))
        assert (r.status, r.entities_processed, r.checks_charged, r.entities_skipped) == ("complete", N, N, 0), \
            (r.status, r.entities_processed, r.checks_charged, r.error)
        assert db.session.scalar(select(func.count()).select_from(MonitorResult)) == N
        charges = db.session.scalars(select(CreditEntry).where(CreditEntry.monitor_chunk_id.is_not(None))).all()
        assert sum(-c.amount for c in charges) == N * price
        assert len({c.monitor_chunk_id for c in charges}) == len(charges)
        recovered = [c for c in db.session.scalars(select(MonitorChunk)) if c.recoveries]
        assert recovered, "no chunk was recovered: the kills did not land mid-chunk"
        events = db.session.scalars(select(Event)).all()
        keys = [(e.entity_id, tuple(e.check_result_ids)) for e in events]
        assert len(keys) == len(set(keys)) and len(events) >= 1
    assert before - tenant.api.get("/credit").get_json()["data"]["balance"] == N * price
    print(f"monitor kill drill: {kills} kills, {len(recovered)} chunks recovered, {len(events)} events")
