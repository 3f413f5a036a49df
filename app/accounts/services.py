"""Accounts, users, API keys and credit: every write takes plain values and an actor."""
from __future__ import annotations

import hashlib
import re
import secrets
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import select, update
from sqlalchemy.orm import joinedload

from app import signals
from app.accounts.models import (ID_TYPES, Account, ApiKey, DvsIdentity, Invitation, User, credit_balance)
from app.core import audit
from app.core.actor import ROLES, Actor
from app.core.errors import Conflict, ErrorCollector, Forbidden, Invalid, NotFound
from app.core.types import utcnow
from app.extensions import db
from app.providers.registry import CHECK_TYPES

_hasher = PasswordHasher()
MIN_PASSWORD_LENGTH = 10


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(user: User, password: str) -> bool:
    try:
        ok = _hasher.verify(user.password_hash, password)
    except (VerificationError, InvalidHashError):
        return False
    if ok and _hasher.check_needs_rehash(user.password_hash):
        user.password_hash = _hasher.hash(password)
    return ok


# A fixed dummy hash so that a login for an unknown e-mail costs the same time as a wrong password.
_DUMMY_HASH = _hasher.hash("not-a-real-password")


def authenticate_user(email: str, password: str) -> User | None:
    """The user whose e-mail and password these are, or None. Unknown, disabled and existing accounts cost the
    same: one argon2 verification each (against a dummy hash when there is no user)."""
    user = db.session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None:
        try:
            _hasher.verify(_DUMMY_HASH, password)
        except (VerificationError, InvalidHashError):
            pass
        return None
    ok = verify_password(user, password)  # before the disabled check: the same work either way
    if not ok or user.is_disabled:
        return None
    user.last_login_at = utcnow()
    return user


def record_failed_login(email: str, reason: str, api_reference: str | None, address: str | None) -> None:
    """Audit a failed sign-in against the account of the e-mail, when one exists."""
    user = db.session.scalar(select(User).where(User.email == email.strip().lower()))
    if user is None:
        return
    actor = Actor(account_id=user.account_id, kind="user", id=user.id, uuid=user.uuid, name=user.email,
                  role=user.role, api_reference=api_reference, via="portal")
    audit.record(actor, "auth.login_failed", "user", user.uuid, {"reason": reason, "address": address})


def sign_out_everywhere(user: User) -> None:
    """Invalidate every session and remember-me cookie of the user (they carry the old token)."""
    user.session_token = secrets.token_hex(16)


def time_zone_value(time_zone: str | None, field: str = "time_zone") -> str | None:
    """An IANA zone name as typed (trimmed), None when blank; a field error when this machine does not know it."""
    from zoneinfo import available_timezones
    value = (time_zone or "").strip() or None
    if value is not None and value not in available_timezones():
        raise Invalid.field(field, f"“{value[:64]}” is not a time zone. Pick one from the list, "
                                   "for example Europe/London or Australia/Sydney.")
    return value


def set_time_zone(actor: Actor, time_zone: str | None) -> User:
    """The IANA zone the portal shows this user's times in; blank: follow the browser."""
    user = db.session.get(User, actor.user_id)
    if user is None:
        raise NotFound("User not found.")
    value = time_zone_value(time_zone)
    changes = audit.apply_changes(user, {"time_zone": value})
    if changes:
        audit.record(actor, "user.updated", "user", user.uuid, changes)
    return user


def change_password(actor: Actor, *, current: str, new: str) -> User:
    """A signed-in user changes their own password; every other session of theirs ends."""
    user = db.session.get(User, actor.user_id)
    errors = ErrorCollector()
    if user is None or not verify_password(user, current or ""):
        errors.add("current_password", "This is not your current password.")
    validate_password(new or "", errors, field="new_password")
    if not errors and current == new:
        errors.add("new_password", "Choose a password different from the current one.")
    errors.raise_if_any()
    user.password_hash = hash_password(new)
    sign_out_everywhere(user)
    audit.record(actor, "user.password_changed", "user", user.uuid, None)
    return user


def validate_password(password: str, errors: ErrorCollector, field: str = "password") -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        errors.add(field, f"Must be at least {MIN_PASSWORD_LENGTH} characters.")
    elif password.isdigit() or password.isalpha() or len(set(password)) < 5:
        errors.add(field, "Too easy to guess: mix letters with digits or symbols.")


def user_actor(user: User, api_reference: str | None = None, via: str = "portal") -> Actor:
    return Actor(account_id=user.account_id, kind="user", id=user.id, uuid=user.uuid, name=user.email,
                 role=user.role, api_reference=api_reference, via=via)


