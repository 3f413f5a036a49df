"""Migrations on SQLite (the embedded `make run`): a batch migration rebuilds a table (copy, drop, rename), and with
foreign keys enforced, dropping the old table would delete the rows that reference it (ON DELETE CASCADE).
migrations/env.py turns the checks off for the migration's connection; this walks a batch migration of `id_checks`
down and up with an event pointing at an ID check, and the event must survive."""
from __future__ import annotations

import uuid

from flask_migrate import downgrade, upgrade
from sqlalchemy import func, select, text

from app.extensions import db


def test_a_batch_migration_keeps_the_rows_that_reference_the_rebuilt_table(tmp_path, app):
    from app import create_app
    from app.accounts.services import bootstrap_account, cli_actor, get_account
    from app.core.transactions import commit
    from app.entities.services import create_entity
    from app.events.models import Event
    from app.idchecks.models import IdCheck
    from app.programs.services import create_program

    sqlite_app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/dev.db", "REDIS_URL": None,
                             "RATELIMIT_STORAGE_URI": app.config["RATELIMIT_STORAGE_URI"], "TESTING": True})
    with sqlite_app.app_context():
        upgrade()
        info = bootstrap_account(name="Dev", email="dev@example.com", password="correct-horse-42")
        actor = cli_actor(get_account(uuid.UUID(info["account_uuid"])))
        program = create_program(actor, {"program_name": "Customers"})
        entity = create_entity(actor, program.uuid, {"entity_type": "individual", "first_name": "Harriet",
                                                     "last_name": "Wombatson"})
        check = IdCheck(account_id=actor.account_id, kind="entity", program_id=program.id, entity_id=entity.id,
                        id_type="idpass", check_type="idpass", outcome="pending")
        db.session.add(check)
        db.session.flush()
        db.session.add(Event(account_id=actor.account_id, program_id=program.id, entity_id=entity.id,
                             id_check_id=check.id, check_type="idpass", check_result_ids=[]))
        commit()
        db.session.remove()

        downgrade(revision="b7d2e9f4a611")  # drops id_checks.recheck_of_id: a batch rebuild of id_checks
        upgrade()
        with db.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(Event.__table__)).scalar() == 1
            assert conn.execute(select(func.count()).select_from(IdCheck.__table__)).scalar() == 1
            assert conn.execute(text("PRAGMA foreign_key_check")).fetchall() == []
            assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1  # the app's connections check again
        db.engine.dispose()
