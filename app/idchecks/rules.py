"""Whether an ID check may be run again, asked by the re-check service (which refuses with 409) and the ID check's
page (which then shows no "Check again"): one place for the rule."""
from __future__ import annotations

from app.entities import rules as entity_rules
from app.idchecks.models import IdCheck


def recheck_conflict(check: IdCheck) -> str | None:
    """Why `check` cannot be run again on the data it sealed (None: it can): an IDPass's ID check (a new IDPass is
    launched instead), details the program's retention deleted, or an archived entity or program."""
    if check.id_type == "idpass":
        return "An IDPass's ID check is not run again: launch a new IDPass."
    if check.data_sealed is None:
        return ("The document's details of this ID check are no longer kept (the program's data retention): "
                "run a new ID check.")
    if check.entity is not None and (conflict := entity_rules.write_conflict(check.entity)) is not None:
        return f"{conflict} No ID check can be run."
    return None
