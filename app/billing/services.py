"""Credit: prices per check type and the ledger. Every change of balance is one ledger row written under a
row lock on the account, so concurrent launches can never drive the balance below zero, and the latest row's
`balance_after` is the balance. A check is charged once (at launch) and refunded at most once (unique index on
the refund of a check, checked under the same lock)."""
from __future__ import annotations

import uuid

from sqlalchemy import String, insert, literal, select

from app.accounts.models import Account, CreditEntry, credit_balance
from app.accounts.services import bootstrap_account, cli_actor, get_account
from app.billing.models import DEFAULT_PRICES, CheckPrice
from app.core import audit
from app.core.actor import Actor
from app.core.errors import Forbidden, InsufficientCredit, Invalid
from app.extensions import db

KINDS = ("top_up", "charge", "refund", "adjustment")


def _with_defaults(table: dict[str, int]) -> dict[str, int]:
    return {k: table.get(k, v) for k, v in DEFAULT_PRICES.items()}


def prices() -> dict[str, int]:
    """Credits per check type: the table, with the built-in defaults for any type it does not hold."""
    return _with_defaults({p.check_type: p.credits for p in db.session.scalars(select(CheckPrice))})


def prices_and_balance(account_id: int) -> tuple[dict[str, int], int]:
    """`prices()` and the account's balance in one statement (a launch's pre-flight): the price rows, and one
    row without a check type that carries the balance."""
    latest = (select(CreditEntry.balance_after).where(CreditEntry.account_id == account_id)
              .order_by(CreditEntry.id.desc()).limit(1).scalar_subquery())
    rows = db.session.execute(select(CheckPrice.check_type, CheckPrice.credits)
                              .union_all(select(literal(None, String), latest))).all()
    table = {check_type: credits for check_type, credits in rows if check_type is not None}
    balance = next((credits for check_type, credits in rows if check_type is None), None) or 0
    return _with_defaults(table), balance


def is_operator(actor: Actor) -> bool:
    """The platform operator: the command line, or an admin of an operator account
    (`flask accounts set-operator`)."""
    if actor.via == "cli":
        return True
    if not actor.can("admin"):
        return False
    account = db.session.get(Account, actor.account_id)
    return account is not None and bool(account.is_operator)


def set_price(actor: Actor, check_type: str, credits: int, *, audit_change: bool = True) -> CheckPrice:
    """Prices are the platform's (every account pays the same), so only the operator sets them: the CLI, or an
    admin of an operator account on the portal's credit page. `audit_change` writes the change into the
    actor's account audit log; the operator's CLI has no account to write it to."""
    actor.require("admin")
    if not is_operator(actor):
        raise Forbidden("Prices are the same for every account and only the platform operator sets them.")
    if check_type not in DEFAULT_PRICES:
        raise Invalid.field("check_type", f"“{check_type}” is not a priced check type; one of: "
                                          f"{', '.join(DEFAULT_PRICES)}.")
    if not isinstance(credits, int) or isinstance(credits, bool) or not 0 <= credits <= 100_000:
        raise Invalid.field("credits", "Must be a whole number of credits from 0 to 100,000.")
    row = db.session.get(CheckPrice, check_type)
    before = row.credits if row is not None else DEFAULT_PRICES[check_type]
    if row is None:
        row = CheckPrice(check_type=check_type, credits=credits)
        db.session.add(row)
    row.credits = credits
    row.updated_by = actor.name
    db.session.flush()
    if before != credits and audit_change:
        audit.record(actor, "credit.price_changed", "check_price", None,
                     {"check_type": check_type, "credits": [before, credits]})
    return row


def set_prices(actor: Actor, changes: dict[str, object]) -> int:
    """Several prices at once (the portal's price table), all or none: `{check_type: credits}` where credits may
    be the form's text. Field errors are keyed `price.<check_type>`. Returns how many prices changed."""
    current = prices()
    errors: dict[str, list[str]] = {}
    changed = 0
    for check_type, raw in changes.items():
        text = str(raw).strip()
        if check_type in current and text == str(current[check_type]):
            continue
        if not (text.isascii() and text.isdigit()):
            errors[f"price.{check_type}"] = ["A whole number of credits from 0 to 100,000."]
            continue
        try:
            set_price(actor, check_type, int(text))
            changed += 1
        except Invalid as exc:
            errors[f"price.{check_type}"] = [m for ms in (exc.errors or {}).values() for m in ms] or [exc.message]
    if errors:
        raise Invalid("Some prices were not valid; nothing was saved.", errors=errors)
    return changed


def lock_account(account_id: int) -> None:
    """Serialise balance changes of one account: a PostgreSQL `FOR NO KEY UPDATE` row lock, which other
    writers' foreign-key checks (`FOR KEY SHARE`) do not wait for; SQLite serialises writers itself."""
    db.session.execute(select(Account.id).where(Account.id == account_id).with_for_update(key_share=True))


_lock = lock_account


