"""Unit tests of the platform core: public numbers, list parameters, field errors, CLI contracts."""
import json

import pytest
from werkzeug.datastructures import MultiDict

from app.core import numbers
from app.core.errors import Invalid
from app.core.listing import choice, parse_list_params


def test_public_numbers_roundtrip_and_are_kind_specific(app_ctx):
    n = numbers.encode("entity", 42)
    assert n != "42" and len(n) >= 7
    assert numbers.decode("entity", n) == 42
    assert numbers.decode("program", n) is None
    assert numbers.decode("entity", n.lower()) == 42
    assert numbers.decode("entity", "!!!") is None
    assert numbers.encode("entity", 43) != n


def test_list_params_defaults_and_errors():
    params = parse_list_params(MultiDict(), filters={}, sorts=("created_at",), default_sort="-created_at")
    assert (params.page, params.per_page, params.sort, params.archived) == (1, 30, "-created_at", None)
    params = parse_list_params(MultiDict({"per_page": "500", "page": "3", "sort": "created_at", "archived": "0",
                                          "filter[kind]": "a"}),
                               filters={"kind": choice("a", "b")}, sorts=("created_at",), default_sort="-created_at")
    assert (params.page, params.per_page, params.sort, params.archived, params.filters) == \
        (3, 500, "created_at", False, {"kind": "a"})
    with pytest.raises(Invalid) as exc:
        parse_list_params(MultiDict({"per_page": "501", "filter[kind]": "c", "filter[x]": "1", "sort": "name"}),
                          filters={"kind": choice("a", "b")}, sorts=("created_at",), default_sort="-created_at")
    assert set(exc.value.errors) == {"per_page", "filter[kind]", "filter[x]", "sort"}


