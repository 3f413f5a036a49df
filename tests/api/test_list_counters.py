"""List totals come from trigger-kept counters on PostgreSQL: after every kind of write they must equal the rows
the same list returns, for every filter combination the counters answer."""
from __future__ import annotations

import json
from contextlib import contextmanager

import pytest
from sqlalchemy import text

COUNTER_CHECKS = {
    "entity_counts": """
        SELECT program_id, entity_type, coalesce(risk_level, ''), archived_at IS NOT NULL, count(*)
        FROM entities WHERE deleted_at IS NULL GROUP BY 1, 2, 3, 4""",
    "entity_flag_counts": """
        SELECT program_id, f.flag, entity_type, coalesce(risk_level, ''), archived_at IS NOT NULL, count(*)
        FROM entities CROSS JOIN LATERAL jsonb_array_elements_text(flags) AS f(flag)
        WHERE deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5""",
    "note_counts": """
        SELECT account_id, program_id, coalesce(created_by_type, ''),
               coalesce(created_by_user_id, created_by_api_key_id, 0), archived_at IS NOT NULL, count(*)
        FROM notes WHERE deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5""",
}


# What each counter table says per bucket; every counter splits a bucket in slots (migrations 9a4c2e7b1d30 and
# 7941b65c104e): its count is the sum of its slots.
KEPT = {
    "entity_counts": "SELECT program_id, entity_type, risk_level, archived, sum(n) FROM entity_counts "
                     "GROUP BY 1, 2, 3, 4 HAVING sum(n) <> 0",
    "entity_flag_counts": "SELECT program_id, flag, entity_type, risk_level, archived, sum(n) FROM entity_flag_counts "
                          "GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0",
    "note_counts": "SELECT account_id, program_id, created_by_type, created_by_id, archived, sum(n) FROM note_counts "
                   "GROUP BY 1, 2, 3, 4, 5 HAVING sum(n) <> 0",
}


@contextmanager
def two_slots(engine):
    """Two connections whose backends write different counter slots (pids that differ modulo 16), and the slot of
    each: (a, b, (slot of a, slot of b))."""
    opened, by_slot = [], {}
    try:
        while len(by_slot) < 2:
            conn = engine.connect()
            opened.append(conn)
            by_slot.setdefault(conn.execute(text("SELECT pg_backend_pid() % 16")).scalar(), conn)
            conn.rollback()
        (slot_a, a), (slot_b, b) = list(by_slot.items())[:2]
        yield a, b, (slot_a, slot_b)
    finally:
        for conn in opened:
            conn.close()


def counters_match_rows(app) -> None:
    from app.extensions import db
    with app.app_context():
        for table, query in COUNTER_CHECKS.items():
            rows = {tuple(r[:-1]): r[-1] for r in db.session.execute(text(query))}
            kept = {tuple(r[:-1]): r[-1] for r in db.session.execute(text(KEPT[table]))}
            assert kept == rows, table


def all_rows(tenant, path: str) -> tuple[int, list[str]]:
    """(meta.total, every uuid over all pages) of a list."""
    uuids, page, total = [], 1, None
    while True:
        sep = "&" if "?" in path else "?"
        r = tenant.api.get(f"{path}{sep}per_page=2&page={page}")
        assert r.status_code == 200, r.get_json()
        body = r.get_json()
        assert isinstance(body["meta"]["total"], int)
        total = body["meta"]["total"]
        if not body["data"]:
            return total, uuids
        uuids += [e["uuid"] for e in body["data"]]
        page += 1