def post(account_id: int, kind: str, amount: int, reason: str, *, actor: Actor | None = None,
         check=None, allow_negative: bool = False, monitor_chunk_id: int | None = None,
         id_check=None) -> CreditEntry:
    """Write one ledger row (for `check` or `id_check` when a charge or refund is one's: the row names it by its
    public id in `check_uuid`); refuses (InsufficientCredit) to take the balance below zero unless allowed."""
    if kind not in KINDS:
        raise ValueError(kind)
    _lock(account_id)
    balance = credit_balance(account_id) + amount
    if balance < 0 and not allow_negative:
        raise InsufficientCredit(f"Insufficient credit: this needs {-amount} credits and the balance is "
                                 f"{balance - amount}.")
    entry = CreditEntry(account_id=account_id, kind=kind, amount=amount, reason=reason[:500],
                        check_id=check.id if check is not None else None,
                        check_uuid=check.uuid if check is not None else id_check.uuid if id_check is not None else None,
                        id_check_id=id_check.id if id_check is not None else None, monitor_chunk_id=monitor_chunk_id,
                        balance_after=balance, actor_type=actor.kind if actor else "system",
                        actor_uuid=actor.uuid if actor else None, actor_name=actor.name if actor else "system")
    db.session.add(entry)
    db.session.flush()
    return entry


def charge_checks(actor: Actor, checks: list, total: int, *, balance: int | None = None) -> None:
    """Charge a launch: all its checks or none (the caller's transaction rolls back on InsufficientCredit).
    `balance`: the caller already holds the account's lock and read the balance under it (the launch's
    pre-flight), so the ledger rows are written without reading it again."""
    if balance is None:
        _lock(actor.account_id)
        balance = credit_balance(actor.account_id)
    if balance < total:
        raise InsufficientCredit(f"Insufficient credit: this launch costs {total} credits and the balance is "
                                 f"{balance}.")
    rows = []
    for check in checks:
        if check.credits:
            balance -= check.credits
            rows.append(dict(account_id=actor.account_id, kind="charge", amount=-check.credits,
                             reason=f"{check.check_type_name} {check.check_number}"[:500], check_id=check.id,
                             check_uuid=check.uuid, balance_after=balance, actor_type=actor.kind,
                             actor_uuid=actor.uuid, actor_name=actor.name))
    if rows:  # one statement (a launch's rows are read back by nobody in its request)
        db.session.execute(insert(CreditEntry), rows)


def refund_check(check, reason: str) -> CreditEntry | None:
    """Refund a failed check's charge exactly once; None when there is nothing (left) to refund."""
    if not check.credits:
        return None
    _lock(check.account_id)
    already = db.session.scalar(select(CreditEntry.id).where(CreditEntry.check_id == check.id,
                                                             CreditEntry.kind == "refund"))
    charged = db.session.scalar(select(CreditEntry.id).where(CreditEntry.check_id == check.id,
                                                             CreditEntry.kind == "charge"))
    if already is not None or charged is None:
        return None
    return post(check.account_id, "refund", check.credits, f"Refund: {check.check_type_name} {check.check_number} "
                f"failed ({reason[:300]})", check=check)


def refund_id_check(id_check, reason: str) -> CreditEntry | None:
    """Refund an ID check's (an IDPass shell's) charge exactly once (a unique index backs the check made here under
    the account's lock); None when there is nothing (left) to refund."""
    if not id_check.credits:
        return None
    _lock(id_check.account_id)
    rows = set(db.session.scalars(select(CreditEntry.kind).where(CreditEntry.id_check_id == id_check.id)))
    if "refund" in rows or "charge" not in rows:
        return None
    return post(id_check.account_id, "refund", id_check.credits, f"Refund: {id_check.id_type_name} "
                f"{id_check.check_number} ({reason[:300]})", id_check=id_check)


def charge_monitor_chunk(account_id: int, chunk_id: int, screened: int, price: int, reason: str) -> int:
    """Charge a monitor chunk's screened entities in one ledger row (at most one per chunk: a unique index), under
    the account's lock; returns the credits charged. The caller checked the balance under the same lock."""
    amount = screened * price
    if amount:
        post(account_id, "charge", -amount, reason, monitor_chunk_id=chunk_id)
    return amount


def balance_of(account_id: int) -> int:
    """The account's balance as last committed, read without its lock: a hint (it may fall before a charge), never
    the check a charge relies on (`affordable`, `post`)."""
    return credit_balance(account_id)


def affordable(account_id: int, price: int) -> int:
    """How many checks at `price` the balance pays for now, read under the account's lock (held to the commit)."""
    _lock(account_id)
    return credit_balance(account_id) // price if price > 0 else 10 ** 9


def top_up(actor: Actor, amount: int, reason: str) -> CreditEntry:
    actor.require("admin")
    if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
        raise Invalid.field("amount", "Must be a positive whole number of credits.")
    entry = post(actor.account_id, "top_up", amount, reason or "Top-up", actor=actor)
    audit.record(actor, "credit.top_up", "account", None, {"amount": amount, "reason": reason})
    return entry


def open_account(*, credit: int = 0, **account) -> dict:
    """A new account (`accounts.services.bootstrap_account`, same keywords) whose opening balance is its
    ledger's first top-up, "Initial credit"."""
    from_accounts = bootstrap_account(**account)
    if credit:
        top_up(cli_actor(get_account(uuid.UUID(from_accounts["account_uuid"]))), credit, "Initial credit")
    return {**from_accounts, "credit": credit}


def adjust(actor: Actor, amount: int, reason: str) -> CreditEntry:
    """A manual correction (either sign), with its reason; never below zero."""
    actor.require("admin")
    if not isinstance(amount, int) or isinstance(amount, bool) or amount == 0:
        raise Invalid.field("amount", "Must be a non-zero whole number of credits.")
    if not (reason or "").strip():
        raise Invalid.field("reason", "Say why the balance is adjusted.")
    entry = post(actor.account_id, "adjustment", amount, reason.strip(), actor=actor)
    audit.record(actor, "credit.adjusted", "account", None, {"amount": amount, "reason": reason})
    return entry


def balance(actor: Actor) -> int:
    return credit_balance(actor.account_id)
