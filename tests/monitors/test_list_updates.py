"""A list update reaches the monitored customers it concerns (a delta run over just them), and a publication that
would remove too much of a list is held until an operator accepts it."""
from __future__ import annotations

from app import signals
from app.extensions import db
from app.screening import store
from app.screening.records import ListRecord, Name, ParsedList
from tests.checks.conftest import SANCTIONS, sanctioned, save_lists
from tests.monitors.test_monitor_runs import events_of, make_monitor, program_with, run, runs


def listed(rid: str, name: str, dob: str | None = None) -> ListRecord:
    return ListRecord(id=rid, schema="Person", caption=name, names=[Name(name, "alias")], topics=["sanction"],
                      birth_dates=[dob] if dob else [], sanctions=[{"programs": ["TEST-7"], "authority": "T"}])


def publish(app, records, checksum, hold=None):
    with app.app_context():
        summary = store.save_list(db.session, ParsedList(SANCTIONS, records), fmt="test", source="test",
                                  checksum=checksum, hold_fraction=hold)
        db.session.commit()
    return summary


def test_a_list_update_rescreens_only_the_entities_it_concerns_and_raises_new_match_and_delisted(app, tenant, work):
    save_lists(app)
    p, hit, clean = program_with(tenant, n_clean=4)
    m = make_monitor(tenant, p["uuid"])
    run(tenant, m["uuid"])
    work()
    assert [e["reason"] for e in events_of(tenant, program_uuid=p["uuid"])] == ["new_match"]
    # the matched record leaves the list; a record naming a clean customer arrives
    summary = publish(app, [listed("s-7", "Ottoline Featherstonehaugh")], "s-v2")
    assert summary.created and (summary.added, summary.removed) == (1, 1)
    with app.app_context():
        signals.list_version_stored.send(SANCTIONS.name, version=summary.version)
    work()
    (update,) = [r for r in runs(tenant, m["uuid"]) if r["trigger"] == "list_update"]
    assert update["mode"] == "delta" and update["entities_total"] == 2 and update["status"] == "complete"
    assert update["list_update"]["list"] == SANCTIONS.name and update["list_update"]["removed"] == 1
    assert [e["reason"] for e in events_of(tenant, entity_uuid=clean[1]["uuid"])] == ["new_match"]
    assert sorted(e["reason"] for e in events_of(tenant, entity_uuid=hit["uuid"])) == ["delisted", "new_match"]
    assert events_of(tenant, entity_uuid=clean[0]["uuid"]) == []


def test_an_update_that_would_remove_too_much_is_held_until_accepted(app, tenant, work):
    records = [sanctioned()] + [listed(f"s-{i}", f"Listed Person{chr(97 + i % 26)} Number{i}") for i in range(2, 40)]
    publish(app, records, "full")
    p, hit, _ = program_with(tenant, n_clean=1)
    m = make_monitor(tenant, p["uuid"])
    run(tenant, m["uuid"])
    work()
    truncated = publish(app, records[20:], "truncated", hold=0.05)  # the matched record is in the lost part
    assert truncated.held and not truncated.created and truncated.removed == 20
    again = publish(app, records[20:], "truncated", hold=0.05)
    assert again.held and again.version == truncated.version  # the same file: still the one held version
    with app.app_context():
        status = {r["list"]: r for r in store.lists_with_versions(db.session)}[SANCTIONS.name]
        assert status["version"] == 1 and status["records"] == len(records)
        assert [v["status"] for v in status["versions"]] == ["held", "applied"]
    lists = tenant.api.get("/lists").get_json()["data"]
    assert any(v["status"] == "held" for entry in lists for v in entry["versions"])
    run(tenant, m["uuid"])
    work()
    assert [e["reason"] for e in events_of(tenant, entity_uuid=hit["uuid"])] == ["new_match"]  # not delisted
    # an operator accepts it: applied, announced, and the match is delisted
    result = app.test_cli_runner().invoke(args=["lists", "accept", f"{SANCTIONS.name}:{truncated.version}",
                                                "--no-index"])
    assert result.exit_code == 0, result.output
    work()
    assert sorted(e["reason"] for e in events_of(tenant, entity_uuid=hit["uuid"])) == ["delisted", "new_match"]
    rejected = app.test_cli_runner().invoke(args=["lists", "reject", f"{SANCTIONS.name}:{truncated.version}"])
    assert rejected.exit_code == 2 and "no held version" in rejected.output


def test_a_small_removal_is_applied_at_once(app):
    records = [listed(f"s-{i}", f"Person{i} Listed") for i in range(100)]
    publish(app, records, "a")
    summary = publish(app, records[3:], "b", hold=0.05)
    assert summary.created and not summary.held and summary.removed == 3
