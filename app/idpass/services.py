"""IDPass: launching a remote identity verification, and its life until a terminal state.

The order of a launch: the body and the rules between its fields (400, every error at once), the entity (404; 409
when it is not an individual or is archived; 400 when `dob` is not its date of birth), the product and a DVS
identity with a privacy policy URL (403), the credit (402). Then, in the request's one transaction: the IDPass,
its shell ID check (outcome `pending`, among the entity's ID checks), and the charge for its number of document
steps, under the account's lock. The link's SMS is sent after the commit (a job), never inside the transaction.

States (spec "IDPass status"): new -> opened (welcome passed) -> in_progress (consent given) -> complete | expired |
failed | cancelled. The hosted flow (`app.idpass.flow`) moves an IDPass forward; this module launches, cancels,
expires and closes one (`close`), which also settles its shell ID check."""
from __future__ import annotations

import hashlib
import secrets
import uuid as uuid_mod
from datetime import date, timedelta
from types import SimpleNamespace
from typing import Any

from flask import current_app

from app import jobs, signals
from app.accounts.models import Account
from app.billing import services as billing
from app.core import audit, crypto
from app.core.actor import Actor
from app.core.errors import Conflict, Forbidden, InsufficientCredit, Invalid
from app.core.schemas import validate
from app.core.types import set_actor, utcnow
from app.entities import rules as entity_rules
from app.entities.models import Entity
from app.entities.queries import get_entity
from app.extensions import db
from app.idchecks.models import IdCheck
from app.idchecks.services import resolve_oac
from app.idpass.models import STEPS, TERMINAL, IdPass
from app.idpass.queries import get_idpass
from app.idpass.schemas import IdPassConfig, IdPassData, IdPassLaunch
from app.providers.id_types import IDPASS_PRICE_LABELS, idpass_product
from app.providers.sms import normalise_au_mobile

TOKEN_BYTES = 24  # 192 bits, url-safe base64: 32 characters


# ---------------------------------------------------------------- launch

def entitled(account: Account) -> bool:
    """May the account launch IDPasses: the product is on, and `idpass` among its ID types."""
    return bool(account.idpass_enabled and "idpass" in (account.id_types or []))


def launch_refusal(entity: Entity) -> str | None:
    """Why no IDPass can be launched for this entity (409), or None: a person, not archived."""
    if entity.entity_type != "individual":
        return f"IDPass verifies a person: this entity is a {entity.entity_type}."
    conflict = entity_rules.write_conflict(entity)
    return f"{conflict} No IDPass can be launched." if conflict else None


def launch_for_entity(actor: Actor, entity_uuid, data: Any, *, link_base: str | None = None) -> IdPass:
    """`link_base`: the host the door was reached at, the link's base when PUBLIC_BASE_URL is not set."""
    actor.require("analyst")
    entity = get_entity(actor, entity_uuid)  # 404 first
    if (refusal := launch_refusal(entity)) is not None:
        raise Conflict(refusal)
    return _launch(actor, validated_launch(data, entity), entity=entity, link_base=link_base)


def launch_adhoc(actor: Actor, data: Any, *, link_base: str | None = None) -> IdPass:
    actor.require("analyst")
    return _launch(actor, validated_launch(data, None), entity=None, link_base=link_base)


def validated_launch(data: Any, entity: Entity | None) -> tuple[IdPassLaunch, dict[str, Any]]:
    """The body, validated, and the identity to verify; every error at once, keyed by the body's dotted path: the
    schema's (types, bounds, choices) and the rules between fields (steps in order, no type reused, ...), the latter
    checked on every field that passed the schema even when another did not."""
    try:
        body = validate(IdPassLaunch, data)
    except Invalid as exc:
        errors = dict(exc.errors or {})
        raw = data if isinstance(data, dict) else {}
        cfg = _passed(IdPassConfig, raw.get("config"), errors, "config.")
        d = _passed(IdPassData, raw.get("data", {}), errors, "data.")
        for path, messages in _rule_errors(cfg, d, entity)[0].items():
            if not any(p == path or p.startswith(path + ".") for p in errors):
                errors[path] = messages
        raise Invalid(errors=errors) from None
    errors, identity = _rule_errors(body.config, body.data, entity)
    if errors:
        raise Invalid(errors=errors)
    return body, identity