def api_key_actor(key: ApiKey, api_reference: str | None = None) -> Actor:
    # API keys act with analyst rights (DECISIONS.md).
    return Actor(account_id=key.account_id, kind="api_key", id=key.id, uuid=key.uuid, name=key.label,
                 role="analyst", api_reference=api_reference, via="api")


def cli_actor(account: Account) -> Actor:
    return Actor(account_id=account.id, kind="system", id=None, uuid=None, name="cli", role="admin", via="cli")


# ---------------------------------------------------------------- accounts

def create_account(*, name: str, is_sandbox: bool = True) -> Account:
    if not name.strip():
        raise Invalid.field("name", "This field is required.")
    account = Account(name=name.strip(), is_sandbox=is_sandbox, enabled_check_types=list(CHECK_TYPES),
                      idpass_enabled=True, id_types=list(ID_TYPES))
    db.session.add(account)
    db.session.flush()
    return account


OAC_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def add_dvs_identity(actor: Actor, *, oac_code: str, requester_name: str,
                     privacy_policy_url: str | None) -> DvsIdentity:
    """A DVS identity (OAC) the account verifies documents under: its code, the organisation name shown to the
    person (IDPass consent page) and to the issuers, and the privacy policy an IDPass links to (an IDPass needs
    one). Admins only; a code is unique in the account."""
    actor.require("admin")
    account = account_of(actor)
    code, name, url = (oac_code or "").strip(), (requester_name or "").strip(), (privacy_policy_url or "").strip()
    errors: dict[str, list[str]] = {}
    if not OAC_PATTERN.match(code):
        errors["oac_code"] = ["1 to 64 letters, digits, dashes or underscores."]
    elif any(i.oac_code == code for i in account.dvs_identities):
        errors["oac_code"] = [f"The account already has the DVS identity “{code}”."]
    if not 2 <= len(name) <= 255:
        errors["requester_name"] = ["2 to 255 characters: the organisation's name as people know it."]
    if url and (len(url) > 1024 or not re.match(r"^https://[^\s/$.?#][^\s]*$", url)):
        errors["privacy_policy_url"] = ["An https:// address."]
    if errors:
        raise Invalid(errors=errors)
    identity = DvsIdentity(account_id=account.id, oac_code=code, requester_name=name, privacy_policy_url=url or None)
    db.session.add(identity)
    db.session.flush()
    audit.record(actor, "account.dvs_identity_added", "account", account.uuid,
                 {"oac_code": code, "requester_name": name, "privacy_policy_url": url or None})
    return identity


def remove_dvs_identity(actor: Actor, identity_uuid) -> DvsIdentity:
    """Stop verifying under a DVS identity. ID checks and IDPasses made under it keep its code and requester name
    (they are copied onto them); an IDPass still in flight keeps working. Admins only; another account's: 404."""
    actor.require("admin")
    identity = db.session.scalar(select(DvsIdentity).where(DvsIdentity.uuid == identity_uuid,
                                                           DvsIdentity.account_id == actor.account_id))
    if identity is None:
        raise NotFound("DVS identity not found.")
    db.session.delete(identity)
    db.session.flush()
    audit.record(actor, "account.dvs_identity_removed", "account", account_of(actor).uuid,
                 {"oac_code": identity.oac_code, "requester_name": identity.requester_name})
    return identity


def account_of(actor: Actor) -> Account:
    return db.session.get(Account, actor.account_id)


def get_account(account_uuid) -> Account:
    import uuid as uuid_mod
    if isinstance(account_uuid, str):
        try:
            account_uuid = uuid_mod.UUID(account_uuid)
        except ValueError:
            raise NotFound("Account not found.") from None
    account = db.session.scalar(select(Account).where(Account.uuid == account_uuid))
    if account is None:
        raise NotFound("Account not found.")
    return account


# ---------------------------------------------------------------- users

def _address(email: str, errors: ErrorCollector) -> str:
    from email_validator import EmailNotValidError, validate_email
    try:
        return validate_email(email.strip(), check_deliverability=False).normalized.lower()
    except EmailNotValidError as exc:
        errors.add("email", str(exc))
        return email


