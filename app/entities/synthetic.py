"""Synthetic entities for benchmarks and demos (`flask entities generate-synthetic`): people with names and dates of
birth of many locales and scripts (Faker's name data, drawn once per locale as the synthetic lists are), a tenth
businesses, and one in LISTED of them a person taken from the loaded PEP and sanctions lists (as customers who
happen to be listed), so that a monitor run over them raises events. Deterministic for a seed and the lists
loaded. Inserted in batches of one statement each; one audit entry for the whole generation."""
from __future__ import annotations

import random
import uuid as uuid_mod
from datetime import date

from sqlalchemy import insert, select, text

from app.core import audit
from app.core.actor import Actor
from app.core.errors import Invalid
from app.core.types import utcnow
from app.entities.models import Entity
from app.entities.schemas import entity_name
from app.extensions import db
from app.programs.queries import get_program
from app.programs.services import require_writable
from app.screening.models import ScreeningList, ScreeningRecord
from app.screening.synthetic import LOCALES, name_pools

LISTED = 500       # one entity in LISTED is a listed person
BATCH = 5000
MAX_COUNT = 2_000_000


def _listed_people(rng: random.Random, wanted: int) -> list[tuple[str, str, date | None]]:
    """(first names, last name, date of birth) of listed people of the sanctions and PEP lists."""
    rows = db.session.execute(select(ScreeningRecord.caption, ScreeningRecord.data).join(
        ScreeningList, ScreeningList.id == ScreeningRecord.list_id).where(
        ScreeningRecord.schema == "Person", ScreeningRecord.removed_in_version.is_(None),
        ScreeningList.kind.in_(("sanction", "pep"))).order_by(ScreeningRecord.id).limit(20000)).all()
    people = []
    for caption, data in rows:
        parts = caption.replace(",", " ").split()
        if len(parts) < 2 or not caption.isascii():
            continue
        dob = None
        for value in (data or {}).get("birth_dates") or []:
            if len(value) == 10:
                try:
                    dob = date.fromisoformat(value)
                except ValueError:
                    pass
                break
        people.append((" ".join(parts[:-1]).title(), parts[-1].title(), dob))
    rng.shuffle(people)
    return people[:wanted]


def generate_entities(actor: Actor, program_uuid, count: int, seed: int = 1) -> int:
    """Insert `count` synthetic entities into the program; returns how many."""
    actor.require("analyst")
    program = get_program(actor, program_uuid)
    require_writable(program)
    if not 1 <= count <= MAX_COUNT:
        raise Invalid.field("count", f"Must be from 1 to {MAX_COUNT:,}.")
    rng = random.Random(seed)
    pools = name_pools(seed)
    listed = _listed_people(rng, count // LISTED + 1)
    risk = program.default_risk_level or "low"
    batch: list[dict] = []
    written = 0
    for n in range(count):
        now = utcnow()
        # every row has the same keys, so that each batch is one multi-row INSERT (rows of different keys would
        # be inserted in groups, each a statement of its own with its counter trigger); the uuid is random: the
        # same seed may fill several programs (names and dates repeat, public ids do not)
        row = {"uuid": uuid_mod.uuid4(), "account_id": actor.account_id,
               "program_id": program.id, "reference_number": f"SYN-{seed}-{n + 1}", "risk_level": risk,
               "flags": [], "created_at": now, "updated_at": now, "archived_at": None, "deleted_at": None,
               "first_name": None, "last_name": None, "birth_date": None, "business_name": None}
        locale, p = pools[rng.randrange(len(pools))]
        if listed and n % LISTED == LISTED // 2:
            first, last, dob = listed.pop()
            row.update(entity_type="individual", first_name=first[:255], last_name=last[:255], birth_date=dob)
        elif rng.random() < 0.1:
            row.update(entity_type="business", business_name=rng.choice(p["company"])[:255])
        else:
            gender = "male" if rng.random() < 0.55 else "female"
            row.update(entity_type="individual", first_name=rng.choice(p[gender])[:255],
                       last_name=rng.choice(p["last"])[:255],
                       birth_date=date(rng.randint(1940, 2005), rng.randint(1, 12), rng.randint(1, 28)))
        country = LOCALES[locale].upper()
        row["address_country"] = country if len(country) == 2 else None
        row["entity_name"] = entity_name(row)
        batch.append(row)
        if len(batch) >= BATCH:
            written += _flush(batch)
    written += _flush(batch)
    if db.session.get_bind().dialect.name == "postgresql":
        # fresh statistics after a bulk load: without them (autovacuum off, or not yet come round) the planner
        # takes the table for empty and the entity list's page query walks every entity (measured: 1.5 s a page
        # at 100,000 entities, 1 ms after ANALYZE)
        db.session.execute(text("ANALYZE entities"))
    audit.record(actor, "entity.synthetic_generated", "program", program.uuid, {"count": written, "seed": seed})
    return written


def _flush(batch: list[dict]) -> int:
    if not batch:
        return 0
    db.session.execute(insert(Entity), batch)
    n = len(batch)
    batch.clear()
    return n