@pytest.fixture
def busy_program(app, tenant):
    """A program after every write that moves a counter."""
    from app.core.transactions import commit
    from app.entities import services
    from app.accounts.services import api_key_actor, find_api_key

    program = tenant.program()
    pu = program["uuid"]
    made = [
        tenant.entity(pu, flags=["pep"], risk_level="high"),
        tenant.entity(pu, entity_type="business", first_name=None, last_name=None, business_name="Acme Ltd",
                      flags=["pep", "fraud"]),
        tenant.entity(pu, entity_type="vessel", first_name=None, last_name=None, vessel_name="Zephyr",
                      risk_level=None),
        tenant.entity(pu, risk_level="medium"),
        tenant.entity(pu, risk_level=None, flags=["sanction"]),
        tenant.entity(pu),
    ]
    api = tenant.api
    assert api.patch(f"/entities/{made[0]['uuid']}", json={"risk_level": None, "flags": ["fraud"]}).status_code == 200
    assert api.patch(f"/entities/{made[5]['uuid']}", json={"last_name": "Renamed"}).status_code == 200
    for m in made[:3]:
        assert api.post(f"/entities/{m['uuid']}/notes", json={"note_text": "a note"}).status_code == 201
    assert api.post(f"/entities/{made[3]['uuid']}/archive").status_code == 200
    assert api.post(f"/entities/{made[1]['uuid']}/archive").status_code == 200  # archives its note too
    note = api.post(f"/entities/{made[4]['uuid']}/notes", json={"note_text": "to delete"}).get_json()["data"]
    assert api.delete(f"/notes/{note['uuid']}").status_code == 200
    assert api.delete(f"/entities/{made[2]['uuid']}").status_code == 200  # takes its note with it
    csv = "entity_type,first_name,last_name,risk_level,flags\nindividual,A,One,,pep\nindividual,B,Two,high,\n"
    assert api.post(f"/programs/{pu}/entities/bulk", data=csv, headers={"Content-Type": "text/csv"}).status_code == 201
    with app.app_context():  # the portal-only restore brings the entity and its note back
        actor = api_key_actor(find_api_key(tenant.api_key))
        services.restore_entity(actor, made[2]["uuid"])
        commit()
    assert api.delete(f"/entities/{made[5]['uuid']}").status_code == 200
    return program


def test_counters_equal_rows_after_every_write(app, busy_program):
    counters_match_rows(app)


@pytest.mark.parametrize("entity_type,risk,flag,archived", [
    (None, None, None, None), (None, None, None, "true"), (None, None, None, "false"), ("individual", None, None, None),
    ("business", None, None, "true"), (None, "none", None, None), (None, "high", None, "false"),
    ("individual", "none", None, None), (None, None, "pep", None), (None, None, "fraud", "false"),
    ("business", None, "pep", "true"), ("individual", "none", "fraud", None), (None, None, "sanction", None)])
def test_entity_list_total_equals_its_rows(tenant, busy_program, entity_type, risk, flag, archived):
    query = [f"filter[entity_type]={entity_type}" if entity_type else "", f"filter[risk_level]={risk}" if risk else "",
             f"filter[flags]={flag}" if flag else "", f"archived={archived}" if archived else ""]
    total, rows = all_rows(tenant, f"/programs/{busy_program['uuid']}/entities?" + "&".join(q for q in query if q))
    assert total == len(rows) == len(set(rows))


@pytest.mark.parametrize("query", ["", "filter[created_by]=api_key", "filter[created_by]=user", "archived=true",
                                   "archived=false", "filter[program_uuid]={p}", "filter[created_by_api_key_uuid]={k}"])
def test_note_list_total_equals_its_rows(tenant, busy_program, query):
    query = query.format(p=busy_program["uuid"], k=tenant.api_key_uuid)
    total, rows = all_rows(tenant, f"/notes?{query}")
    assert total == len(rows) == len(set(rows))
    if query in ("", "filter[created_by]=api_key"):
        assert total == 3  # two written and kept, one back with its restored entity


def test_deep_page_keeps_the_order(tenant, busy_program):
    _, by_name = all_rows(tenant, f"/programs/{busy_program['uuid']}/entities?sort=entity_name")
    r = tenant.api.get(f"/programs/{busy_program['uuid']}/entities?sort=entity_name&per_page=3&page=2")
    assert [e["uuid"] for e in r.get_json()["data"]] == by_name[3:6]