def create_user(actor: Actor, *, email: str, password: str, role: str) -> User:
    """A user with a password, at once: the operator's (`flask accounts create-user`, account bootstrap), who sees
    every account anyway. An account's admins invite instead (`invite_user`), which tells them nothing about
    addresses of other accounts."""
    actor.require("admin")
    errors = ErrorCollector()
    email = _address(email, errors)
    validate_password(password, errors)
    if role not in ROLES:
        errors.add("role", f"Must be one of: {', '.join(ROLES)}.")
    errors.raise_if_any()
    if db.session.scalar(select(User.id).where(User.email == email)):
        raise Invalid.field("email", "A user with this e-mail already exists.")
    user = User(account_id=actor.account_id, email=email, password_hash=hash_password(password), role=role)
    db.session.add(user)
    db.session.flush()
    audit.record(actor, "user.created", "user", user.uuid, {"email": email, "role": role})
    return user


INVITATION_DAYS = 7


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def invite_user(actor: Actor, *, email: str, role: str) -> Invitation:
    """Invite an address to the actor's account with a role (admins). The answer, the invitation shown on the
    users page and the audit entry are the same whether the address is new or already signs in to another
    account (an address belongs to one account): another account's address is never confirmed. A new address is
    e-mailed a link to set a password (valid INVITATION_DAYS); the owner of a taken one is told instead, and that
    invitation can never be accepted. An address that is already a user of this account is a field error."""
    actor.require("admin")
    errors = ErrorCollector()
    email = _address(email, errors)
    if role not in ROLES:
        errors.add("role", f"Must be one of: {', '.join(ROLES)}.")
    errors.raise_if_any()
    owner = db.session.scalar(select(User).where(User.email == email))
    if owner is not None and owner.account_id == actor.account_id:
        raise Invalid.field("email", "A user of this account already signs in with this e-mail.")
    token = secrets.token_urlsafe(32)
    invitation = db.session.scalar(select(Invitation).where(Invitation.account_id == actor.account_id,
                                                            Invitation.email == email).with_for_update())
    if invitation is None:
        invitation = Invitation(account_id=actor.account_id, email=email)
        db.session.add(invitation)
    invitation.role, invitation.token_hash = role, _token_hash(token)
    invitation.invited_by_user_id = actor.user_id
    invitation.created_at, invitation.accepted_at = utcnow(), None
    invitation.expires_at = utcnow() + timedelta(days=INVITATION_DAYS)
    db.session.flush()
    audit.record(actor, "user.invited", "invitation", invitation.uuid, {"email": email, "role": role})
    signals.user_invited.send(invitation, token=token, taken=owner is not None,
                              account_name=account_of(actor).name, inviter=actor.name)
    return invitation


def list_invitations(actor: Actor) -> list[Invitation]:
    """Invitations not yet accepted (expired ones too: the page says so), newest first."""
    actor.require("admin")
    return list(db.session.scalars(select(Invitation).where(Invitation.account_id == actor.account_id,
                                                            Invitation.accepted_at.is_(None))
                                   .order_by(Invitation.created_at.desc())))


def withdraw_invitation(actor: Actor, invitation_uuid) -> Invitation:
    actor.require("admin")
    invitation = db.session.scalar(select(Invitation).where(Invitation.uuid == invitation_uuid,
                                                            Invitation.account_id == actor.account_id))
    if invitation is None or invitation.accepted_at is not None:
        raise NotFound("Invitation not found.")
    db.session.delete(invitation)
    db.session.flush()
    audit.record(actor, "user.invitation_withdrawn", "invitation", invitation.uuid, {"email": invitation.email})
    return invitation


INVALID_INVITATION = ("This invitation link is not valid: it was used, withdrawn or has expired. Ask your "
                      "administrator for a new one.")


def open_invitation(token: str) -> Invitation:
    """The invitation a link's token opens (NotFound when used, withdrawn or expired)."""
    invitation = db.session.scalar(select(Invitation).where(Invitation.token_hash == _token_hash(token or ""))
                                   .with_for_update())
    if invitation is None or invitation.accepted_at is not None or invitation.expires_at <= utcnow():
        raise NotFound(INVALID_INVITATION)
    return invitation


def accept_invitation(token: str, password: str, api_reference: str | None = None) -> User:
    """The invited person sets a password: the user is created in the inviting account with the invited role.
    The person owns the address, so an address that signs in to another account is said to them plainly."""
    invitation = open_invitation(token)
    errors = ErrorCollector()
    validate_password(password, errors)
    errors.raise_if_any()
    if db.session.scalar(select(User.id).where(User.email == invitation.email)):
        raise Conflict("This e-mail address already signs in to another account, and an address can belong to "
                       "one account only. Ask the administrator who invited you to invite another address.")
    user = User(account_id=invitation.account_id, email=invitation.email, password_hash=hash_password(password),
                role=invitation.role)
    db.session.add(user)
    invitation.accepted_at = utcnow()
    db.session.flush()
    audit.record(user_actor(user, api_reference=api_reference), "user.created", "user", user.uuid,
                 {"email": user.email, "role": user.role, "invitation": str(invitation.uuid)})
    return user


