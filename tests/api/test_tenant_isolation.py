"""Tenant isolation across the whole API, discovered from the URL map so that new routes are covered as they land.

Every route of the `api` blueprint is called with the key of account B against account A's records: each method
of a route with a uuid in its path must answer 404 exactly as for a uuid that does not exist, must change
nothing, and no response to B (lists, filters, nested lists) may carry any of A's uuids.

A route whose path names a uuid parameter that this module cannot fill fails the test: add a maker for it to
`OWNED` (a function that creates such a record for a tenant and returns its uuid)."""
from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Callable

from sqlalchemy import select

PUBLIC_ENDPOINTS = {"api.openapi_document"}
PARAM_RE = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

# Non-uuid path parameters and the value used for them.
STRING_PARAMS: dict[str, str] = {"type": "licence_front", "image_type": "selfie"}

# Requests that the route would accept apart from tenancy, for routes that do not take a JSON object body, so
# that the record lookup (and not body parsing) decides the answer. Keyed by endpoint name.
REQUEST_KW: dict[str, dict] = {
    "api.bulk_import_entities": {"data": "entity_type,first_name,last_name\nindividual,Ann,Lee\n",
                                 "headers": {"Content-Type": "text/csv"}},
}


# ------------------------------------------------------------------ records owned by a tenant

@dataclass
class Owned:
    tenant: object
    uuids: dict[str, str] = field(default_factory=dict)  # path/filter parameter name -> uuid


def _program(app, t, o: Owned) -> str:
    return t.program()["uuid"]


def _entity(app, t, o: Owned) -> str:
    if "api.create_entity" in app.view_functions:
        return t.entity(o.uuids["program_uuid"])["uuid"]
    from app.entities.models import Entity
    from app.extensions import db
    from app.programs.models import Program
    with app.app_context():  # until the entities API exists
        program_id = db.session.scalar(select(Program.id).where(Program.uuid == uuid.UUID(o.uuids["program_uuid"])))
        entity = Entity(account_id=t.account_id, program_id=program_id, entity_type="individual",
                        first_name="Jane", last_name="Doe", entity_name="Jane Doe", flags=[])
        db.session.add(entity)
        db.session.commit()
        return str(entity.uuid)


def _note(app, t, o: Owned) -> str:
    r = t.api.post(f"/entities/{o.uuids['entity_uuid']}/notes", json={"note_text": "Confidential"})
    assert r.status_code == 201, r.get_json()
    return r.get_json()["data"]["uuid"]


def _user(app, t, o: Owned) -> str:
    from app.accounts.models import User
    from app.extensions import db
    with app.app_context():
        return str(db.session.scalar(select(User.uuid).where(User.email == t.email)))


def _check(app, t, o: Owned) -> str:
    """An entity check that ran on a real RQ worker (in this process) and raised an event (sandbox-hit)."""
    entity = t.entity(o.uuids["program_uuid"], first_name="Ada", last_name="sandbox-hit")
    r = t.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["adverse_media"]})
    assert r.status_code == 202, r.get_json()
    from rq import SimpleWorker

    from app.jobs import QUEUES, _redis_connection
    with app.app_context():
        SimpleWorker([app.config["RQ_QUEUE_PREFIX"] + q for q in QUEUES],
                     connection=_redis_connection(app, worker=True)).work(burst=True, with_scheduler=False)
    return r.get_json()["data"]["uuid"]


def _adhoc_check(app, t, o: Owned) -> str:
    r = t.api.post("/adhoc-checks", json={"check_types": ["phone_check"], "data": {"phone": "+61412345678"}})
    assert r.status_code == 202, r.get_json()
    return r.get_json()["data"]["uuid"]


def _event(app, t, o: Owned) -> str:
    events = t.api.get("/events").get_json()["data"]
    assert events, "the sandbox-hit check raised no event"
    return events[0]["uuid"]


def _monitor(app, t, o: Owned) -> str:
    r = t.api.post(f"/programs/{o.uuids['program_uuid']}/monitors", json={
        "monitor_name": "Confidential monitor", "monitor_check_type": "pep_sanction_check", "status": "active",
        "schedule": "manual"})
    assert r.status_code == 201, r.get_json()
    return r.get_json()["data"]["uuid"]


def _run(app, t, o: Owned) -> str:
    r = t.api.post(f"/monitors/{o.uuids['monitor_uuid']}/run", json={"mode": "all"})
    assert r.status_code == 202, r.get_json()
    return r.get_json()["data"]["uuid"]