def test_concurrent_notes_of_one_author_do_not_queue(app, tenant):
    """Two transactions writing notes by the same API key in the same program, on two connections: the second
    does not wait for the first to commit (note_counts keeps a bucket in slots, one per backend), and the counters
    stay exact. With one row per bucket the second INSERT waited on the first's row lock until its commit."""
    from sqlalchemy.exc import OperationalError

    from app.extensions import db
    pu = tenant.program()["uuid"]
    first, second = tenant.entity(pu)["uuid"], tenant.entity(pu)["uuid"]
    insert = text("""
        INSERT INTO notes (uuid, account_id, entity_id, program_id, note_text, is_immutable, created_at, updated_at,
                           created_by_type, created_by_api_key_id)
        SELECT gen_random_uuid(), e.account_id, e.id, e.program_id, 'concurrent', false, now(), now(), 'api_key', k.id
        FROM entities e JOIN api_keys k ON k.uuid = :key WHERE e.uuid = :entity""")
    with app.app_context(), two_slots(db.engine) as (a, b, _):
        a.execute(insert, {"key": tenant.api_key_uuid, "entity": first})  # a's transaction stays open
        b.execute(text("SET LOCAL lock_timeout = '2s'"))
        try:
            b.execute(insert, {"key": tenant.api_key_uuid, "entity": second})
        except OperationalError as exc:  # lock_timeout: it waited for a's transaction
            pytest.fail(f"the second note waited for the first transaction: {exc}")
        b.commit()
        a.commit()
    counters_match_rows(app)
    total, rows = all_rows(tenant, f"/notes?filter[program_uuid]={pu}")
    assert total == len(rows) == 2


ENTITY_INSERT = text("""
    INSERT INTO entities (uuid, account_id, program_id, entity_type, entity_name, first_name, last_name, flags,
                          risk_level, created_at, updated_at)
    SELECT gen_random_uuid(), p.account_id, p.id, :type, :name, :name, 'Slotted', CAST(:flags AS jsonb), :risk,
           now(), now()
    FROM programs p WHERE p.uuid = :program RETURNING uuid""")


def _create(conn, program_uuid: str, name: str, *, entity_type: str = "individual", risk: str | None = "high",
            flags: tuple[str, ...] = ()) -> str:
    """An entity written straight to the table on `conn` (what the API's create inserts), its uuid."""
    return str(conn.execute(ENTITY_INSERT, {"program": program_uuid, "name": name, "type": entity_type,
                                            "risk": risk, "flags": json.dumps(list(flags))}).scalar())


def _update(conn, entity_uuid: str, assignments: str, **values) -> None:
    conn.execute(text(f"UPDATE entities SET {assignments}, updated_at = now() WHERE uuid = :uuid"),
                 {"uuid": entity_uuid, **values})


def _entity_totals_match_their_rows(tenant, program_uuid: str) -> None:
    for query in ("", "archived=false", "archived=true", "filter[risk_level]=high", "filter[risk_level]=none",
                  "filter[entity_type]=business", "filter[flags]=pep", "filter[flags]=fraud&archived=false",
                  "filter[flags]=sanction", "filter[risk_level]=low&filter[flags]=pep"):
        total, rows = all_rows(tenant, f"/programs/{program_uuid}/entities?{query}")
        assert total == len(rows) == len(set(rows)), query