def list_users(actor: Actor) -> list[User]:
    actor.require("admin")
    return list(db.session.scalars(select(User).where(User.account_id == actor.account_id).order_by(User.email)))


def _get_user(actor: Actor, user_uuid) -> User:
    user = db.session.scalar(select(User).where(User.uuid == user_uuid, User.account_id == actor.account_id))
    if user is None:
        raise NotFound("User not found.")
    return user


def update_user(actor: Actor, user_uuid, *, role: str | None = None, disabled: bool | None = None) -> User:
    actor.require("admin")
    user = _get_user(actor, user_uuid)
    values: dict = {}
    if role is not None:
        if role not in ROLES:
            raise Invalid.field("role", f"Must be one of: {', '.join(ROLES)}.")
        values["role"] = role
    if disabled is not None:
        values["is_disabled"] = disabled
    if user.id == actor.id and (values.get("role", "admin") != "admin" or values.get("is_disabled")):
        raise Conflict("You cannot demote or disable yourself.")
    changes = audit.apply_changes(user, values)
    if changes:
        user.session_token = secrets.token_hex(16)
        audit.record(actor, "user.updated", "user", user.uuid, changes)
    return user


# ---------------------------------------------------------------- API keys

def _hash_secret(secret: str) -> str:
    # API keys carry 192 bits of randomness, so a fast hash is safe and allows an indexed lookup.
    return hashlib.sha256(secret.encode()).hexdigest()


def create_api_key(actor: Actor, *, label: str) -> tuple[ApiKey, str]:
    """Returns the key and its secret; the secret is shown once and never stored."""
    actor.require("admin")
    label = (label or "").strip()
    if not 1 <= len(label) <= 255:
        raise Invalid.field("label", "Must be between 1 and 255 characters.")
    account = db.session.get(Account, actor.account_id)
    secret = ("sk_test_" if account.is_sandbox else "sk_live_") + secrets.token_urlsafe(24)
    key = ApiKey(account_id=account.id, label=label, prefix=secret[:12], key_hash=_hash_secret(secret),
                 created_by_user_id=actor.user_id)
    db.session.add(key)
    db.session.flush()
    audit.record(actor, "api_key.created", "api_key", key.uuid, {"label": label, "prefix": key.prefix})
    return key, secret


def list_api_keys(actor: Actor) -> list[ApiKey]:
    actor.require("admin")
    return list(db.session.scalars(
        select(ApiKey).where(ApiKey.account_id == actor.account_id).order_by(ApiKey.created_at.desc())))


def revoke_api_key(actor: Actor, key_uuid) -> ApiKey:
    actor.require("admin")
    key = db.session.scalar(select(ApiKey).where(ApiKey.uuid == key_uuid, ApiKey.account_id == actor.account_id))
    if key is None:
        raise NotFound("API key not found.")
    if key.revoked_at is None:
        key.revoked_at = utcnow()
        audit.record(actor, "api_key.revoked", "api_key", key.uuid, {"label": key.label})
    return key


def find_api_key(secret: str) -> ApiKey | None:
    """The live key for a presented secret, or None (unknown, malformed or revoked)."""
    if not secret.startswith(("sk_test_", "sk_live_")) or len(secret) > 128:
        return None
    # The account comes in the same query: the rate limiter reads its limit without another round trip.
    key = db.session.scalar(select(ApiKey).options(joinedload(ApiKey.account))
                            .where(ApiKey.key_hash == _hash_secret(secret)))
    if key is None or key.revoked_at is not None:
        return None
    return key


def touch_api_key(key: ApiKey, now: datetime | None = None) -> None:
    """Record last use at most once a minute, outside the request's transaction."""
    now = now or utcnow()
    if key.last_used_at is None or now - key.last_used_at > timedelta(minutes=1):
        with db.engine.begin() as conn:
            conn.execute(update(ApiKey).where(ApiKey.id == key.id).values(last_used_at=now))


# ---------------------------------------------------------------- API rate limit

MAX_RATE_LIMIT = 100_000  # requests a minute: the most an operator can grant one account