def _id_check(app, t, o: Owned) -> str:
    """An entity's ID check (a New Zealand licence: verified without a DVS identity)."""
    r = t.api.post(f"/entities/{o.uuids['entity_uuid']}/id-checks", json={
        "id_type": "nz_drivers_licence", "consent_obtained": True,
        "data": {"first_name": "Jane", "last_name": "Doe", "birth_date": "1980-01-01", "licence_number": "DI123456",
                 "version_number": "001"}})
    assert r.status_code == 200, r.get_json()
    return r.get_json()["data"]["uuid"]


def _adhoc_id_check(app, t, o: Owned) -> str:
    r = t.api.post("/adhoc-id-checks", json={
        "id_type": "nz_passport", "consent_obtained": True,
        "data": {"first_name": "Jane", "last_name": "Doe", "birth_date": "1980-01-01", "passport_number": "LA123456",
                 "expiry_date": "2031-01-01"}})
    assert r.status_code == 200, r.get_json()
    return r.get_json()["data"]["uuid"]


def _idpass(app, t, o: Owned) -> str:
    """An entity's IDPass that has ended (cancelled), with a selfie stored: its image and certificate exist."""
    from app.accounts.models import Account
    from app.accounts.services import add_dvs_identity, cli_actor
    from app.core.transactions import commit
    from app.core.uploads import clean_image
    from app.extensions import db
    from app.idpass import images, services
    from app.idpass.queries import get_idpass
    from tests.idpass.images import portrait_jpeg
    with app.app_context():
        actor = cli_actor(db.session.get(Account, t.account_id))
        add_dvs_identity(actor, oac_code="OAC1", requester_name="Confidential Bank",
                         privacy_policy_url="https://bank.example.test/privacy")
        commit()
    r = t.api.post(f"/entities/{o.uuids['entity_uuid']}/idpasses", json={
        "data": {"first_name": "Jane", "last_name": "Doe"},
        "config": {"link_validity_days": 3, "check_liveness": False, "document_1": ["passport"],
                   "require_id_photo": False, "return_verification_images": True, "delivery_method": "manual"}})
    assert r.status_code == 202, r.get_json()
    idpass_uuid = r.get_json()["data"]["uuid"]
    with app.app_context():
        images.store(get_idpass(actor, idpass_uuid), "selfie", clean_image(portrait_jpeg()))
        services.cancel(actor, idpass_uuid)
        commit()
        from app import reports
        reports.idpass_certificate(actor, idpass_uuid)  # issued now: the walk's GETs then change nothing
        commit()
    return idpass_uuid


def _webhook_endpoint(app, t, o: Owned) -> str:
    """An endpoint on a loopback URL (allowed while it is registered; nothing listens there)."""
    saved = app.config["WEBHOOK_ALLOWED_NETWORKS"]
    app.config["WEBHOOK_ALLOWED_NETWORKS"] = "127.0.0.0/8"
    try:
        r = t.api.post("/webhook-endpoints", json={"url": "http://127.0.0.1:9/confidential",
                                                   "event_types": ["check.completed"]})
    finally:
        app.config["WEBHOOK_ALLOWED_NETWORKS"] = saved
    assert r.status_code == 201, r.get_json()
    return r.get_json()["data"]["uuid"]


def _webhook_delivery(app, t, o: Owned) -> str:
    r = t.api.post(f"/webhook-endpoints/{o.uuids['endpoint_uuid']}/test")
    assert r.status_code == 202, r.get_json()
    return r.get_json()["data"]["uuid"]


def _report_email(app, t, o: Owned) -> str:
    """A report e-mail that failed (the admins' page offers to send it again)."""
    from app.extensions import db
    from app.notify.models import ReportEmail
    with app.app_context():
        row = ReportEmail(account_id=t.account_id, recipients=["compliance@example.com"], status="failed",
                          subject="[Screening] confidential", body="confidential", last_error="SMTP: refused")
        db.session.add(row)
        db.session.commit()
        return str(row.uuid)


def _invitation(app, t, o: Owned) -> str:
    from app.accounts.models import Account
    from app.accounts.services import cli_actor, invite_user
    from app.extensions import db
    with app.app_context():
        invitation = invite_user(cli_actor(db.session.get(Account, t.account_id)),
                                 email=f"invited-{t.account_id}@example.com", role="viewer")
        db.session.commit()
        return str(invitation.uuid)


