"""Credit reads: the overview and the ledger list."""
from __future__ import annotations

from typing import Mapping

from sqlalchemy import func, select

from app.accounts.models import CreditEntry, credit_balance
from app.billing.services import KINDS, prices
from app.checks.models import Check
from app.core.actor import Actor
from app.core.listing import ListParams, Page, choice, paginate, parse_list_params, uuid_value
from app.extensions import db

FILTERS = {"kind": choice(*KINDS), "check_uuid": uuid_value}


def list_params(args: Mapping[str, str]) -> ListParams:
    return parse_list_params(args, filters=FILTERS, sorts=("created_at",), default_sort="-created_at",
                             archived=False)


def credit_overview(actor: Actor) -> dict:
    return {"balance": credit_balance(actor.account_id), "prices": prices()}


class LedgerRow:
    def __init__(self, entry: CreditEntry, check_uuid):
        self.uuid, self.kind, self.amount = entry.uuid, entry.kind, entry.amount
        self.balance_after, self.reason, self.created_at = entry.balance_after, entry.reason, entry.created_at
        self.check_uuid = check_uuid
        self.created_by = {"type": entry.actor_type if entry.actor_type in ("user", "api_key") else "system",
                           "uuid": entry.actor_uuid, "name": entry.actor_name}


def list_ledger(actor: Actor, params: ListParams) -> Page:
    f = params.filters
    conditions = [CreditEntry.account_id == actor.account_id]
    if "kind" in f:
        conditions.append(CreditEntry.kind == f["kind"])
    if "check_uuid" in f:
        conditions.append(CreditEntry.check_id.in_(select(Check.id).where(
            Check.uuid == f["check_uuid"], Check.account_id == actor.account_id)))
    order = (CreditEntry.id.desc(),) if params.descending else (CreditEntry.id.asc(),)
    page = paginate(select(CreditEntry).where(*conditions).order_by(*order), params,
                    count_stmt=select(func.count(CreditEntry.id)).where(*conditions))
    check_ids = {e.check_id for e in page.items if e.check_id}
    uuids = dict(db.session.execute(select(Check.id, Check.uuid).where(Check.id.in_(check_ids))).all()) \
        if check_ids else {}
    page.items = [LedgerRow(e, uuids.get(e.check_id)) for e in page.items]
    return page