def _passed(model: type, raw: Any, errors: dict[str, list[str]], prefix: str) -> SimpleNamespace | None:
    """The fields of a part of the body that passed the schema, for the rules between fields (a field that failed
    reads as absent); None when the part itself is not an object."""
    if not isinstance(raw, dict) or prefix.rstrip(".") in errors:
        return None
    failed: dict[str, set[str]] = {}  # field -> the rest of each failing path ("" for the field itself)
    for path in errors:
        if path.startswith(prefix):
            name, _, rest = path[len(prefix):].partition(".")
            failed.setdefault(name, set()).add(rest)
    values = {}
    for name, spec in model.model_fields.items():
        value = raw.get(name) if name in raw else spec.get_default(call_default_factory=True)
        if name in failed and isinstance(value, list) and "" not in failed[name]:
            value = [v for i, v in enumerate(value) if str(i) not in failed[name]]  # the items that passed
        elif name in failed:
            value = None
        elif name == "dob" and isinstance(value, str):
            try:
                value = date.fromisoformat(value)
            except ValueError:
                value = None
        values[name] = value
    return SimpleNamespace(**values)


def _rule_errors(cfg: Any, d: Any, entity: Entity | None) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """The rules between fields of a launch (the schema checked each field): errors by dotted path, and the
    identity to verify. `cfg` or `d` None: that part did not parse, its rules are not checked."""
    errors: dict[str, list[str]] = {}

    def err(path: str, message: str) -> None:
        errors.setdefault(path, []).append(message)

    if cfg is not None:
        seen: dict[str, str] = {}
        for i, step in enumerate(STEPS):
            types = [t for t in getattr(cfg, step) or [] if isinstance(t, str)]
            if not types:
                continue
            if i and not getattr(cfg, STEPS[i - 1]):
                err(f"config.{step}", f"Needs {STEPS[i - 1]}: steps are filled in order.")
            if len(set(types)) < len(types):
                err(f"config.{step}", "Names a document type twice.")
            for t in dict.fromkeys(types):
                if t in seen:
                    err(f"config.{step}", f"“{t}” is already allowed in {seen[t]}: a document type serves one step.")
                else:
                    seen[t] = step
        if cfg.require_id_photo is True and not cfg.id_photo_purpose:
            err("config.id_photo_purpose", "Required when require_id_photo is true: say what the photo will be "
                                           "used for (3 to 255 characters).")
        if cfg.delivery_method == "sms":
            if not cfg.delivery_phone:
                err("config.delivery_phone", "Required for sms: an Australian mobile number (04xx xxx xxx).")
            elif normalise_au_mobile(cfg.delivery_phone) is None:
                err("config.delivery_phone", "Must be an Australian mobile number: 10 digits starting 04.")
        if isinstance(cfg.return_url, str) and cfg.return_url and not _https_url(cfg.return_url):
            err("config.return_url", "Must be an https:// URL.")

    identity: dict[str, Any] = {}
    if d is None:
        return errors, identity
    identity = {"first_name": d.first_name, "middle_name": d.middle_name, "last_name": d.last_name,
                "dob": d.dob.isoformat() if d.dob else None}
    if entity is not None:
        identity["first_name"] = identity["first_name"] or entity.first_name
        identity["last_name"] = identity["last_name"] or entity.last_name
        if identity["middle_name"] is None and d.first_name is None:
            identity["middle_name"] = entity.middle_name
        if d.dob is not None and d.dob != entity.birth_date:
            err("data.dob", "Must be the entity's date of birth" + (
                f" ({entity.birth_date.isoformat()})." if entity.birth_date else ": the entity has none recorded."))
    for key in ("first_name", "last_name"):
        if not identity[key]:
            err(f"data.{key}", "Required" + (": the entity has none recorded." if entity is not None else "."))
        elif len(identity[key]) > 50:
            err(f"data.{key}", "At most 50 characters (the entity's is longer: give it here).")
    return errors, identity


