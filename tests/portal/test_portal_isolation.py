"""Tenant isolation across the portal, discovered from the URL map: a signed-in admin of account B gets, for
every portal route with a uuid of account A's records in its path, exactly a 404 (GET and POST), and account A's
records are unchanged afterwards. A route with a uuid parameter this module cannot fill fails the test: map its
parameter in PARAMS. The platform's routes (the screening lists, the same for every account) answer what
PLATFORM_ENDPOINTS says instead."""
from __future__ import annotations

from tests.api.test_tenant_isolation import PARAM_RE, make_records, snapshot

# Portal parameter name -> the record maker's name (tests/api/test_tenant_isolation.py OWNED).
PARAMS = {"program_uuid": "program_uuid", "entity_uuid": "entity_uuid", "note_uuid": "note_uuid",
          "check_uuid": "check_uuid", "event_uuid": "event_uuid", "user_uuid": "created_by_user_uuid",
          "key_uuid": "created_by_api_key_uuid", "monitor_uuid": "monitor_uuid", "run_uuid": "run_uuid",
          "id_check_uuid": "id_check_uuid", "idpass_uuid": "idpass_uuid", "endpoint_uuid": "endpoint_uuid",
          "delivery_uuid": "delivery_uuid", "email_uuid": "report_email_uuid", "invitation_uuid": "invitation_uuid",
          "job_uuid": "job_uuid"}
ADHOC_ENDPOINTS = {"portal.adhoc_checks_show", "portal.adhoc_checks_pdf", "portal.adhoc_checks_near_misses"}
# The screening lists are the platform's, not an account's: their routes name a list and a version, and every
# account's users read the same page (tests/portal/test_lists_portal.py). Only the operator decides on a held
# version, so an admin of another account gets 403 there, whatever the list.
PLATFORM_ENDPOINTS = {"portal.screening_lists_accept": 403, "portal.screening_lists_reject": 403}
PLATFORM_PARAMS = {"list_name": "test_sanctions", "version": "1"}


def owned_values(app, owner) -> dict[str, str]:
    """Parameters that are not the records' uuids, filled from account A's records: an image of its IDPass (the
    maker stores a selfie), its DVS identity."""
    from sqlalchemy import select

    from app.extensions import db
    from app.accounts.models import Account, DvsIdentity
    from app.idpass.models import IdPass, IdPassImage
    with app.app_context():
        image_id = db.session.scalar(select(IdPassImage.id).join(IdPass).where(
            IdPass.uuid == owner.uuids["idpass_uuid"]).limit(1))
        identity_uuid = db.session.scalar(select(DvsIdentity.uuid).join(Account).where(
            Account.uuid == owner.tenant.account_uuid).limit(1))
    assert image_id is not None and identity_uuid is not None
    # an invitation link's token names no account: one that opens nothing answers 404 to anyone
    return {"image_id": str(image_id), "identity_uuid": str(identity_uuid), "token": "x" * 43}


def test_another_accounts_admin_reaches_nothing_in_the_portal(app, tenant, other_tenant, login):
    owner = make_records(app, tenant)
    make_records(app, other_tenant)
    intruder = login(other_tenant.email)
    snapshot(app, owner)  # the first look issues the IDPass's certificate (written to its log); the next is stable
    before = snapshot(app, owner)
    others = owned_values(app, owner)
    walked = 0
    for rule in app.url_map.iter_rules():
        if not rule.endpoint.startswith("portal.") or "<" not in rule.rule:
            continue
        values = {}
        expected = PLATFORM_ENDPOINTS.get(rule.endpoint, 404)
        for _, name in PARAM_RE.findall(rule.rule):
            if rule.endpoint in PLATFORM_ENDPOINTS:
                values[name] = PLATFORM_PARAMS[name]
                continue
            if name in others:
                values[name] = others[name]
                continue
            assert name in PARAMS, f"{rule.rule}: map the parameter {name!r} in PARAMS"
            key = "adhoc_check_uuid" if rule.endpoint in ADHOC_ENDPOINTS else PARAMS[name]
            values[name] = owner.uuids[key]
        path = PARAM_RE.sub(lambda m: values[m.group(2)], rule.rule)
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            if method == "GET":
                response = intruder.get(path)
            else:
                response = intruder.post(path, {"status": "closed_dismissed", "note_text": "x", "note": "x",
                                                 "check_types": "pep_sanction_check", "role": "viewer"})
            assert response.status_code == expected, (method, path, response.status_code)
            walked += 1
    assert walked >= 30
    assert snapshot(app, owner) == before