def set_rate_limit(actor: Actor, *, per_minute: int | None, ceiling: int = MAX_RATE_LIMIT) -> Account:
    """Override the account's API budget (requests a minute for each of its keys); None restores the default.

    The portal passes the platform default as `ceiling`, so an account's admins can lower their own budget
    (to protect a fragile integration) but only an operator (`flask accounts set-rate-limit`) can raise it."""
    actor.require("admin")
    if per_minute is not None and per_minute == ceiling and ceiling != MAX_RATE_LIMIT:
        per_minute = None  # the platform default itself: no override to keep
    if per_minute is not None and not 1 <= per_minute <= ceiling:
        raise Invalid.field("per_minute", f"Must be a whole number from 1 to {ceiling:,}; {per_minute:,} is not.")
    account = account_of(actor)
    changes = audit.apply_changes(account, {"rate_limit_per_minute": per_minute})
    if changes:
        audit.record(actor, "account.rate_limit_changed", "account", account.uuid, changes)
    return account


# ---------------------------------------------------------------- the schedules' time zone

def set_account_time_zone(actor: Actor, time_zone: str | None) -> Account:
    """The IANA zone in which the account's monitors run on schedule (at MONITOR_LOCAL_HOUR local time); admins
    only. The monitors move their next runs to the new zone in the same transaction (`account_time_zone_changed`):
    each next run is the first slot after now in the new zone."""
    actor.require("admin")
    value = time_zone_value(time_zone, field="timezone")
    if value is None:
        raise Invalid.field("timezone", "This field is required. Pick a time zone from the list, for example "
                                        "Europe/London or Australia/Sydney.")
    account = account_of(actor)
    changes = audit.apply_changes(account, {"timezone": value})
    if changes:
        db.session.flush()
        moved = signals.merged(signals.account_time_zone_changed.send(account))
        audit.record(actor, "account.timezone_changed", "account", account.uuid, {**changes, **moved})
    return account


# ---------------------------------------------------------------- credit

def balance(actor: Actor) -> int:
    return credit_balance(actor.account_id)


def require_same_account(actor: Actor, account_id: int) -> None:
    if actor.account_id != account_id:
        raise Forbidden()


# ---------------------------------------------------------------- bootstrap

PRODUCTS = (*CHECK_TYPES, "idpass", *(t for t in ID_TYPES if t != "idpass"))


def set_entitlement(actor: Actor, product: str, enabled: bool) -> Account:
    """Grant or revoke one product (a check type, `idpass`, or an ID document type) for the actor's account."""
    actor.require("admin")
    if product not in PRODUCTS:
        raise Invalid.field("product", f"“{product}” is not a product; one of: {', '.join(PRODUCTS)}.")
    account = account_of(actor)
    if product in CHECK_TYPES:
        current = [t for t in (account.enabled_check_types or []) if t != product]
        values = {"enabled_check_types": [t for t in CHECK_TYPES if t in current or (enabled and t == product)]}
    elif product == "idpass":
        values = {"idpass_enabled": enabled}
    else:
        current = [t for t in (account.id_types or []) if t != product]
        values = {"id_types": [t for t in ID_TYPES if t in current or (enabled and t == product)]}
    changes = audit.apply_changes(account, values)
    if changes:
        audit.record(actor, "account.entitlement_changed", "account", account.uuid,
                     {"product": product, "enabled": enabled, **changes})
    return account


def entitlements(account: Account) -> list[str]:
    return [*(account.enabled_check_types or []), *(["idpass"] if account.idpass_enabled else []),
            *(t for t in (account.id_types or []) if t != "idpass")]


def bootstrap_account(*, name: str, email: str, password: str, sandbox: bool = True,
                      products: list[str] | None = None) -> dict:
    """A new account with every product enabled (or only `products`), one admin user and one API key. Its
    opening credit is billing's (`billing.services.open_account`)."""
    account = create_account(name=name, is_sandbox=sandbox)
    system = cli_actor(account)
    if products is not None:
        unknown = [p for p in products if p not in PRODUCTS]
        if unknown:
            raise Invalid.field("products", f"Unknown products: {', '.join(unknown)}; one of: {', '.join(PRODUCTS)}.")
        for product in PRODUCTS:
            set_entitlement(system, product, product in products)
    user = create_user(system, email=email, password=password, role="admin")
    key, secret = create_api_key(system, label="Default key")
    return {"account_uuid": str(account.uuid), "account_name": account.name, "user_email": user.email,
            "user_uuid": str(user.uuid), "api_key": secret, "api_key_uuid": str(key.uuid),
            "sandbox": account.is_sandbox, "products": entitlements(account)}