def _https_url(value: str) -> bool:
    from urllib.parse import urlsplit
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme == "https" and bool(parts.hostname)


def _launch(actor: Actor, validated: tuple[IdPassLaunch, dict[str, Any]], *, entity: Entity | None,
            link_base: str | None) -> IdPass:
    body, identity = validated
    cfg = body.config
    account = db.session.get(Account, actor.account_id)
    if not entitled(account):
        raise Forbidden("The account is not entitled to IDPass.")
    oac = resolve_oac(account, body.oac)  # 403 without one
    if not oac.privacy_policy_url:
        raise Forbidden(f"The DVS identity {oac.oac_code} has no privacy policy URL: the person must be able to read "
                        "it before consenting. An administrator adds it first.")
    allowed = {s: list(dict.fromkeys(getattr(cfg, s) or [])) for s in STEPS}
    steps = sum(1 for s in STEPS if allowed[s])
    product = idpass_product(steps)
    price = billing.prices()[product]
    if billing.balance(actor) < price:
        raise InsufficientCredit(f"Insufficient credit: this IDPass costs {price} credits and the balance is "
                                 f"{billing.balance(actor)}.")
    now = utcnow()
    token = secrets.token_urlsafe(TOKEN_BYTES)
    idpass = IdPass(
        uuid=uuid_mod.uuid4(), account_id=account.id, source="entity" if entity else "adhoc",
        entity_id=entity.id if entity else None, program_id=entity.program_id if entity else None,
        status="new", requested_identity=identity, check_liveness=cfg.check_liveness,
        require_id_photo=cfg.require_id_photo, document_allowed_types=allowed,
        link_validity_days=cfg.link_validity_days, return_verification_images=cfg.return_verification_images,
        delivery_method=cfg.delivery_method,
        delivery_phone=normalise_au_mobile(cfg.delivery_phone) if cfg.delivery_method == "sms" else None,
        id_photo_purpose=cfg.id_photo_purpose if cfg.require_id_photo else None, return_url=cfg.return_url,
        oac_code=oac.oac_code, requester_name=oac.requester_name, privacy_policy_url=oac.privacy_policy_url,
        is_sandbox=account.is_sandbox, token_hash=token_hash(token),
        token_sealed=crypto.seal({"token": token}), link_base=_link_base(link_base),
        expires_at=now + timedelta(days=cfg.link_validity_days), log=[], document_summary={},
        validation_summary={}, progress={}, reasons=[])
    set_actor(idpass, "created_by", actor)
    shell = IdCheck(uuid=uuid_mod.uuid4(), account_id=account.id, kind=idpass.source, entity_id=idpass.entity_id,
                    program_id=idpass.program_id, id_type="idpass", check_type="idpass", outcome="pending",
                    outcome_summary="Waiting for the person to complete the IDPass.",
                    data_summary=_identity_summary(identity), is_sandbox=account.is_sandbox, data_masked={},
                    verification_details=[], oac_code=oac.oac_code, requester_name=oac.requester_name,
                    provider="idpass", credits=price)
    set_actor(shell, "created_by", actor)
    db.session.add(shell)
    db.session.flush()
    idpass.id_check_id = shell.id
    idpass.record("created", f"Created by {actor.name}; {steps} document step{'s' * (steps > 1)}, "
                             f"{'liveness' if cfg.check_liveness else 'no liveness'}, link valid "
                             f"{cfg.link_validity_days} day{'s' * (cfg.link_validity_days > 1)}.")
    db.session.add(idpass)
    db.session.flush()
    audit.record(actor, "idpass.launched", "idpass", idpass.uuid, {
        "source": idpass.source, "entity_uuid": str(entity.uuid) if entity else None, "steps": steps,
        "delivery_method": idpass.delivery_method, "credits": price, "oac": oac.oac_code})
    billing.post(account.id, "charge", -price, f"{IDPASS_PRICE_LABELS[product]} ({shell.check_number})",
                 actor=actor, id_check=shell)
    if idpass.delivery_method == "sms":
        enqueue_sms(idpass)
    return idpass


