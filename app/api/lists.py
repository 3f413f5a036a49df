"""The screening lists: each list's versions, when they were fetched, and what each changed (platform-wide: the
same lists screen every account; the demo's invented lists only the demo account's)."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.api.base import actor, bp, endpoint, listing
from app.core.listing import Page
from app.core.schemas import UtcDateTime
from app.lists.queries import visible_lists

TAG = "Lists"


class ListVersionOut(BaseModel):
    version: int
    status: Literal["applied", "held", "rejected"] = Field(description=(
        "held: it would have removed more than the allowed share of the list (a broken download?) and waits for "
        "an operator (the portal's Lists page, or flask lists accept / reject); nothing of it is in use."))
    imported_at: UtcDateTime
    published_at: str | None
    records: int
    added: int
    changed: int
    removed: int
    source: str


class ListOut(BaseModel):
    list: str
    title: str
    publisher: str
    kind: str
    jurisdiction: str | None
    version: int = Field(description="The version in use.")
    records: int
    versions: list[ListVersionOut] = Field(description="The newest 20 versions, newest first.")


@bp.get("/lists")
@endpoint(summary="List the screening lists and their versions", tag=TAG, response=ListOut, is_list=True)
def list_lists():
    rows = visible_lists(actor())
    return listing(ListOut, Page(items=rows, page=1, per_page=max(1, len(rows)), total=len(rows)))
