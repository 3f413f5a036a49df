"""Monitor runs on real PostgreSQL, Redis and an RQ worker: chunks, charges, evidence, delta events (reasons)."""
from __future__ import annotations

from sqlalchemy import func, select

from tests.checks.conftest import sanctioned, save_lists

PEP = "pep_sanction_check"


def make_monitor(tenant, program_uuid, **fields):
    body = {"monitor_name": "PEP and sanctions", "monitor_check_type": PEP, "status": "active", "schedule": "manual",
            **fields}
    r = tenant.api.post(f"/programs/{program_uuid}/monitors", json=body)
    assert r.status_code == 201, r.get_json()
    return r.get_json()["data"]


def run(tenant, monitor_uuid, mode="all", status=202):
    r = tenant.api.post(f"/monitors/{monitor_uuid}/run", json={"mode": mode})
    assert r.status_code == status, r.get_json()
    return r.get_json()


def monitor(tenant, uuid):
    return tenant.api.get(f"/monitors/{uuid}").get_json()["data"]


def runs(tenant, uuid):
    return tenant.api.get(f"/monitors/{uuid}/runs").get_json()["data"]


def events_of(tenant, **filters):
    query = "&".join(f"filter[{k}]={v}" for k, v in filters.items())
    return tenant.api.get(f"/events?{query}&per_page=500").get_json()["data"]


def balance(tenant):
    return tenant.api.get("/credit").get_json()["data"]["balance"]


CLEAN = [("Zephyrine", "Quokkabottom"), ("Ottoline", "Featherstonehaugh"), ("Peregrine", "Wolstenholme"),
         ("Hyacinth", "Marchbanks"), ("Cornelius", "Fitzwilliam"), ("Araminta", "Cholmondeley"),
         ("Thaddeus", "Pennywhistle"), ("Leopoldine", "Ravenscroft"), ("Barnaby", "Thistlewood"),
         ("Evangeline", "Throckmorton")]


def program_with(tenant, n_clean=5, **program):
    p = tenant.program(**program)
    hit = tenant.entity(p["uuid"], first_name="Bartholomew", last_name="Quenneville", birth_date="1961-03-14")
    clean = [tenant.entity(p["uuid"], first_name=first, last_name=last) for first, last in CLEAN[:n_clean]]
    return p, hit, clean


def test_a_run_screens_every_entity_once_charges_them_and_raises_events_only_for_what_is_new(app, tenant, work,
                                                                                             lists, monkeypatch):
    monkeypatch.setitem(app.config, "MONITOR_CHUNK_SIZE", 2)
    p, hit, clean = program_with(tenant)
    m = make_monitor(tenant, p["uuid"])
    assert m["process_status"] is None and m["has_run_before"] is False and m["next_run_at"] is None
    before = balance(tenant)
    started = run(tenant, m["uuid"])["data"]
    assert started["status"] == "pending" and started["entities_total"] == 6
    assert monitor(tenant, m["uuid"])["process_status"] == "pending"
    work()
    done = monitor(tenant, m["uuid"])
    assert done["process_status"] is None and done["has_run_before"] is True and done["last_run_at"]
    (r,) = runs(tenant, m["uuid"])
    assert (r["status"], r["entities_processed"], r["checks_charged"], r["trigger"]) == ("complete", 6, 6, "manual")
    assert r["list_versions_after"] and r["engine_version"]
    price = tenant.api.get("/credit").get_json()["data"]["prices"][PEP]
    assert before - balance(tenant) == 6 * price
    evs = events_of(tenant, program_uuid=p["uuid"])
    assert [e["reason"] for e in evs] == ["new_match"] and evs[0]["entity_uuid"] == hit["uuid"]
    assert r["events_raised"] == 1 and done["last_events_raised"] == 1
    assert events_of(tenant, monitor_uuid=m["uuid"]) == evs
    # the same lists again: nothing new, nothing raised; charged again
    run(tenant, m["uuid"])
    work()
    assert len(events_of(tenant, program_uuid=p["uuid"])) == 1
    newest = runs(tenant, m["uuid"])[0]
    assert newest["events_raised"] == 0 and newest["entities_processed"] == 6
    assert before - balance(tenant) == 12 * price
    with app.app_context():
        from app.extensions import db
        from app.monitors.models import MonitorResult
        from app.checks.models import Check
        assert db.session.scalar(select(func.count()).select_from(MonitorResult)) == 12
        # a full check document only for the entity whose result raised events
        assert db.session.scalar(select(func.count()).select_from(Check)) == 1


