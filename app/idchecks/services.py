"""Running ID checks: one document verified with its issuer, synchronously, for an entity or adhoc.

The order of a run: validate the body and the type's data (400: `consent_obtained` must be true), the entity
(404, 409 when archived), the entitlement and the DVS identity (403), the credit (402); then the issuer is asked,
before any lock is taken (an upstream that fails answers 503 and nothing is recorded or charged); last, in
the request's one transaction, the ID check is written and charged under the account's lock (the credit read
again there). Document numbers live only in memory and in `data_sealed` (encrypted): the record, the audit log and
every answer carry them masked."""
from __future__ import annotations

import uuid as uuid_mod
from typing import Any

from flask import current_app

from app import signals

from app.accounts.models import Account, DvsIdentity
from app.billing import services as billing
from app.core import audit, crypto
from app.core.actor import Actor
from app.core.errors import Conflict, Forbidden, InsufficientCredit, Invalid, NotFound, ServiceUnavailable
from app.core.schemas import validate
from app.core.types import set_actor, utcnow
from app.entities import rules as entity_rules
from app.entities.models import Entity
from app.entities.queries import get_entity
from app.extensions import db
from app.idchecks import rules
from app.idchecks.models import IdCheck
from app.idchecks.queries import get_id_check
from app.idchecks.schemas import IdCheckRecheck, IdCheckRun
from app.providers.base import ProviderError
from app.providers.id_base import IdRequest
from app.providers.id_types import ID_TYPES, masked, validate_data

# The consent wording an API caller's `consent_obtained: true` refers to (docs/idchecks.md), and the portal's.
CONSENT_WORDING_VERSION = "2026-11"
CONSENT_WORDING = ("I confirm that the person named has given express consent to their identity document details "
                   "being checked with the document issuer or its official record holder, and that the wording of "
                   "that consent is retained.")


def run_entity_id_check(actor: Actor, entity_uuid, data: Any, *, channel: str = "api") -> IdCheck:
    actor.require("analyst")
    entity = get_entity(actor, entity_uuid)  # 404 first
    body = _validated(data)
    if (conflict := entity_rules.write_conflict(entity)) is not None:
        raise Conflict(f"{conflict} No ID check can be run.")
    return _run(actor, body, entity=entity, channel=channel)


def run_adhoc_id_check(actor: Actor, data: Any, *, channel: str = "api") -> IdCheck:
    actor.require("analyst")
    return _run(actor, _validated(data), entity=None, channel=channel)


def recheck_id_check(actor: Actor, id_check_uuid, data: Any, *, kind: str | None = None,
                     channel: str = "api") -> IdCheck:
    """Run an ID check again on the document data it sealed (a document re-verified later, an issuer that said D):
    a new ID check, charged, naming the one it repeats (`recheck_of`). The caller asserts consent again
    (`consent_obtained`), may name another DVS identity (`oac`; default: the original's, when the account still has
    it). `kind`: entity or adhoc (the API's two addresses); None, either (the portal). 409 for an IDPass's ID
    check (launch a new IDPass), for data the retention deleted, and for an archived entity; 404 for another
    account's."""
    actor.require("analyst")
    if kind is not None:
        original = get_id_check(actor, id_check_uuid, kind=kind)
    else:
        try:
            original = get_id_check(actor, id_check_uuid, kind="entity")
        except NotFound:
            original = get_id_check(actor, id_check_uuid, kind="adhoc")
    body = validate(IdCheckRecheck, data)
    if (conflict := rules.recheck_conflict(original)) is not None:
        raise Conflict(conflict)
    account = db.session.get(Account, actor.account_id)
    oac = body.oac
    if oac is None and original.oac_code and any(i.oac_code == original.oac_code for i in account.dvs_identities):
        oac = original.oac_code
    validated = _validated({"id_type": original.id_type, "consent_obtained": body.consent_obtained,
                            "data": reveal_data(original), **({"oac": oac} if oac else {})})
    return _run(actor, validated, entity=original.entity, channel=channel, recheck_of=original)


def delete_adhoc_id_check(actor: Actor, id_check_uuid) -> IdCheck:
    actor.require("analyst")
    check = get_id_check(actor, id_check_uuid, kind="adhoc")
    check.deleted_at = utcnow()
    audit.record(actor, "id_check.deleted", "id_check", check.uuid, {"id_type": check.id_type})
    return check


def _validated(data: Any) -> tuple[IdCheckRun, dict[str, Any]]:
    """The body and its type's data, validated; every error at once (consent, body fields, data fields)."""
    errors: dict[str, list[str]] = {}
    if isinstance(data, dict) and data.get("consent_obtained") is False:
        errors["consent_obtained"] = ["Must be true: an ID check needs the person's express consent."]
    body = fields = None
    try:
        body = validate(IdCheckRun, {**data, "consent_obtained": True} if errors else data)
    except Invalid as exc:
        errors = {**(exc.errors or {}), **errors}
    if isinstance(data, dict) and data.get("id_type") in ID_TYPES and isinstance(data.get("data"), dict):
        try:
            fields = validate_data(data["id_type"], data["data"]).model_dump(mode="json")
        except Invalid as exc:
            errors.update(exc.errors or {})
    if errors:
        raise Invalid(errors=errors)
    return body, {k: v for k, v in fields.items() if v is not None}


