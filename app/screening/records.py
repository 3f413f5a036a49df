"""Plain data shared by the importers, the list store and the matching engine (no Flask, no database).

A `ListRecord` is one listed party, normalized the same way whatever the source format. Everything the
engine needs to match (names, birth dates, countries, schema, topics) has its own field; everything else a
reviewer wants to read lives in `properties` (arrays of strings, named as in the API's `properties`) and in
`sanctions` / `positions` (the objects returned as `sanction_matches` / `pep_matches`).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMAS = ("Person", "Organization", "Company", "Vessel", "Airplane", "LegalEntity")
# The schemas a query for one kind of subject may match. A LegalEntity (unknown kind) matches anyone.
SCHEMA_GROUPS = {
    "Person": {"Person", "LegalEntity"},
    "Organization": {"Organization", "Company", "LegalEntity"},
    "Company": {"Organization", "Company", "LegalEntity"},
    "Vessel": {"Vessel"},
    "Airplane": {"Airplane"},
    "LegalEntity": set(SCHEMAS),
}

# Name kinds, strongest first. A "weak" alias (UN quality "Low", OFAC weak a.k.a.) is scored lower.
NAME_KINDS = ("primary", "alias", "former", "original_script", "weak")


@dataclass
class Name:
    """One name of a listed party, as published."""

    full: str
    kind: str = "alias"  # one of NAME_KINDS

    def to_dict(self) -> dict[str, Any]:
        return {"full": self.full, "kind": self.kind}


def dedupe_names(caption: str, names: list[Name]) -> list[Name]:
    """The names in order, without repeats and without the caption itself (importers share it)."""
    seen = {caption}
    out = []
    for n in names:
        if n.full not in seen:
            seen.add(n.full)
            out.append(n)
    return out


@dataclass
class ListRecord:
    """One listed party.

    `birth_dates` holds ISO strings of 4 (year), 7 (year-month) or 10 characters, or a range "1973..1974".
    `countries` are ISO 3166-1 alpha-2 codes (lowercase) of nationality, citizenship or residence.
    `topics` use OpenSanctions' vocabulary: "sanction", "role.pep", "role.rca", "debarment", "crime", ...
    """

    id: str
    schema: str
    caption: str
    names: list[Name] = field(default_factory=list)
    birth_dates: list[str] = field(default_factory=list)
    countries: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    identifiers: list[dict[str, str]] = field(default_factory=list)
    properties: dict[str, list[str]] = field(default_factory=dict)
    sanctions: list[dict[str, Any]] = field(default_factory=list)
    positions: list[dict[str, Any]] = field(default_factory=list)
    gender: str | None = None
    first_seen: str | None = None
    last_seen: str | None = None
    last_change: str | None = None

    @property
    def is_pep(self) -> bool:
        return any(t == "role.pep" or t.startswith("role.pep") for t in self.topics)

    @property
    def is_sanctioned(self) -> bool:
        return "sanction" in self.topics or any(t.startswith("sanction.") for t in self.topics)

    def to_data(self) -> dict[str, Any]:
        """Everything except the identity columns and the dates the store keeps itself."""
        data = asdict(self)
        for key in ("id", "schema", "caption", "first_seen", "last_seen", "last_change"):
            data.pop(key)
        return data

    @classmethod
    def from_data(cls, *, id: str, schema: str, caption: str, data: dict[str, Any],
                  first_seen: str | None = None, last_seen: str | None = None,
                  last_change: str | None = None) -> "ListRecord":
        data = dict(data)
        names = [Name(**n) for n in data.pop("names", [])]
        return cls(id=id, schema=schema, caption=caption, names=names, first_seen=first_seen,
                   last_seen=last_seen, last_change=last_change, **data)

    def content_hash(self) -> str:
        """A fingerprint of what the publisher says about the party (its facts, not our bookkeeping)."""
        payload = {"schema": self.schema, "caption": self.caption, **self.to_data()}
        raw = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(raw.encode("utf-8")).hexdigest()

    def all_names(self) -> list[str]:
        seen: list[str] = []
        for n in [Name(self.caption, "primary"), *self.names]:
            if n.full and n.full not in seen:
                seen.append(n.full)
        return seen


# The kind of an invented list (app/demo.py): screened for the demo account only, invisible to every other one.
DEMO_KIND = "demo"


@dataclass
class ListInfo:
    """What a list is: its stable name, a title, who publishes it and for which jurisdiction."""

    name: str            # stable slug, e.g. "us_ofac_sdn"
    title: str
    publisher: str
    kind: str = "sanction"  # "sanction", "pep", "banned", "other", or DEMO_KIND
    # ISO-2 code of the issuing jurisdiction (lowercase), "un" for the UN Security Council (binding on all
    # member states), or None when unknown.
    jurisdiction: str | None = None
    url: str | None = None


@dataclass
class ParsedList:
    """The result of an importer: the list's identity, its publication date if known, and its records."""

    info: ListInfo
    records: list[ListRecord]
    published_at: str | None = None
    source: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class ListDiff:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"added": len(self.added), "changed": len(self.changed), "removed": len(self.removed)}


def diff_hashes(old: dict[str, str], new: dict[str, str]) -> ListDiff:
    """Compare two {record id: content hash} maps; ids are sorted so the diff is deterministic."""
    added = sorted(k for k in new if k not in old)
    removed = sorted(k for k in old if k not in new)
    changed = sorted(k for k, h in new.items() if k in old and old[k] != h)
    return ListDiff(added=added, changed=changed, removed=removed)