def test_mode_new_screens_only_entities_the_monitor_never_screened(app, tenant, work, lists):
    p, hit, clean = program_with(tenant, n_clean=2)
    m = make_monitor(tenant, p["uuid"])
    run(tenant, m["uuid"], mode="new")  # before any run: all
    work()
    assert runs(tenant, m["uuid"])[0]["mode"] == "all"
    tenant.entity(p["uuid"], first_name="Wilberforce", last_name="Applethwaite")
    run(tenant, m["uuid"], mode="new")
    work()
    newest = runs(tenant, m["uuid"])[0]
    assert (newest["mode"], newest["entities_total"], newest["entities_processed"]) == ("new", 1, 1)


def test_a_changed_record_raises_match_changed_with_what_changed_and_a_removed_one_delisted(app, tenant, work):
    save_lists(app)
    p, hit, _ = program_with(tenant, n_clean=1)
    m = make_monitor(tenant, p["uuid"])
    run(tenant, m["uuid"])
    work()
    changed = sanctioned()
    changed.sanctions = [{"programs": ["TEST-1", "TEST-2"], "authority": "Test Treasury"}]
    save_lists(app, sanctions_records=[changed], checksum="v2")
    run(tenant, m["uuid"])
    work()
    evs = events_of(tenant, entity_uuid=hit["uuid"])
    assert sorted(e["reason"] for e in evs) == ["match_changed", "new_match"]
    change = next(e for e in evs if e["reason"] == "match_changed")["changes"]
    assert {"field": "programmes", "label": "Sanction programmes", "before": "TEST-1",
            "after": "TEST-1; TEST-2"} in change
    # dismissed: stays quiet on an unchanged re-screen
    for e in evs:
        tenant.api.patch(f"/events/{e['uuid']}", json={"status": "closed_dismissed", "note": "Not our customer."})
    run(tenant, m["uuid"])
    work()
    assert len(events_of(tenant, entity_uuid=hit["uuid"])) == 2
    # confirm a new match, then the record leaves the list: delisted
    save_lists(app, sanctions_records=[sanctioned(), sanctioned().__class__(
        id="s-9", schema="Person", caption="Bartholomew Quenneville", birth_dates=["1961-03-14"],
        topics=["sanction"], sanctions=[{"programs": ["TEST-9"], "authority": "Test Treasury"}])], checksum="v3")
    run(tenant, m["uuid"])
    work()
    s9 = [e for e in events_of(tenant, entity_uuid=hit["uuid"]) if e["reason"] == "new_match"
          and e["status"] == "new"]
    assert len(s9) == 1
    tenant.api.patch(f"/events/{s9[0]['uuid']}", json={"status": "closed_confirmed", "note": "Our customer."})
    save_lists(app, sanctions_records=[changed], checksum="v4")
    run(tenant, m["uuid"])
    work()
    delisted = events_of(tenant, entity_uuid=hit["uuid"], reason="delisted")
    assert len(delisted) == 1 and delisted[0]["changes"][0]["field"] == "listed"
    assert delisted[0]["check_result_ids"] == s9[0]["check_result_ids"]


def test_credit_running_out_pauses_the_run_and_a_top_up_resumes_it(app, tenant, work, lists, monkeypatch):
    monkeypatch.setitem(app.config, "MONITOR_CHUNK_SIZE", 4)
    p, hit, clean = program_with(tenant, n_clean=9)
    m = make_monitor(tenant, p["uuid"])
    price = tenant.api.get("/credit").get_json()["data"]["prices"][PEP]
    with app.app_context():
        from app.accounts.services import get_account, cli_actor
        from app.billing.services import adjust
        from app.extensions import db
        import uuid
        account = get_account(uuid.UUID(tenant.account_uuid))
        actor = cli_actor(account)
        adjust(actor, -(balance(tenant) - 6 * price), "test: leave six checks")
        db.session.commit()
    run(tenant, m["uuid"])
    work()
    paused = monitor(tenant, m["uuid"])
    assert paused["process_status"] == "paused" and "Insufficient credit" in paused["process_status_comment"]
    r = runs(tenant, m["uuid"])[0]
    assert (r["status"], r["entities_processed"], r["checks_charged"]) == ("paused", 6, 6)
    assert balance(tenant) == 0
    assert tenant.api.patch(f"/monitors/{m['uuid']}", json={"monitor_name": "Renamed"}).status_code == 409
    assert run(tenant, m["uuid"], status=402)
    with app.app_context():
        from app.billing.services import top_up
        top_up(actor, 100 * price, "test top-up")
        db.session.commit()
        from app.monitors.jobs import monitor_tick
        assert monitor_tick()["resumed"] == 1
    work()
    r = runs(tenant, m["uuid"])[0]
    assert (r["status"], r["entities_processed"], r["checks_charged"]) == ("complete", 10, 10)
    assert monitor(tenant, m["uuid"])["process_status"] is None
    assert balance(tenant) == 100 * price - 4 * price