def _heavy_job(app, t, o: Owned) -> str:
    """A large import (a heavy job), run to its end: its status, its file and its errors are the account's."""
    from rq import SimpleWorker

    from app.jobs import QUEUES, _redis_connection
    saved = app.config["HEAVY_IMPORT_SYNC_ROWS"]
    app.config["HEAVY_IMPORT_SYNC_ROWS"] = 1
    try:
        r = t.api.client.post(f"/api/v1/programs/{o.uuids['program_uuid']}/entities/bulk",
                              data=b"entity_type,first_name,last_name\nindividual,Ada,Heavy\nindividual,Bo,Heavy\n",
                              content_type="text/csv", headers={"Authorization": f"Bearer {t.api_key}"})
    finally:
        app.config["HEAVY_IMPORT_SYNC_ROWS"] = saved
    assert r.status_code == 202, r.get_json()
    with app.app_context():
        SimpleWorker([app.config["RQ_QUEUE_PREFIX"] + q for q in QUEUES],
                     connection=_redis_connection(app, worker=True)).work(burst=True, with_scheduler=False)
    job = t.api.get(f"/jobs/{r.get_json()['data']['uuid']}").get_json()["data"]
    assert job["status"] == "complete", job
    return job["uuid"]


# In dependency order. Add a maker here when a route with a new uuid parameter is added.
OWNED: dict[str, Callable] = {
    "program_uuid": _program,
    "entity_uuid": _entity,
    "note_uuid": _note,
    "check_uuid": _check,
    "adhoc_check_uuid": _adhoc_check,
    "event_uuid": _event,
    "monitor_uuid": _monitor,
    "run_uuid": _run,
    "id_check_uuid": _id_check,
    "adhoc_id_check_uuid": _adhoc_id_check,
    "idpass_uuid": _idpass,
    "endpoint_uuid": _webhook_endpoint,
    "delivery_uuid": _webhook_delivery,
    "job_uuid": _heavy_job,
    "created_by_user_uuid": _user,
    "created_by_api_key_uuid": lambda app, t, o: t.api_key_uuid,
    "report_email_uuid": _report_email,
    "invitation_uuid": _invitation,
}


def make_records(app, tenant) -> Owned:
    owned = Owned(tenant)
    for name, maker in OWNED.items():
        owned.uuids[name] = maker(app, tenant, owned)
    return owned


# ------------------------------------------------------------------ the walk

def api_routes(app):
    for rule in app.url_map.iter_rules():
        if rule.endpoint.startswith("api.") and rule.endpoint not in PUBLIC_ENDPOINTS:
            for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
                yield rule, method


def path_params(rule) -> list[tuple[str, str]]:
    return [(conv or "default", name) for conv, name in PARAM_RE.findall(rule.rule)]


def fill(rule, values: dict[str, str]) -> str:
    return PARAM_RE.sub(lambda m: values[m.group(2)], rule.rule)


def call(api, method: str, path: str, endpoint: str):
    kw = REQUEST_KW.get(endpoint)
    if kw is None:
        kw = {"json": {}} if method in ("POST", "PATCH", "PUT") else {}
    return api.request(method, path, **kw)


def body_of(response):
    try:
        return response.get_json(silent=True)
    except Exception:
        return None


def uuids_in(response) -> set[str]:
    if response.mimetype == "application/pdf":  # the report's text, as a reader would see it
        import subprocess
        text = subprocess.run(["pdftotext", "-", "-"], input=response.get_data(), capture_output=True,
                              check=True).stdout.decode()
    elif response.mimetype.startswith("image/"):  # pixels: no text to leak a uuid through
        return set()
    else:
        text = response.get_data(as_text=True)
    return set(UUID_RE.findall(text.lower()))


def snapshot(app, owner: Owned) -> dict:
    """Every GET route of the API as the owner sees it (the records' state), to prove nothing changed."""
    state = {}
    for rule, method in api_routes(app):
        if method != "GET":
            continue
        names = [name for conv, name in path_params(rule)]
        if not all(n in owner.uuids or n in STRING_PARAMS for n in names):
            continue
        path = fill(rule, {**STRING_PARAMS, **owner.uuids})
        r = owner.tenant.api.get(path)
        data = body_of(r)
        state[path] = (r.status_code, {k: v for k, v in data.items() if k != "api_reference"}
                       if isinstance(data, dict) else None)
    return state


