"""The customers a list update may concern are found by looking the changed records' names up in an index of the
program's customer names: wide enough for the ways a name is written differently from either side, and never the
customers whose names share nothing with the changed records."""
from __future__ import annotations

from sqlalchemy import select

from app.entities.models import Entity
from app.extensions import db
from app.monitors.nominate import customer_indexes, customers_near
from app.screening.records import ListRecord, Name


def record(rid, caption, schema="Person", *aliases):
    return ListRecord(id=rid, schema=schema, caption=caption, names=[Name(a, "alias") for a in aliases])


def test_the_changed_records_names_find_the_customers_they_may_concern(app, tenant):
    p = tenant.program()
    made = {
        "shorter": tenant.entity(p["uuid"], first_name="Viktor", last_name="Bout"),
        "typo": tenant.entity(p["uuid"], first_name="Ottoline", last_name="Featherstonhaugh"),
        "middle": tenant.entity(p["uuid"], first_name="Rustam", middle_name="K", last_name="Azimov"),
        "business": tenant.entity(p["uuid"], entity_type="business", first_name=None, last_name=None,
                                  business_name="Blue Ocean Trading LLC"),
        "vessel": tenant.entity(p["uuid"], entity_type="vessel", first_name=None, last_name=None,
                                vessel_name="Sea Glory"),
        "alias": tenant.entity(p["uuid"], first_name="Abu", last_name="Hamza"),
        "unrelated": tenant.entity(p["uuid"], first_name="Margarethe", last_name="Lindqvist"),
        "gone": tenant.entity(p["uuid"], first_name="Viktor", last_name="Bout"),
    }
    assert tenant.api.delete(f"/entities/{made['gone']['uuid']}").status_code in (200, 204)
    changed = [
        record("r1", "Viktor Anatolyevich BOUT"),                     # the listed name is longer
        record("r2", "Ottoline Featherstonehaugh"),                   # one letter apart
        record("r3", "AZIMOV, Rustam Kamilovich"),                    # surname first, full middle name
        record("r4", "BLUE OCEAN TRADING L.L.C.", "Company"),
        record("r5", "SEA GLORY", "Vessel"),
        record("r6", "Mustafa Kamel Mustafa", "Person", "Abu Hamza"),  # an alias names the customer
        record("r7", "Cessna Citation", "Airplane"),
    ]
    with app.app_context():
        program_id = db.session.scalar(select(Entity.program_id).where(Entity.uuid == made["typo"]["uuid"]))
        ids = {str(u): i for u, i in db.session.execute(select(Entity.uuid, Entity.id).where(
            Entity.program_id == program_id))}
        (index,) = customer_indexes(db.session, program_id)
        found = customers_near(index, changed, 80)
        expected = {ids[made[k]["uuid"]] for k in ("shorter", "typo", "middle", "business", "vessel", "alias")}
        assert found == expected  # neither the unrelated customer nor the deleted one
        assert customers_near(index, [record("r8", "Margarethe Lindqvist")], 80) == {ids[made["unrelated"]["uuid"]]}
        assert customers_near(index, [record("r9", "Xiomara Ugarte-Pellegrini")], 80) == set()
        # in parts of 3 customers (7 live ones: three indexes), the same customers
        parts = list(customer_indexes(db.session, program_id, size=3))
        assert len(parts) == 3 and set().union(*(customers_near(i, changed, 80) for i in parts)) == expected
