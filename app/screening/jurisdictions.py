"""Which `sanction_countries` values a sanctions authority's list serves (docs/lists.md).

A national list serves its own country's code (OFAC: US, the UK Sanctions List: GB, DFAT: AU, Canada: CA). The EU's
consolidated list binds every member state, which publish none of their own for these regimes: it serves each member
state's code (a German bank screens with `sanction_countries: ["DE"]`), since "EU" is no ISO 3166-1 country code
the API accepts. The UN Security Council list binds every UN member and counts whatever the filter (engine)."""
from __future__ import annotations

# The 27 member states (ISO 3166-1 alpha-2, lowercase), as of 2026.
EU_MEMBER_STATES = frozenset({
    "at", "be", "bg", "hr", "cy", "cz", "dk", "ee", "fi", "fr", "de", "gr", "hu", "ie", "it", "lv", "lt", "lu",
    "mt", "nl", "pl", "pt", "ro", "sk", "si", "es", "se"})


def served_countries(jurisdiction: str | None) -> set[str]:
    """The lowercase codes a list of this jurisdiction counts for: itself, and for "eu" every member state."""
    if not jurisdiction:
        return set()
    code = jurisdiction.strip().lower()
    return {code, *EU_MEMBER_STATES} if code == "eu" else {code}
