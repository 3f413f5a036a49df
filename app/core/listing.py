"""List parameters shared by the API and the portal: page/per_page, sort, archived, filter[...]."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Mapping, Sequence
import uuid as uuid_mod

from sqlalchemy import Select, func, select

from app.core.errors import ErrorCollector
from app.extensions import db

DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 500
_FILTER_RE = re.compile(r"^filter\[([a-z_]+)\]$")
TRUE_VALUES = {"true", "1", "'true'", '"true"'}
FALSE_VALUES = {"false", "0", "'false'", '"false"'}


@dataclass
class ListParams:
    page: int = 1
    per_page: int = DEFAULT_PER_PAGE
    sort: str = "-created_at"
    archived: bool | None = None
    filters: dict[str, Any] = field(default_factory=dict)
    search: str | None = None

    @property
    def sort_key(self) -> str:
        return self.sort.lstrip("-")

    @property
    def descending(self) -> bool:
        return self.sort.startswith("-")


@dataclass
class Page:
    items: list
    page: int
    per_page: int
    total: int

    @property
    def last_page(self) -> int:
        return max(1, math.ceil(self.total / self.per_page)) if self.per_page else 1

    def meta(self) -> dict[str, int]:
        return {"current_page": self.page, "per_page": self.per_page, "total": self.total,
                "last_page": self.last_page}


# ---- filter value parsers: take the raw string, return a value or raise ValueError(message) ----

def choice(*allowed: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw not in allowed:
            raise ValueError(f"Must be one of: {', '.join(allowed)}.")
        return raw
    return parse


def uuid_value(raw: str) -> uuid_mod.UUID:
    try:
        return uuid_mod.UUID(raw)
    except ValueError:
        raise ValueError("Must be a valid UUID.") from None


def datetime_value(raw: str) -> datetime:
    """An ISO 8601 date-time (without an offset: UTC), in UTC. Its UTC value must lie in the years 1 to 9999
    (`0001-01-01T00:00:00+14:00` is in year 0 in UTC): a field error, never an overflow."""
    try:
        value = datetime.fromisoformat(raw.replace("Z", "+00:00").replace(" ", "+"))
    except ValueError:
        raise ValueError("Must be an ISO 8601 date-time.") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    try:
        return value.astimezone(timezone.utc)
    except OverflowError:
        raise ValueError(OUT_OF_RANGE) from None


OUT_OF_RANGE = "Must lie between the years 1 and 9999 in UTC."


def upper_bound_value(raw: str) -> datetime:
    """An inclusive upper bound: a date-time is that instant; a bare date (YYYY-MM-DD) covers its whole day, up to
    its last microsecond (so 9999-12-31 needs no day after it)."""
    value = datetime_value(raw)
    if len(raw.strip()) == 10:
        value = value.replace(hour=23, minute=59, second=59, microsecond=999999)
    return value


def text_value(raw: str) -> str:
    if len(raw) > 255:
        raise ValueError("Must be at most 255 characters.")
    return raw


def parse_bool(raw: str) -> bool | None:
    value = raw.strip().lower()
    if value in TRUE_VALUES:
        return True
    if value in FALSE_VALUES:
        return False
    return None


def parse_list_params(
    args: Mapping[str, str],
    *,
    filters: Mapping[str, Callable[[str], Any]],
    sorts: Sequence[str],
    default_sort: str,
    archived: bool = True,
    search: bool = False,
    extra: Sequence[str] = (),
) -> ListParams:
    """Parse and validate list query parameters; every problem is a field error (one 400 for all)."""
    errors = ErrorCollector()
    params = ListParams(sort=default_sort)
    for key in args.keys():
        value = args.get(key, "")
        m = _FILTER_RE.match(key)
        if m:
            name = m.group(1)
            if name not in filters:
                errors.add(key, f"Unknown filter '{name}'. Allowed: {', '.join(filters) or 'none'}.")
                continue
            try:
                params.filters[name] = filters[name](value)
            except ValueError as exc:
                errors.add(key, str(exc))
        elif key == "page":
            if not (value.isascii() and value.isdigit()) or int(value) < 1:
                errors.add("page", "Must be an integer of at least 1.")
            else:
                params.page = int(value)
        elif key == "per_page":
            if not (value.isascii() and value.isdigit()) or not 1 <= int(value) <= MAX_PER_PAGE:
                errors.add("per_page", f"Must be an integer between 1 and {MAX_PER_PAGE}.")
            else:
                params.per_page = int(value)
        elif key == "sort":
            allowed = [s for name in sorts for s in (name, f"-{name}")]
            if value not in allowed:
                errors.add("sort", f"Must be one of: {', '.join(allowed)}.")
            else:
                params.sort = value
        elif key == "archived" and archived:
            parsed = parse_bool(value)
            if parsed is None:
                errors.add("archived", "Must be true, false, 1 or 0.")
            else:
                params.archived = parsed
        elif key == "q" and search:
            params.search = value.strip()[:255] or None
        elif key in extra:
            continue
        else:
            errors.add(key, "Unknown query parameter.")
    errors.raise_if_any()
    return params


def paginate(stmt: Select, params: ListParams, *, count_stmt: Select | None = None, total: int | None = None,
             ids_stmt: Select | None = None) -> Page:
    """Run one page of `stmt` (already filtered and ordered) and its total.

    `total`: the exact total when the caller already has it (e.g. from a counter table); otherwise `count_stmt`
    (default: a count of `stmt`) is run. `ids_stmt`: the same filter and order selecting only the primary key,
    answerable from an index alone: the page's keys are found with it (LIMIT/OFFSET then skips index entries,
    not whole rows), and `stmt` loads just those rows in its order (a "deferred join")."""
    if total is None:
        if count_stmt is None:
            count_stmt = select(func.count()).select_from(stmt.order_by(None).subquery())
        total = db.session.scalar(count_stmt) or 0
    total = int(total)  # a SUM() is numeric: meta figures are integers
    items: list = []
    offset = (params.page - 1) * params.per_page
    if offset < total:
        if ids_stmt is None:
            page = stmt.limit(params.per_page).offset(offset)
        else:
            keys = ids_stmt.limit(params.per_page).offset(offset).subquery()
            page = stmt.where(ids_stmt.selected_columns[0].in_(select(keys.c[0])))
        items = list(db.session.scalars(page).unique())
    return Page(items=items, page=params.page, per_page=params.per_page, total=total)


def archived_conditions(column, params: ListParams) -> list:
    """The `archived` parameter on an `archived_at` column: true, only archived; false, only not; omitted, both."""
    if params.archived is True:
        return [column.is_not(None)]
    if params.archived is False:
        return [column.is_(None)]
    return []
