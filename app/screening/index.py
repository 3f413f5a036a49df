"""The in-memory index: every listed name split into parts, an inverted index from parts to names, and the
variant tables that find near parts quickly (pure Python; built once per process per set of list versions).

- `postings`: part (a token, or two adjacent tokens written together) -> ids of the names holding it;
- `deletes`: every token with one letter deleted -> the tokens it came from (SymSpell's trick: two tokens
  one edit apart share a deletion, so one-edit and two-edit neighbours are found by dictionary look-ups,
  never by scanning the vocabulary);
- `sounds`: Metaphone key -> tokens.
"""
from __future__ import annotations

import time
from array import array
from dataclasses import dataclass, field
from typing import Iterable

from app.screening.matching import DateValue, part_similarity, phonetic_key
from app.screening.normalize import country_code, name_tokens
from app.screening.records import ListInfo, ListRecord

MIN_DELETE_LEN = 3  # tokens shorter than this are only found exactly or by sound


def deletes1(token: str) -> set[str]:
    return {token[:i] + token[i + 1:] for i in range(len(token))}


@dataclass
class IndexedRecord:
    record: ListRecord
    list_name: str
    dates: tuple[DateValue, ...]
    countries: frozenset[str]
    sanction_countries: frozenset[str]  # jurisdictions whose sanctions name the party ("un": all)
    pep_countries: frozenset[str]
    is_pep: bool
    is_sanctioned: bool


@dataclass
class IndexStats:
    records: int = 0
    names: int = 0
    vocabulary: int = 0
    postings: int = 0
    deletes: int = 0
    build_seconds: float = 0.0
    lists: dict[str, int] = field(default_factory=dict)


