"""Credit for the customer's finance team: balance and prices, and the ledger."""
from __future__ import annotations

from flask import request

from app.api.base import actor, bp, endpoint, listing, single
from app.billing import queries
from app.billing.schemas import CreditOut, LedgerEntryOut

TAG = "Credit"


@bp.get("/credit")
@endpoint(summary="Balance and prices", tag=TAG, response=CreditOut)
def credit():
    return single(CreditOut, queries.credit_overview(actor()))


@bp.get("/credit/ledger")
@endpoint(summary="The credit ledger, newest first", tag=TAG, response=LedgerEntryOut, is_list=True, errors=[400],
          query={"filter[kind]": "top_up, charge, refund, adjustment",
                 "filter[check_uuid]": "rows of one check (its charge and any refund)"})
def credit_ledger():
    return listing(LedgerEntryOut, queries.list_ledger(actor(), queries.list_params(request.args)))