def test_another_accounts_key_reaches_nothing(app, tenant, other_tenant):
    owner = make_records(app, tenant)       # account A: the records under attack
    intruder = make_records(app, other_tenant)  # account B: has records of its own, so lists are not empty
    owner_uuids = set(owner.uuids.values())
    before = snapshot(app, owner)
    api = other_tenant.api

    routes = list(api_routes(app))
    assert routes, "no API routes found"
    unfillable, exercised, problems = set(), set(), []
    for rule, method in routes:
        params = path_params(rule)
        uuid_params = [name for conv, name in params if conv == "uuid"]
        other_params = [name for conv, name in params if conv != "uuid"]
        missing = [n for n in uuid_params if n not in owner.uuids] + [n for n in other_params if n not in STRING_PARAMS]
        if missing:
            unfillable.add(f"{method} {rule.rule}: {', '.join(missing)}")
            continue
        label = f"{method} {rule.rule}"

        if uuid_params:
            # A's records through B's key: 404, exactly like a uuid that exists nowhere.
            r = call(api, method, fill(rule, {**STRING_PARAMS, **owner.uuids}), rule.endpoint)
            ghost = call(api, method, fill(rule, {**STRING_PARAMS, **{n: str(uuid.uuid4()) for n in uuid_params}}),
                         rule.endpoint)
            exercised.add(rule.endpoint)
            if r.status_code != 404:
                problems.append(f"{label}: {r.status_code} for another account's record, expected 404 "
                                f"({r.get_data(as_text=True)[:200]})")
            elif (body_of(r) or {}).get("message") != (body_of(ghost) or {}).get("message") \
                    or ghost.status_code != 404:
                problems.append(f"{label}: answers differently for another account's record "
                                f"({r.get_json()}) and for an unknown uuid ({ghost.status_code}, {body_of(ghost)})")
            if uuids_in(r) & owner_uuids:
                problems.append(f"{label}: the response names a record of the other account")
            # B's own records through the same route must not surface A's rows either (nested lists).
            if method == "GET":
                own = api.get(fill(rule, {**STRING_PARAMS, **intruder.uuids}))
                if own.status_code >= 400:
                    problems.append(f"{label}: {own.status_code} for the caller's own record")
                if uuids_in(own) & owner_uuids:
                    problems.append(f"{label}: shows another account's rows for the caller's own record")
        elif method == "GET":
            exercised.add(rule.endpoint)
            r = api.get(rule.rule)
            if r.status_code != 200:
                problems.append(f"{label}: {r.status_code} for a plain list request")
            if uuids_in(r) & owner_uuids:
                problems.append(f"{label}: lists another account's rows")
            # and filtered by A's uuids: an empty page
            query = getattr(app.view_functions[rule.endpoint], "openapi", {}).get("query", {})
            for key in query:
                m = re.fullmatch(r"filter\[(\w+_uuid)\]", key)
                if not m or m.group(1) not in owner.uuids:
                    continue
                f = api.get(f"{rule.rule}?{key}={owner.uuids[m.group(1)]}")
                data = (body_of(f) or {}).get("data")
                if f.status_code != 200 or data != [] or uuids_in(f) & owner_uuids:
                    problems.append(f"{label}?{key}=<A's uuid>: {f.status_code} {data!r:.200}")
        # Writes without a uuid in the path (creation routes) touch only the caller's own account: nothing of
        # A's to reach here; their bodies' references to other records are covered by each domain's tests.

    report = problems + [f"not exercised, add a maker to OWNED (or a value to STRING_PARAMS): {u}"
                         for u in sorted(unfillable)]
    assert not report, "\n".join(report)
    assert {"api.list_programs", "api.show_program", "api.update_program", "api.delete_program", "api.create_note",
            "api.list_notes", "api.show_note", "api.update_note", "api.delete_note"} <= exercised, exercised

    # Nothing of A's changed, and no write by B's key was recorded against A's records.
    assert snapshot(app, owner) == before
    from app.accounts.models import AuditLog
    from app.extensions import db
    with app.app_context():
        rows = db.session.scalars(select(AuditLog).where(
            AuditLog.actor_uuid == uuid.UUID(other_tenant.api_key_uuid),
            AuditLog.target_uuid.in_([uuid.UUID(u) for u in owner_uuids]))).all()
        assert rows == []
    # B's own rows are listed (the lists above were not empty by accident).
    assert intruder.uuids["note_uuid"] in json.dumps(api.get("/notes").get_json())
    assert intruder.uuids["program_uuid"] in json.dumps(api.get("/programs").get_json())


def test_snapshot_sees_the_owner_records(app, tenant):
    """The before/after comparison above is only meaningful if the owner's GET routes answer with data."""
    owner = make_records(app, tenant)
    state = snapshot(app, owner)
    shown = [path for path, (status, _) in state.items() if status == 200]
    assert f"/api/v1/notes/{owner.uuids['note_uuid']}" in shown
    assert f"/api/v1/programs/{owner.uuids['program_uuid']}" in shown
    assert any(owner.uuids["note_uuid"] in json.dumps(body) for _, body in state.values())