def _identity_summary(identity: dict[str, Any]) -> str:
    name = " ".join(identity[k] for k in ("first_name", "middle_name", "last_name") if identity.get(k))
    return f"IDPass for {name}" + (f", born {identity['dob']}" if identity.get("dob") else "")


# ---------------------------------------------------------------- the link

def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _link_base(door_base: str | None) -> str:
    """PUBLIC_BASE_URL when set (production), else the host the launch came through (development)."""
    return (current_app.config.get("PUBLIC_BASE_URL") or door_base or "http://localhost:5000").rstrip("/")


def find_by_token(token: str, *, for_update: bool = False) -> IdPass | None:
    """The IDPass a hosted link names, whatever its state (locked when `for_update`); None for an unknown or
    tampered token."""
    if not token or len(token) > 64:
        return None
    from sqlalchemy import select
    query = select(IdPass).where(IdPass.token_hash == token_hash(token))
    return db.session.scalar(query.with_for_update(of=IdPass) if for_update else query)


# ---------------------------------------------------------------- SMS

def enqueue_sms(idpass: IdPass) -> None:
    """Send the link after the commit (a job: the SMS gateway is never called inside a transaction). Without a
    reachable queue this raises ServiceUnavailable, and the launch rolls back uncharged."""
    jobs.enqueue("send_idpass_sms", idpass.id)


def sms_message(idpass_id: int):
    """The SMS to send now for an IDPass, with whether its account is a sandbox; (None, True) when there is none
    to send (the IDPass ended meanwhile, or is delivered by hand)."""
    from app.providers.sms import SmsMessage
    idpass = db.session.get(IdPass, idpass_id)
    if idpass is None or idpass.completed or idpass.delivery_method != "sms" or not idpass.delivery_phone:
        return None, True
    return SmsMessage(to=idpass.delivery_phone, body=sms_body(idpass), reference=str(idpass.uuid)), idpass.is_sandbox


def sms_sent(idpass_id: int, receipt) -> None:
    idpass = db.session.get(IdPass, idpass_id)
    idpass.sent_at = receipt.sent_at
    idpass.delivery_error = None
    how = "into the sandbox's outbox (no message leaves)" if receipt.provider == "outbox" else f"via {receipt.provider}"
    idpass.record("sms_sent", f"Link sent by SMS to {mask_phone(idpass.delivery_phone)} {how}.")


def sms_failed(idpass_id: int, error: str) -> None:
    idpass = db.session.get(IdPass, idpass_id)
    idpass.delivery_error = error[:500]
    idpass.record("sms_failed", "The SMS could not be sent; resend it from the IDPass page, or copy the link.")


def mask_phone(phone: str | None) -> str:
    return f"{phone[:4]} ••• {phone[-3:]}" if phone and len(phone) >= 7 else "•••"


def sms_body(idpass: IdPass) -> str:
    expires = idpass.expires_at.strftime("%d %b %Y")
    return (f"{idpass.requester_name} asks you to verify your identity. Open {idpass.idpass_link} "
            f"(valid until {expires}). Do not share this link.")


def resend_refusal(idpass: IdPass) -> str | None:
    """Why the link's SMS cannot be sent again (409), or None: delivered by SMS, still open."""
    if idpass.delivery_method != "sms" or not idpass.delivery_phone:
        return "This IDPass is delivered by hand (manual): there is no SMS to resend."
    if idpass.completed:
        return f"This IDPass is {idpass.status}: its link no longer leads anywhere."
    return None


def resend_sms(actor: Actor, idpass_uuid) -> IdPass:
    actor.require("analyst")
    idpass = get_idpass(actor, idpass_uuid)
    if (refusal := resend_refusal(idpass)) is not None:
        raise Conflict(refusal)
    idpass.record("sms_resend_requested", f"Resend requested by {actor.name}.")
    audit.record(actor, "idpass.sms_resent", "idpass", idpass.uuid, {})
    enqueue_sms(idpass)
    return idpass


# ---------------------------------------------------------------- ending

