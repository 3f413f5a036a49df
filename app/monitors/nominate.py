"""Which customers a list update may concern: an index of the program's customer names, looked up with the names
of the records that changed (the reverse of a screening, where a customer's names are looked up in the lists).

A list update changes a few hundred records; a program holds up to millions of customers. Screening every customer
against the changed records costs one query per customer; looking the changed records up in an index of the
customers costs one query per changed name, plus the index's build (about 4 s per 100,000 customers on this
machine, names only: a few columns read, no ORM objects), in parts of 25,000 customers so that its memory does not
grow with the program. The look-up is wide (broad search, a margin below the
monitor's threshold, names alone, no date or country qualifier), since a name scores a little differently
from either side; the run that follows screens the nominated customers against the full lists with the monitor's
own configuration, so the margin costs screenings, never a missed alert."""
from __future__ import annotations

import ctypes
import gc
from typing import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.entities.models import Entity
from app.providers import Subject
from app.screening.engine import ScreeningConfig, matching_ids, query_names
from app.screening.index import ScreeningIndex
from app.screening.records import ListInfo, ListRecord, Name

CUSTOMERS = ListInfo(name="customers", title="Customers", publisher="account", kind="other")
CANDIDATE_MARGIN = 20  # points below the monitor's threshold
INDEX_CUSTOMERS = 25_000  # customers per index (each adds about 50 MB while it is built and used)
_COLUMNS = (Entity.id, Entity.entity_type, Entity.first_name, Entity.middle_name, Entity.last_name,
            Entity.business_name, Entity.vessel_name, Entity.property_name)


def _customer(row) -> ListRecord | None:
    """One customer as a record of the index: its id and the names a screening of it would search for."""
    _id, kind, first, middle, last, business, vessel, other = row
    if kind == "individual":
        subject = Subject(first_name=first, middle_name=middle, last_name=last)
    elif kind == "business":
        subject = Subject(business_name=business)
    elif kind == "vessel":
        subject = Subject(vessel_name=vessel)
    else:
        subject = Subject(full_name=other)
    names = query_names(subject)
    if not names:
        return None
    return ListRecord(id=str(_id), schema=names[0][1], caption=names[0][0],
                      names=[Name(n, "alias") for n, _ in names[1:]])


def customer_indexes(session: Session, program_id: int, size: int = INDEX_CUSTOMERS):
    """The live customers of a program, indexed by name, `size` customers an index (built in memory, one at a
    time: the memory of a look-up stays that of `size` customers however large the program)."""
    after = 0
    while True:
        rows = session.execute(select(*_COLUMNS).where(
            Entity.program_id == program_id, Entity.id > after, Entity.deleted_at.is_(None),
            Entity.archived_at.is_(None)).order_by(Entity.id).limit(size)).all()
        if not rows:
            return
        after = rows[-1][0]
        records = (r for r in map(_customer, rows) if r is not None)
        yield ScreeningIndex(((CUSTOMERS, r) for r in records), {CUSTOMERS.name: "live"})
        if len(rows) < size:
            return


def nominate(session: Session, program_id: int, records: list[ListRecord], thresholds: dict[int, int],
             size: int = INDEX_CUSTOMERS) -> dict[int, set[int]]:
    """For each key of `thresholds` (a monitor, with its similarity threshold): the customers of the program near
    one of `records`. One index of `size` customers at a time, dropped (and its memory given back) before the next
    is built."""
    found: dict[int, set[int]] = {key: set() for key in thresholds}
    indexes = customer_indexes(session, program_id, size)
    while (index := next(indexes, None)) is not None:
        for key, threshold in thresholds.items():
            found[key] |= customers_near(index, records, threshold)
        del index
        release_memory()
    return found


def release_memory() -> None:
    """Give the freed memory of a dropped index back to the system (glibc keeps it otherwise, and the worker's
    resident size would grow by the largest index it ever built)."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc


def customers_near(index: ScreeningIndex, records: Iterable[ListRecord], threshold: int) -> set[int]:
    """Ids of the customers one of whose names may match a name of one of `records` at `threshold` (0-100)."""
    config = ScreeningConfig(search_type="broad_search", similarity_threshold=max(10, threshold - CANDIDATE_MARGIN),
                             lists=(CUSTOMERS.name,))
    found: set[int] = set()
    for record in records:
        if record.schema == "Airplane":
            continue  # no customer is an aircraft
        for name in dict.fromkeys([record.caption, *(n.full for n in record.names)]):
            if not name:
                continue
            subject = Subject(vessel_name=name) if record.schema == "Vessel" else \
                Subject(full_name=name, schema="Organization" if record.schema == "Company" else record.schema)
            found.update(map(int, matching_ids(index, subject, config)))
    return found
