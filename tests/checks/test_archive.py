"""Spec "Entity archive": the entity's checks (and so their reports) are archived with it, and the check lists
honour `archived` (true: only archived, false: only not archived, omitted: both)."""
from __future__ import annotations

import uuid

from sqlalchemy import select

from app.checks.models import Check
from app.extensions import db


def _heads(tenant, path: str, **query) -> list[str]:
    r = tenant.api.get(path, query_string=query)
    assert r.status_code == 200, r.get_json()
    return [c["uuid"] for c in r.get_json()["data"]]


def test_archiving_an_entity_archives_its_checks_and_the_lists_honour_archived(app, tenant):
    program = tenant.program()
    entity = tenant.entity(program["uuid"], phone1="+61412345678")
    other = tenant.entity(program["uuid"], phone1="+61412345679")
    group = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                            json={"check_types": ["phone_check", "pep_sanction_check"]}).get_json()["data"]
    single = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                             json={"check_types": ["phone_check"]}).get_json()["data"]
    kept = tenant.api.post(f"/entities/{other['uuid']}/checks",
                           json={"check_types": ["phone_check"]}).get_json()["data"]
    path = f"/entities/{entity['uuid']}/checks"
    assert _heads(tenant, path, archived="true") == []
    assert set(_heads(tenant, path, archived="false")) == {group["uuid"], single["uuid"]}

    archived_at = tenant.api.post(f"/entities/{entity['uuid']}/archive").get_json()["data"]["archived_at"]

    assert set(_heads(tenant, path, archived="true")) == {group["uuid"], single["uuid"]}
    assert _heads(tenant, path, archived="false") == []
    assert set(_heads(tenant, path)) == {group["uuid"], single["uuid"]}  # omitted: both
    listed = tenant.api.get(path).get_json()["data"]
    assert {c["archived_at"] for c in listed} == {archived_at}
    shown = tenant.api.get(f"/checks/{group['children'][0]['uuid']}").get_json()["data"]
    assert shown["archived_at"] == archived_at  # the group's children go too
    assert tenant.api.get(f"/checks/{kept['uuid']}").get_json()["data"]["archived_at"] is None
    assert _heads(tenant, f"/entities/{other['uuid']}/checks", archived="false") == [kept["uuid"]]
    with app.app_context():
        stamped = db.session.scalars(select(Check.archived_at).where(
            Check.entity_id == select(Check.entity_id).where(Check.uuid == uuid.UUID(single["uuid"]))
            .scalar_subquery())).all()
        assert len(stamped) == 4 and all(s is not None for s in stamped)  # group, 2 children, single

    assert tenant.api.get(path, query_string={"archived": "maybe"}).status_code == 400


def test_unarchive_brings_back_exactly_the_checks_it_archived(app, tenant):
    from app.accounts.models import User
    from app.accounts.services import user_actor
    from app.core.transactions import commit
    from app.entities.services import unarchive_entity

    program = tenant.program()
    entity = tenant.entity(program["uuid"], phone1="+61412345678")
    check = tenant.api.post(f"/entities/{entity['uuid']}/checks",
                            json={"check_types": ["phone_check"]}).get_json()["data"]
    tenant.api.post(f"/entities/{entity['uuid']}/archive")
    with app.app_context():
        admin = db.session.scalar(select(User).where(User.account_id == tenant.account_id, User.role == "admin"))
        unarchive_entity(user_actor(admin), uuid.UUID(entity["uuid"]))
        commit()
    assert tenant.api.get(f"/checks/{check['uuid']}").get_json()["data"]["archived_at"] is None
    assert _heads(tenant, f"/entities/{entity['uuid']}/checks", archived="false") == [check["uuid"]]


def test_adhoc_list_accepts_archived(tenant):
    """Adhoc checks have no entity, so they are never archived."""
    check = tenant.api.post("/adhoc-checks", json={"check_types": ["phone_check"],
                                                   "data": {"phone": "+61412345678"}}).get_json()["data"]
    assert _heads(tenant, "/adhoc-checks", archived="false") == [check["uuid"]]
    assert _heads(tenant, "/adhoc-checks", archived="true") == []