def cancel(actor: Actor, idpass_uuid) -> IdPass:
    actor.require("analyst")
    idpass = get_idpass(actor, idpass_uuid, for_update=True)
    if idpass.completed:
        raise Conflict(f"This IDPass is already {idpass.status}.")
    idpass.cancelled_at = utcnow()
    idpass.cancelled_by = actor.name
    close(idpass, "cancelled", "failed", ["CANCELLED"], f"Cancelled by {actor.name}.")
    audit.record(actor, "idpass.cancelled", "idpass", idpass.uuid, {})
    return idpass


def expire_due(now=None) -> int:
    """Expire every open IDPass whose link has run out (the scheduler's job). Each row is locked and re-read, so
    a person finishing at the same moment either completes first or finds it expired."""
    from sqlalchemy import select
    now = now or utcnow()
    ids = db.session.scalars(select(IdPass.id).where(IdPass.status.in_(("new", "opened", "in_progress")),
                                                     IdPass.expires_at <= now).limit(1000)).all()
    n = 0
    for idpass_id in ids:
        idpass = db.session.scalar(select(IdPass).where(IdPass.id == idpass_id).with_for_update(of=IdPass))
        if idpass is not None and expire_if_due(idpass, now):
            n += 1
    return n


def expire_if_due(idpass: IdPass, now=None) -> bool:
    """End an open IDPass whose link has run out (the locked row): True when it did."""
    if idpass.completed or idpass.expires_at > (now or utcnow()):
        return False
    days = idpass.link_validity_days
    close(idpass, "expired", "failed", ["EXPIRED"], f"The link expired after {days} day{'s' * (days > 1)}.")
    return True


def close(idpass: IdPass, status: str, verification: str, reasons: list[str], description: str) -> None:
    """Move an IDPass to a terminal state with its verdict, settle the shell ID check, refund an IDPass that ended
    before the person ever opened it (nothing was done), and announce a review."""
    assert status in TERMINAL and not idpass.completed
    opened = idpass.opened_at is not None
    now = utcnow()
    idpass.status = status
    idpass.verification_status = verification
    idpass.reasons = list(dict.fromkeys(reasons))
    idpass.verification_description = description
    idpass.completed_at = now
    idpass.record(status, description, verification_status=verification, reasons=idpass.reasons)
    shell = idpass.shell_check
    if shell is not None:
        settle_shell(idpass)
        shell.checked_at = now
    if not opened and status in ("expired", "cancelled") and shell is not None:
        billing.refund_id_check(shell, f"IDPass {status} before the link was opened")
    signals.idpass_closed.send(idpass)
    signals.announce(idpass, "idpass.completed")


SHELL_OUTCOMES = {"passed": "pass", "failed": "fail"}
SHELL_SUMMARIES = {"passed": "IDPass passed: ", "failed": "IDPass failed: ", "review": "IDPass needs review: "}


def settle_shell(idpass: IdPass, *, accepted: bool | None = None, by: str | None = None,
                 reference: str | None = None) -> None:
    """The shell ID check's outcome: the verdict's (`pass`, `fail`, `pending` for a review); once a person decided a
    review (`accepted` true or false, `by` whom, under `reference`), theirs, recorded in the IDPass's timeline. The
    IDPass's own `verification_status` stays what its rules found."""
    shell = idpass.shell_check
    if shell is None:
        return
    if accepted is None:
        shell.outcome = SHELL_OUTCOMES.get(idpass.verification_status, "pending")
        shell.outcome_summary = SHELL_SUMMARIES[idpass.verification_status] + (idpass.verification_description or "")
    else:
        shell.outcome = "pass" if accepted else "fail"
        shell.outcome_summary = (f"IDPass reviewed: identity {'accepted' if accepted else 'not accepted'} by {by}"
                                 + (f" ({reference})." if reference else "."))
    if by is not None:
        idpass.record("review_decided", f"{reference or 'The review'}: "
                      + {True: "identity accepted", False: "identity not accepted", None: "reopened"}[accepted]
                      + f" by {by}.", reference=reference, id_check_outcome=shell.outcome)


# Archived (and unarchived) with its entity, as the entity's ID checks are.
signals.follow(signals.entity_archived, signals.entity_unarchived, IdPass.archived_at, IdPass.entity_id, "idpasses")