def _leave_credit_for(app, tenant, n_checks):
    price = tenant.api.get("/credit").get_json()["data"]["prices"][PEP]
    with app.app_context():
        import uuid

        from app.accounts.services import cli_actor, get_account
        from app.billing.services import adjust
        from app.extensions import db
        adjust(cli_actor(get_account(uuid.UUID(tenant.account_uuid))), -(balance(tenant) - n_checks * price),
               f"test: leave {n_checks} checks")
        db.session.commit()


def test_a_chunk_takes_the_account_lock_only_for_its_charge_after_writing_its_results(app, tenant, work, lists,
                                                                                       monkeypatch):
    """Launches wait on the account's lock: a chunk whose cost the balance covers writes its evidence, checks and
    events first and takes that lock only to charge, so that it is held for the charge and the commit, not for
    the whole write."""
    from app.billing import services as billing
    from app.monitors import services
    monkeypatch.setitem(app.config, "MONITOR_CHUNK_SIZE", 3)
    p, hit, clean = program_with(tenant, n_clean=5)
    m = make_monitor(tenant, p["uuid"])
    order: list[str] = []
    write, affordable = services._write_results, billing.affordable
    monkeypatch.setattr(services, "_write_results", lambda *a: order.append("write") or write(*a))
    monkeypatch.setattr(billing, "affordable", lambda *a: order.append("lock") or affordable(*a))
    run(tenant, m["uuid"])
    work()
    r = runs(tenant, m["uuid"])[0]
    assert (r["status"], r["entities_processed"], r["checks_charged"]) == ("complete", 6, 6)
    assert order == ["write", "lock"] * 2


def test_a_balance_that_falls_while_a_chunk_is_written_is_caught_under_the_lock(app, tenant, work, lists,
                                                                               monkeypatch):
    """The balance read without the lock said the chunks were paid for (here it always says so); under the lock it
    covers six of ten entities. The chunk that finds it short is written again under the lock from the start: the
    run pays for six, pauses with the rest, and nothing of the first attempt stays (evidence, checks, events)."""
    from app.billing import services as billing
    from app.monitors import services
    from app.monitors.models import MonitorResult
    monkeypatch.setitem(app.config, "MONITOR_CHUNK_SIZE", 4)
    p, hit, clean = program_with(tenant, n_clean=9)
    m = make_monitor(tenant, p["uuid"])
    _leave_credit_for(app, tenant, 6)
    monkeypatch.setattr(billing, "balance_of", lambda account_id: 10 ** 9)  # a read that went stale
    careful: list[bool] = []
    finish = services.finish_chunk
    monkeypatch.setattr(services, "finish_chunk",
                        lambda *a, **kw: careful.append(kw.get("lock_first", False)) or finish(*a, **kw))
    run(tenant, m["uuid"])
    work()
    assert True in careful  # the second chunk found the balance short under the lock and was written again
    r = runs(tenant, m["uuid"])[0]
    assert (r["status"], r["entities_processed"], r["checks_charged"]) == ("paused", 6, 6)
    assert balance(tenant) == 0
    assert len(events_of(tenant, entity_uuid=hit["uuid"])) == 1
    with app.app_context():
        from app.accounts.models import credit_balance, ledger_sum
        from app.extensions import db
        from app.monitors.models import MonitorRun
        run_id = db.session.scalar(select(MonitorRun.id).where(MonitorRun.status == "paused"))
        assert db.session.scalar(select(func.count()).select_from(MonitorResult)
                                 .where(MonitorResult.run_id == run_id)) == 6
        account_id = db.session.scalar(select(MonitorRun.account_id).where(MonitorRun.id == run_id))
        assert credit_balance(account_id) == ledger_sum(account_id) == 0


def test_a_background_worker_paces_a_run_to_the_configured_entities_a_second(app, monkeypatch):
    """MONITOR_ENTITIES_PER_SECOND holds the worker after a chunk that went faster than its share: 50 entities at
    100 a second take half a second in all; a chunk that took longer, pacing off (0) or jobs without Redis (in the
    web process) do not wait."""
    import time

    from app.monitors import jobs as monitor_jobs
    slept: list[float] = []
    monkeypatch.setattr(monitor_jobs.time, "sleep", slept.append)
    with app.app_context():
        monkeypatch.setitem(app.config, "MONITOR_ENTITIES_PER_SECOND", 100)
        assert 0.45 < monitor_jobs.pace(50, time.monotonic() - 0.02) <= 0.48
        assert monitor_jobs.pace(50, time.monotonic() - 0.6) == 0
        monkeypatch.setitem(app.config, "MONITOR_ENTITIES_PER_SECOND", 0)
        assert monitor_jobs.pace(50, time.monotonic()) == 0
        monkeypatch.setitem(app.config, "MONITOR_ENTITIES_PER_SECOND", 100)
        monkeypatch.setitem(app.config, "REDIS_URL", None)
        assert monitor_jobs.pace(50, time.monotonic()) == 0
    assert len(slept) == 1 and 0.45 < slept[0] <= 0.48
