"""Credit reads: the overview and the ledger list."""
from __future__ import annotations

from typing import Mapping

from sqlalchemy import func, select

from app.accounts.models import CreditEntry, credit_balance
from app.billing.services import KINDS, prices
from app.core.actor import Actor
from app.core.listing import ListParams, Page, choice, paginate, parse_list_params, uuid_value

FILTERS = {"kind": choice(*KINDS), "check_uuid": uuid_value}


def list_params(args: Mapping[str, str]) -> ListParams:
    return parse_list_params(args, filters=FILTERS, sorts=("created_at",), default_sort="-created_at",
                             archived=False)


def credit_overview(actor: Actor) -> dict:
    return {"balance": credit_balance(actor.account_id), "prices": prices()}


class LedgerRow:
    def __init__(self, entry: CreditEntry):
        self.uuid, self.kind, self.amount = entry.uuid, entry.kind, entry.amount
        self.balance_after, self.reason, self.created_at = entry.balance_after, entry.reason, entry.created_at
        self.check_uuid = entry.check_uuid
        self.created_by = {"type": entry.actor_type if entry.actor_type in ("user", "api_key") else "system",
                           "uuid": entry.actor_uuid, "name": entry.actor_name}


def list_ledger(actor: Actor, params: ListParams) -> Page:
    f = params.filters
    conditions = [CreditEntry.account_id == actor.account_id]
    if "kind" in f:
        conditions.append(CreditEntry.kind == f["kind"])
    if "check_uuid" in f:
        conditions.append(CreditEntry.check_uuid == f["check_uuid"])
    order = (CreditEntry.id.desc(),) if params.descending else (CreditEntry.id.asc(),)
    page = paginate(select(CreditEntry).where(*conditions).order_by(*order), params,
                    count_stmt=select(func.count(CreditEntry.id)).where(*conditions))
    page.items = [LedgerRow(e) for e in page.items]
    return page