def resolve_oac(account: Account, code: str | None, *, needed: bool = True) -> DvsIdentity | None:
    """The DVS identity to verify under: the one named, else the account's only one. 403 when the account has
    none (and the type needs one); 400 when the code is unknown, or missing while the account has several."""
    identities = list(account.dvs_identities)
    if code is not None:
        found = next((i for i in identities if i.oac_code == code), None)
        if found is None:
            raise Invalid.field("oac", f"“{code}” is not a DVS identity of this account"
                                       + (f"; one of: {', '.join(i.oac_code for i in identities)}." if identities
                                          else "."))
        return found
    if not identities:
        if needed:
            raise Forbidden("The account has no DVS identity (OAC): an administrator adds one before documents "
                            "can be verified with their issuers.")
        return None
    if len(identities) > 1:
        raise Invalid.field("oac", f"Required: the account has several DVS identities "
                                   f"({', '.join(i.oac_code for i in identities)}).")
    return identities[0]


def _data_summary(id_type: str, data: dict[str, Any]) -> str:
    entry = ID_TYPES[id_type]
    name = " ".join(str(data[k]) for k in ("first_name", "middle_name", "last_name") if data.get(k))
    shown = masked(id_type, data)
    number = next((shown[k] for k in entry.numbers if shown.get(k)), None)
    parts = [entry.label, name, f"born {data['birth_date']}" if data.get("birth_date") else None,
             f"no. {number}" if number else None, data.get("state") or data.get("registration_state")]
    return ", ".join(p for p in parts if p)


def _run(actor: Actor, validated: tuple[IdCheckRun, dict[str, Any]], *, entity: Entity | None,
         channel: str, recheck_of: IdCheck | None = None) -> IdCheck:
    body, data = validated
    entry = ID_TYPES[body.id_type]
    account = db.session.get(Account, actor.account_id)
    if body.id_type not in (account.id_types or []):
        raise Forbidden(f"The account is not entitled to {entry.label} checks ({body.id_type}).")
    identity = resolve_oac(account, body.oac, needed=entry.needs_oac)
    price = billing.prices()[body.id_type]
    if billing.balance(actor) < price:
        raise InsufficientCredit(f"Insufficient credit: this ID check costs {price} credits and the balance is "
                                 f"{billing.balance(actor)}.")
    check_uuid = uuid_mod.uuid4()
    provider = entry.provider(sandbox=account.is_sandbox, settings=dict(current_app.config))
    request = IdRequest(reference=str(check_uuid), oac=identity.oac_code if identity else None,
                        requester_name=identity.requester_name if identity else account.name,
                        sandbox=account.is_sandbox, settings=dict(current_app.config))
    try:  # no lock is held yet: the account is locked only to write the charge, after the answer
        answer = provider.verify(dict(data), request)
    except ProviderError as exc:
        current_app.logger.warning("ID check %s (%s): the upstream failed: %s", check_uuid, body.id_type, exc)
        raise ServiceUnavailable(f"The {entry.check_type_name} did not answer ({exc}). Nothing was recorded or "
                                 "charged; retry later.", retry_after=30) from None
    now = utcnow()
    shown = masked(body.id_type, data)
    check = IdCheck(uuid=check_uuid, account_id=actor.account_id, kind="entity" if entity else "adhoc",
                    entity_id=entity.id if entity else None, program_id=entity.program_id if entity else None,
                    id_type=body.id_type, check_type=entry.check_type, outcome=answer.outcome,
                    outcome_summary=answer.outcome_summary, data_summary=_data_summary(body.id_type, data),
                    is_sandbox=account.is_sandbox, data_masked=shown, data_sealed=crypto.seal(data),
                    consent=_consent(actor, now, channel),
                    verification_details=[{"field": k, "value": str(v)} for k, v in shown.items()],
                    details=answer.details, oac_code=identity.oac_code if identity else None,
                    requester_name=request.requester_name, provider=answer.provider or provider.name,
                    credits=price, checked_at=now, recheck_of_id=recheck_of.id if recheck_of else None)
    set_actor(check, "created_by", actor)
    db.session.add(check)
    db.session.flush()
    audit.record(actor, "id_check.run", "id_check", check.uuid, {
        "id_type": body.id_type, "outcome": answer.outcome, "credits": price, "data": shown,
        "entity_uuid": str(entity.uuid) if entity else None,
        **({"recheck_of": str(recheck_of.uuid)} if recheck_of else {})})
    billing.post(actor.account_id, "charge", -price, f"{entry.label} check {check.check_number}"[:500],
                 actor=actor, id_check=check)  # under the account's lock: 402 if the balance moved meanwhile
    return check


def _consent(actor: Actor, at, channel: str) -> dict[str, Any]:
    return {"obtained": True, "asserted_at": at.isoformat(), "asserted_by": actor.as_created_by(),
            "channel": channel, "wording_version": CONSENT_WORDING_VERSION}


def reveal_data(check: IdCheck) -> dict[str, Any]:
    """The document data in clear, for a re-check (never returned by the API)."""
    return crypto.unseal(check.data_sealed) if check.data_sealed else dict(check.data_masked)


# An entity's ID checks are archived (and unarchived) with it (spec "Entity archive": "identification checks").
signals.follow(signals.entity_archived, signals.entity_unarchived, IdCheck.archived_at, IdCheck.entity_id,
               "id_checks")