class ScreeningIndex:
    """Built from (ListInfo, ListRecord) pairs; immutable afterwards (safe to share between threads)."""

    def __init__(self, items: Iterable[tuple[ListInfo, ListRecord]], list_versions: dict[str, str] | None = None):
        started = time.perf_counter()
        self.list_versions: dict[str, str] = dict(sorted((list_versions or {}).items()))
        self.lists: dict[str, ListInfo] = {}
        self.records: list[IndexedRecord] = []
        name_record: list[int] = []
        self.name_tokens: list[tuple[str, ...]] = []
        self.name_text: list[str] = []
        self.name_kind: list[str] = []
        postings: dict[str, list[int]] = {}
        for info, record in items:
            self.lists.setdefault(info.name, info)
            rec_idx = len(self.records)
            self.records.append(_indexed(info, record))
            seen: set[tuple[str, ...]] = set()
            for full, kind in [(record.caption, "primary"), *((n.full, n.kind) for n in record.names)]:
                tokens = name_tokens(full, record.schema)
                if not tokens or tokens in seen:
                    continue
                seen.add(tokens)
                name_id = len(name_record)
                name_record.append(rec_idx)
                self.name_tokens.append(tokens)
                self.name_text.append(full)
                self.name_kind.append(kind)
                keys = set(tokens)
                keys.update(tokens[i] + tokens[i + 1] for i in range(len(tokens) - 1))
                for key in keys:
                    postings.setdefault(key, []).append(name_id)
        self.name_record = array("i", name_record)
        self.name_length = array("i", (sum(map(len, t)) for t in self.name_tokens))
        self.postings: dict[str, array] = {k: array("i", v) for k, v in postings.items()}
        self.deletes: dict[str, list[str]] = {}
        self.sounds: dict[str, list[str]] = {}
        singles = {t for tokens in self.name_tokens for t in tokens}
        for token in sorted(singles):
            if len(token) >= MIN_DELETE_LEN:
                for d in deletes1(token):
                    self.deletes.setdefault(d, []).append(token)
            key = phonetic_key(token)
            if key:
                self.sounds.setdefault(key, []).append(token)
        self._match_cache: dict[tuple[str, str, bool], dict[str, float]] = {}
        self._posting_cache: dict[tuple[str, str, bool], frozenset[int]] = {}
        self.stats = IndexStats(
            records=len(self.records), names=len(self.name_tokens), vocabulary=len(self.postings),
            postings=sum(len(v) for v in self.postings.values()), deletes=len(self.deletes),
            build_seconds=time.perf_counter() - started,
            lists={name: sum(1 for r in self.records if r.list_name == name) for name in self.lists})

    # -- look-ups -------------------------------------------------------------------------------------

    def matches(self, unit: str, search_type: str, joined: bool = False) -> dict[str, float]:
        """Indexed parts that may align with a query unit, with their similarity (cached per process).

        `joined`: the unit is two query tokens written together."""
        key = (unit, search_type, joined)
        found = self._match_cache.get(key)
        if found is not None:
            return found
        out: dict[str, float] = {}
        if unit in self.postings:
            out[unit] = 1.0
        if search_type != "narrow_search":
            near: set[str] = set()
            postings, deletes = self.postings, self.deletes
            if joined:
                # two query tokens written together: only the listed parts it equals, or equals less one
                # letter, are sought (typos inside joined names are found token by token)
                near.update(d for d in deletes1(unit) if d in postings)
            elif len(unit) >= MIN_DELETE_LEN:
                near.update(deletes.get(unit, ()))          # listed part = unit + one letter
                first = deletes1(unit)
                for d in first:
                    if d in postings:                        # listed part = unit - one letter
                        near.add(d)
                    near.update(deletes.get(d, ()))          # one substitution / swap
                if search_type == "broad_search" and len(unit) >= 5:
                    for d in first:
                        for d2 in deletes1(d):
                            if d2 in postings:
                                near.add(d2)
                            near.update(deletes.get(d2, ()))
            key_sound = phonetic_key(unit) if len(unit) >= 4 and not joined else ""
            if len(key_sound) >= 2:
                near.update(self.sounds.get(key_sound, ()))
            for candidate in near:
                if candidate not in out:
                    s = part_similarity(unit, candidate, search_type)
                    if s > 0.0:
                        out[candidate] = s
        if len(self._match_cache) > 200_000:
            self._match_cache.clear()
        self._match_cache[key] = out
        return out

    def names_matching(self, unit: str, search_type: str, joined: bool = False) -> frozenset[int]:
        """Ids of the names holding a part that may align with the unit (cached: common parts recur)."""
        key = (unit, search_type, joined)
        found = self._posting_cache.get(key)
        if found is not None:
            return found
        matches = self.matches(unit, search_type, joined)
        postings = self.postings
        if len(matches) == 1:
            found = frozenset(postings[next(iter(matches))])
        else:
            found = frozenset().union(*(postings[v] for v in matches))
        if len(self._posting_cache) > 50_000:
            self._posting_cache.clear()
        self._posting_cache[key] = found
        return found

    def clear_caches(self) -> None:
        self._match_cache.clear()
        self._posting_cache.clear()

    def token_weight(self, token: str) -> float:
        """How much a name part says about who someone is, in 0.25..1, from its rarity among the listed
        names (inverse document frequency): a part most names share weighs little, a part of one name (or
        of none: a query part the lists do not know) weighs 1."""
        cache = self.__dict__.setdefault("_weight_cache", {})
        found = cache.get(token)
        if found is None:
            import math
            df = len(self.postings.get(token, ()))
            n = max(len(self.name_tokens), 1)
            idf = math.log((n + 1) / (df + 1))
            found = 0.25 + 0.75 * min(1.0, idf / 8.0)
            if len(cache) > 200_000:
                cache.clear()
            cache[token] = found
        return found


def _indexed(info: ListInfo, record: ListRecord) -> IndexedRecord:
    dates = tuple(d for d in (DateValue.parse(v) for v in record.birth_dates) if d)
    countries = frozenset(c for c in (country_code(v) for v in record.countries) if c)
    sanction_countries: set[str] = set()
    if record.is_sanctioned:
        if info.jurisdiction:
            sanction_countries.add(info.jurisdiction.lower())
        for s in record.sanctions:
            code = country_code(s.get("country")) if s.get("country") else None
            if code:
                sanction_countries.add(code)
            elif (s.get("authority") or "").lower().startswith("united nations"):
                sanction_countries.add("un")
    pep_countries: set[str] = set()
    if record.is_pep:
        for p in record.positions:
            code = country_code(p.get("country")) if p.get("country") else None
            if code:
                pep_countries.add(code)
        if not pep_countries:
            pep_countries.update(countries or ({info.jurisdiction.lower()} if info.jurisdiction else set()))
    return IndexedRecord(record=record, list_name=info.name, dates=dates, countries=countries,
                         sanction_countries=frozenset(sanction_countries), pep_countries=frozenset(pep_countries),
                         is_pep=record.is_pep, is_sanctioned=record.is_sanctioned)