def test_cli_bootstrap_prints_one_json_object(app):
    runner = app.test_cli_runner(mix_stderr=False) if "mix_stderr" in app.test_cli_runner.__code__.co_varnames \
        else app.test_cli_runner()
    result = runner.invoke(args=["accounts", "bootstrap", "--name", "Acme", "--email", "Boss@Acme-Corp.com",
                                 "--password", "correct-horse-42", "--credit", "250"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["user_email"] == "boss@acme-corp.com" and out["api_key"].startswith("sk_test_")
    assert out["account_uuid"] and out["credit"] == 250
    client = app.test_client()
    r = client.get("/api/v1/programs", headers={"Authorization": f"Bearer {out['api_key']}"})
    assert r.status_code == 200

    # the other account commands
    acct = out["account_uuid"]
    r = runner.invoke(args=["accounts", "create-key", "--account", acct, "--label", "CI"])
    key = json.loads(r.stdout)
    assert key["api_key"].startswith("sk_test_") and key["label"] == "CI"
    r = runner.invoke(args=["accounts", "revoke-key", "--account", acct, "--key", key["api_key_uuid"]])
    assert r.exit_code == 0
    assert client.get("/api/v1/programs", headers={"Authorization": f"Bearer {key['api_key']}"}).status_code == 401
    r = runner.invoke(args=["accounts", "add-credit", "--account", acct, "--amount", "50"])
    assert json.loads(r.stdout)["credit"] == 300
    r = runner.invoke(args=["accounts", "create-user", "--account", acct, "--email", "v@acme-corp.com",
                            "--password", "correct-horse-42", "--role", "viewer"])
    assert json.loads(r.stdout)["role"] == "viewer"


def test_cli_rejects_weak_password_and_duplicate_email(app):
    runner = app.test_cli_runner()
    r = runner.invoke(args=["accounts", "bootstrap", "--name", "A", "--email", "a@a-corp.com", "--password", "short"])
    assert r.exit_code == 2 and "password" in r.output
    ok = runner.invoke(args=["accounts", "bootstrap", "--name", "A", "--email", "a@a-corp.com",
                             "--password", "correct-horse-42"])
    assert ok.exit_code == 0
    dup = runner.invoke(args=["accounts", "bootstrap", "--name", "B", "--email", "A@a-corp.com",
                              "--password", "correct-horse-42"])
    assert dup.exit_code == 2 and "already exists" in dup.output


def test_password_hash_is_argon2_and_verifies(app_ctx):
    from app.accounts.models import User
    from app.accounts.services import hash_password, verify_password
    h = hash_password("correct-horse-42")
    assert h.startswith("$argon2id$")
    user = User(password_hash=h)
    assert verify_password(user, "correct-horse-42") and not verify_password(user, "wrong-horse-42")


def test_credit_ledger_balance_is_the_sum(app, tenant):
    from app.accounts.models import Account, CreditEntry, credit_balance
    from app.accounts.services import cli_actor
    from app.billing.services import top_up
    from app.core.transactions import commit
    from app.extensions import db
    from sqlalchemy import select
    with app.app_context():
        account = db.session.get(Account, tenant.account_id)
        top_up(cli_actor(account), 500, "Invoice 7")
        commit()
        assert credit_balance(account.id) == 1500
        kinds = list(db.session.scalars(select(CreditEntry.reason).where(CreditEntry.account_id == account.id)
                                        .order_by(CreditEntry.id)))
        assert kinds == ["Initial credit", "Invoice 7"]
        with pytest.raises(Invalid):
            top_up(cli_actor(account), 0, "nothing")


def test_seed_demo_is_idempotent_and_prints_a_working_key(app):
    runner = app.test_cli_runner()
    first = json.loads(runner.invoke(args=["accounts", "seed-demo"]).stdout)
    second = json.loads(runner.invoke(args=["accounts", "seed-demo"]).stdout)
    assert first["account_uuid"] == second["account_uuid"] and first["api_key"] != second["api_key"]
    client = app.test_client()
    programs = client.get("/api/v1/programs?sort=program_name",
                          headers={"Authorization": f"Bearer {second['api_key']}"}).get_json()["data"]
    assert [p["program_name"] for p in programs] == ["Corporate clients", "Retail onboarding"]
    entities = client.get(f"/api/v1/programs/{programs[1]['uuid']}/entities",
                          headers={"Authorization": f"Bearer {second['api_key']}"}).get_json()
    assert entities["meta"]["total"] == 5
    # the demo has a DVS identity: an Australian document is verified (by the sandbox) straight away
    checked = client.post("/api/v1/adhoc-id-checks", headers={"Authorization": f"Bearer {second['api_key']}"},
                          json={"id_type": "passport", "consent_obtained": True,
                                "data": {"first_name": "Jane", "last_name": "Citizen", "birth_date": "1980-02-01",
                                         "gender": "F", "document_number": "PA1234567"}})
    assert checked.status_code == 200 and checked.get_json()["data"]["outcome"] == "pass"
    # only the key printed last works: running `make run` again does not pile up live keys
    old = client.get("/api/v1/programs", headers={"Authorization": f"Bearer {first['api_key']}"})
    assert old.status_code == 401
    third = json.loads(runner.invoke(args=["accounts", "seed-demo"]).stdout)
    assert client.get("/api/v1/programs", headers={"Authorization": f"Bearer {second['api_key']}"}).status_code == 401
    assert client.get("/api/v1/programs", headers={"Authorization": f"Bearer {third['api_key']}"}).status_code == 200


def test_demo_data_has_a_check_that_hits(app):
    from rq import SimpleWorker

    from app.jobs import QUEUES, _redis_connection
    runner = app.test_cli_runner()
    demo = json.loads(runner.invoke(args=["accounts", "seed-demo"]).stdout)
    with app.app_context():
        SimpleWorker([app.config["RQ_QUEUE_PREFIX"] + q for q in QUEUES],
                     connection=_redis_connection(app, worker=True)).work(burst=True, with_scheduler=False)
    headers = {"Authorization": f"Bearer {demo['api_key']}"}
    events = app.test_client().get("/api/v1/events", headers=headers).get_json()
    assert events["meta"]["total"] == 1 and events["data"][0]["check_type"] == "pep_sanction_check"


def test_validation_messages_speak_plainly():
    """No validation-library wording: the rejected value and what is allowed."""
    from pydantic import ValidationError

    from app.checks.schemas import EntityCheckLaunch
    from app.core.schemas import field_errors
    from app.programs.schemas import ProgramCreate
    try:
        ProgramCreate.model_validate({"program_name": "", "event_grouping": "sideways"})
    except ValidationError as exc:
        errors = field_errors(exc)
    assert errors["event_grouping"] == ["“sideways” is not allowed. Use one of: separate or grouped."]
    assert all("should" not in m for messages in errors.values() for m in messages)
    try:
        EntityCheckLaunch.model_validate({"check_types": ["tarot"]})
    except ValidationError as exc:
        message = field_errors(exc)["check_types.0"][0]
    assert message.startswith("“tarot” is not allowed. Use one of: pep_sanction_check, adverse_media")