def test_entity_counters_stay_exact_across_slots(app, tenant):
    """Creates, updates of risk level and flags, archives, soft and hard deletes, interleaved on two connections of
    different slots (one entity written by one backend and changed by the other, so a slot alone can go
    negative): every bucket's sum of slots equals its rows, and every counted list total equals its rows."""
    from app.extensions import db
    pu = tenant.program()["uuid"]
    with app.app_context(), two_slots(db.engine) as (a, b, slots):
        a_high_pep = _create(a, pu, "Ava", flags=("pep",))
        a_business = _create(a, pu, "Acme", entity_type="business", risk="medium", flags=("pep", "fraud"))
        a_plain = _create(a, pu, "Ann", risk=None)
        a_sanction = _create(a, pu, "Abe", flags=("sanction",))
        a.commit()
        b_low = _create(b, pu, "Bea", risk="low", flags=("fraud",))
        b_plain = _create(b, pu, "Ben")
        b.commit()
        counters_match_rows(app)

        _update(b, a_high_pep, "risk_level = NULL, flags = CAST(:flags AS jsonb)", flags='["fraud", "sanction"]')
        _update(b, a_business, "archived_at = now()")
        _update(b, a_plain, "risk_level = 'low', flags = CAST(:flags AS jsonb)", flags='["pep"]')
        b.commit()
        _update(a, b_low, "risk_level = 'high', flags = CAST(:flags AS jsonb)", flags='["pep", "fraud"]')
        _update(a, b_plain, "deleted_at = now()")  # the API's delete: a soft delete
        a.execute(text("DELETE FROM entities WHERE uuid = :uuid"), {"uuid": a_sanction})  # the purge: a hard one
        _create(a, pu, "Cal", risk="low", flags=("pep",))
        a.commit()
        _update(b, b_plain, "deleted_at = NULL")  # restored, on the other backend
        b.commit()

        with db.engine.connect() as conn:  # both backends wrote both tables, each in its own slot
            for table in ("entity_counts", "entity_flag_counts"):
                written = set(conn.execute(text(f"SELECT DISTINCT slot FROM {table} c JOIN programs p "
                                                f"ON p.id = c.program_id WHERE p.uuid = :p"), {"p": pu}).scalars())
                assert set(slots) <= written, table
            # Acme, created on a and archived on b: b's slot of its live bucket went below zero
            left = conn.execute(text("SELECT n FROM entity_counts c JOIN programs p ON p.id = c.program_id "
                                     "WHERE p.uuid = :p AND entity_type = 'business' AND NOT archived "
                                     "AND slot = :slot"), {"p": pu, "slot": slots[1]}).scalar()
            assert left == -1
    counters_match_rows(app)
    _entity_totals_match_their_rows(tenant, pu)
    # Ava (none; fraud, sanction), Acme (business, medium; pep, fraud; archived), Ann (low; pep), Bea (high; pep,
    # fraud), Ben (high, restored), Cal (low; pep); Abe is gone
    for query, expected in (("", 6), ("archived=true", 1), ("filter[risk_level]=high", 2),
                            ("filter[risk_level]=none", 1), ("filter[flags]=pep", 4),
                            ("filter[flags]=pep&archived=false", 3), ("filter[risk_level]=low&filter[flags]=pep", 2),
                            ("filter[flags]=fraud&archived=false", 2), ("filter[flags]=sanction", 1),
                            ("filter[entity_type]=business&archived=false", 0)):
        assert all_rows(tenant, f"/programs/{pu}/entities?{query}")[0] == expected, query


def test_concurrent_entity_creations_in_one_program_do_not_queue(app, tenant):
    """Two transactions creating entities in the same program and bucket (type, risk, flag), on two connections:
    the second does not wait for the first to commit (entity_counts and entity_flag_counts keep a bucket in slots,
    one per backend), and the totals stay exact. With one row per bucket the second INSERT waited on the first's
    row lock until its commit."""
    from sqlalchemy.exc import OperationalError

    from app.extensions import db
    pu = tenant.program()["uuid"]
    with app.app_context(), two_slots(db.engine) as (a, b, _):
        _create(a, pu, "First", flags=("pep",))  # a's transaction stays open, holding its slot's rows
        b.execute(text("SET LOCAL lock_timeout = '2s'"))
        try:
            _create(b, pu, "Second", flags=("pep",))
        except OperationalError as exc:  # lock_timeout: it waited for a's transaction
            pytest.fail(f"the second entity waited for the first transaction: {exc}")
        b.commit()
        a.commit()
    counters_match_rows(app)
    for query in ("", "filter[risk_level]=high", "filter[flags]=pep"):
        total, rows = all_rows(tenant, f"/programs/{pu}/entities?{query}")
        assert total == len(rows) == 2, query
