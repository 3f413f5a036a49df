"""The screening engine: `screen(index, subject, config) -> ScreeningResult` (pure Python, deterministic).

1. The subject's names are normalized into parts (see `normalize`).
2. Candidate generation: each query part is looked up in the index (exactly, and for medium/broad through
   its one- or two-edit and same-sound neighbours). A listed name can only reach the threshold if it aligns
   with enough of the query, so only the postings of the rarest query parts need reading (pigeonhole bound:
   a name matching none of them cannot score enough).
3. Each candidate name is aligned part by part with the query (see `matching.align`), scored, and the best
   name of each listed party kept.
4. Qualifiers adjust the name score: date of birth (exact / same year / wrong day / a year apart /
   conflict), country and gender. The narrow search excludes on a conflict; the broad search tolerates one
   year on dates of birth.
5. Results at or above the threshold, best first (ties by record id), at most `max_results`.
6. On request (`near_misses=N`), the best N records whose final score fell below the threshold but reached
   its near-miss floor (`near_miss_floor`: 0.55 at 80), in the same shape: what a check shows an analyst as
   "near misses". Asking for them widens the candidate search down to the floor; the results at or above the
   threshold are the same.
"""
from __future__ import annotations

import hashlib
import uuid
from functools import lru_cache
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from app.core.subject import Subject
from app.screening.constants import (ARTICLES, COUNTRY_BONUS, COUNTRY_PENALTY, DOB_BONUS_EXACT, DOB_BONUS_YEAR,
                                     DOB_PENALTY_CONFLICT, DOB_PENALTY_DAY, DOB_PENALTY_NEAR, GENDER_PENALTY,
                                     INITIAL_SIM, KIND_FACTOR, SEARCH_TYPES, SIM_EXPONENT)
from app.screening.index import ScreeningIndex, UnitMatch
from app.screening.index_tables import sorted_union
from app.screening.matching import Alignment, align, initials_mode, least_query_leftover, reverse_matches, units
from app.screening.qualifiers import DOB_RANK, DateValue, compare_dates
from app.screening.similarity import part_rule, part_similarity
from app.screening.normalize import PERSON, country_code, is_latin, name_tokens, parse_date, theophoric_variants
from app.screening.vowelling import unit_scripts
from app.screening.records import SCHEMA_GROUPS
from app.screening.wade_giles import other_romanizations, syllabic

ENGINE_VERSION = "3.5.0"
THRESHOLDS = tuple(range(10, 101, 10))
MAX_RESULTS = (10, 15, 20, 25, 50, 100)
DEFAULT_SANCTION_COUNTRIES = ("AU", "CA", "NZ", "GB", "US")
# Near misses (docs/decisions.md "Near misses"): the best NEAR_MISS_COUNT records scoring below the threshold by at
# most NEAR_MISS_WINDOW, what a date of birth in another year takes off (a name that reaches the threshold on
# its own, with its strongest fact against it), never below NEAR_MISS_MIN (`near_miss_floor`), whose name
# scores at most NEAR_MISS_NAME_WINDOW below the threshold (`near_miss_name_floor`: a name further off is another
# name, and searching down to it costs a screening a third to two thirds more: docs/performance.md).
NEAR_MISS_WINDOW = DOB_PENALTY_CONFLICT
NEAR_MISS_NAME_WINDOW = 0.10
NEAR_MISS_MIN = 0.50
NEAR_MISS_COUNT = 5


def near_miss_floor(threshold: int) -> float:
    """The lowest score of a near miss under a `similarity_threshold` (10..100): 0.55 at 80, 0.65 at 90, 0.50
    at 70 and below (at 50 and below there are none: the floor is not below the threshold)."""
    return _under(threshold, NEAR_MISS_WINDOW)


def near_miss_name_floor(threshold: int) -> float:
    """The lowest name score (before the date of birth, country and gender) of a near miss: 0.70 at 80."""
    return _under(threshold, NEAR_MISS_NAME_WINDOW)


def _under(threshold: int, window: float) -> float:
    return max(NEAR_MISS_MIN, round(int(threshold) / 100 - window, 4))


MAX_BONUS = DOB_BONUS_EXACT + COUNTRY_BONUS
RESULT_NAMESPACE = uuid.UUID("5b2d4f64-6a43-4c4e-9a0e-3c1b1d6c9f10")
PROPERTY_KEYS = ("birth_date", "death_date", "gender", "nationality", "citizenship", "birth_place", "aliases",
                 "positions", "phone", "email", "address", "education", "religion", "notes", "wikidata_id",
                 "source_urls", "websites")
SHORT_PROPERTY_KEYS = ("birth_date", "gender", "nationality", "citizenship", "aliases")


class ConfigError(ValueError):
    """A screening knob outside its allowed values; `field` names the knob."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


@dataclass(frozen=True)
class ScreeningConfig:
    """The product's knobs (spec `config.pep_sanction_check`, DECISIONS "Screening knobs")."""

    search_type: str = "medium_search"
    similarity_threshold: int = 80
    pep_countries: tuple[str, ...] = ()
    sanction_countries: tuple[str, ...] = DEFAULT_SANCTION_COUNTRIES
    max_results: int = 25
    extended_result: bool = True
    # Restrict to these lists (by name), e.g. the registers of banned_disqualified_persons. When set, the
    # PEP / sanction country filters do not apply.
    lists: tuple[str, ...] = ()
    # Lists this run may not see at all (a demo list, for every account but the demo's): never matched, never
    # named in `list_versions`. Not a product knob: left out of `to_dict`.
    hidden_lists: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.search_type not in SEARCH_TYPES:
            raise ConfigError("search_type", f"must be one of {', '.join(SEARCH_TYPES)}")
        try:
            threshold = int(self.similarity_threshold)
        except (TypeError, ValueError):
            raise ConfigError("similarity_threshold", "must be one of 10, 20, ..., 100") from None
        if threshold not in THRESHOLDS:
            raise ConfigError("similarity_threshold", "must be one of 10, 20, ..., 100")
        object.__setattr__(self, "similarity_threshold", threshold)
        if int(self.max_results) not in MAX_RESULTS:
            raise ConfigError("max_results", f"must be one of {', '.join(map(str, MAX_RESULTS))}")
        for key in ("pep_countries", "sanction_countries"):
            codes = []
            for value in getattr(self, key) or ():
                code = country_code(str(value)) if len(str(value)) == 2 else None
                if code is None:
                    raise ConfigError(key, f"{value!r} is not an ISO 3166-1 alpha-2 country code")
                codes.append(code.upper())
            object.__setattr__(self, key, tuple(sorted(set(codes))))
        object.__setattr__(self, "lists", tuple(self.lists or ()))
        object.__setattr__(self, "hidden_lists", tuple(self.hidden_lists or ()))

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "ScreeningConfig":
        data = dict(data or {})
        if "pep_sanction_extended_result" in data:
            data["extended_result"] = data.pop("pep_sanction_extended_result")
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(unknown[0], "unknown option")
        for key in ("pep_countries", "sanction_countries", "lists", "hidden_lists"):
            if key in data and data[key] is not None:
                data[key] = tuple(data[key])
        return cls(**{k: v for k, v in data.items() if v is not None})

    def to_dict(self) -> dict[str, Any]:
        return {"search_type": self.search_type, "similarity_threshold": self.similarity_threshold,
                "pep_countries": list(self.pep_countries), "sanction_countries": list(self.sanction_countries),
                "max_results": self.max_results, "extended_result": self.extended_result,
                **({"lists": list(self.lists)} if self.lists else {})}


SCREENED_KEYS = ("full_name", "first_name", "middle_name", "last_name", "dob", "business_name", "vessel_name",
                 "address_country")


def subject_kind(subject: Subject) -> str:
    """The kind of party the subject is: its `schema`, else inferred from the names it has."""
    if subject.schema:
        return subject.schema
    if subject.vessel_name:
        return "Vessel"
    if subject.business_name and not (subject.full_name or subject.first_name or subject.last_name):
        return "Organization"
    return "Person"


def _own_names(subject: Subject) -> list[tuple[str, str]]:
    """The subject's own names, (name, schema), in the order a screening searches them."""
    out: list[tuple[str, str]] = []
    kind = subject_kind(subject)
    if subject.vessel_name:
        out.append((subject.vessel_name, "Vessel"))
    if subject.business_name:
        out.append((subject.business_name, "Organization" if kind == "Person" else kind))
    if subject.full_name:
        out.append((subject.full_name, kind if kind != "Vessel" else "Person"))
    parts = " ".join(p for p in (subject.first_name, subject.middle_name, subject.last_name) if p)
    if parts:
        out.append((parts, "Person"))
    return out


def query_names(subject: Subject) -> list[tuple[str, str]]:
    """(name, schema) pairs to search for: the subject's own names, and a person's written another way
    (`theophoric_variants`)."""
    seen: set[tuple[tuple[str, ...], str]] = set()
    unique = []
    for name, schema in _own_names(subject):
        tokens = name_tokens(name, schema)
        named = [(name, tokens)]
        # a person's "Abd al-Aziz" is also screened as "Abdulaziz", and "Abdulaziz" as "Abd al-Aziz" (engine 3.5.0)
        for variant in theophoric_variants(tokens) if schema == PERSON else ():
            text = " ".join(t.capitalize() for t in variant)
            named.append((text, name_tokens(text, schema)))
        for text, read in named:
            if read and (read, schema) not in seen:
                seen.add((read, schema))
                unique.append((text, schema))
    return unique


def read_from(subject: Subject, query_name: str) -> str | None:
    """The subject's own name that a result's `query_name` was read from, when the screening matched with that name
    written another way (`query_names`: "Abdelaziz" read as "Abd Al Aziz"); None when it is one of its own names."""
    own = _own_names(subject)
    if any(name == query_name for name, _ in own):
        return None
    read = name_tokens(query_name, PERSON)
    return next((name for name, schema in own
                 if schema == PERSON and read in theophoric_variants(name_tokens(name, schema))), None)


def screened(subject: Subject) -> dict[str, Any]:
    """The subject as the result reports it (the spec's `details.subject`)."""
    return {k: getattr(subject, k) for k in SCREENED_KEYS}


@dataclass
class ScreeningResult:
    results: list[dict[str, Any]]
    subject: dict[str, Any]
    config: dict[str, Any]
    list_versions: dict[str, str]
    engine_version: str = ENGINE_VERSION
    candidates: int = 0
    # The best records below the threshold (from `near_miss_floor`), when `screen` was asked for them; else None.
    near_misses: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Hit:
    record_idx: int
    name_id: int
    query_name: str
    schema: str
    alignment: Alignment
    name_score: float
    qualifiers: list[dict[str, Any]] = field(default_factory=list)
    score: float = 0.0


def screen(index: ScreeningIndex, subject: Subject | dict[str, Any],
           config: ScreeningConfig | dict[str, Any] | None = None, *, near_misses: int = 0) -> ScreeningResult:
    """Screen one subject against the index. Same subject, same lists, same config: same output.
    `near_misses`: also return the best that many records scoring from `near_miss_floor(threshold)` up to the
    threshold (`ScreeningResult.near_misses`; None when not asked)."""
    if isinstance(subject, dict):
        subject = Subject.from_dict(subject)
    if not isinstance(config, ScreeningConfig):
        config = ScreeningConfig.from_dict(config)
    floor = near_miss_floor(config.similarity_threshold) if near_misses > 0 else None
    hits, considered = _hits(index, subject, config, floor, near_miss_name_floor(config.similarity_threshold))
    below: list[_Hit] = []
    if floor is not None:
        tau = config.similarity_threshold / 100.0
        below = [h for h in hits if h.score + 1e-9 < tau][:near_misses]
        hits = [h for h in hits if h.score + 1e-9 >= tau]
    hits = hits[:config.max_results]
    fingerprint = _fingerprint(subject, config) if hits or below else ""
    results = [_result(index, hit, subject, config, fingerprint) for hit in hits]
    versions = {name: v for name, v in index.list_versions.items() if name not in config.hidden_lists}
    return ScreeningResult(results=results, subject=screened(subject), config=config.to_dict(),
                           list_versions=versions, candidates=considered,
                           near_misses=[_result(index, hit, subject, config, fingerprint) for hit in below]
                           if floor is not None else None)


def matching_ids(index: ScreeningIndex, subject: Subject, config: ScreeningConfig | dict[str, Any]) -> list[str]:
    """The ids of every record the subject matches, best first: a screening without its result documents
    (for look-ups that need only which records, however many)."""
    if not isinstance(config, ScreeningConfig):
        config = ScreeningConfig.from_dict(config)
    return [index.records[hit.record_idx].record.id for hit in _hits(index, subject, config)[0]]


def _hits(index: ScreeningIndex, subject: Subject, config: ScreeningConfig, floor: float | None = None,
          name_floor: float | None = None) -> tuple[list[_Hit], int]:
    """The records matching the subject, best first (all of them), and how many candidate names were weighed.
    `floor` (below the threshold): the records scoring from it are returned too (near misses), those whose name
    scores at least `name_floor`. The candidate bounds are sound, so searching down to a lower score finds a
    superset of names, and each record keeps the same best name: the records at or above the threshold are the
    same with or without a floor."""
    tau = config.similarity_threshold / 100.0  # the lowest final score returned
    tau_c = tau  # names are weighed while their name score (+ the largest bonus) may reach it
    if floor is not None and floor < tau:
        tau = floor
        tau_c = min(tau_c, max(tau, name_floor + MAX_BONUS)) if name_floor is not None else tau
    search_type = config.search_type
    eligible = _eligibility(index, config)
    q_dates = _subject_dates(subject.dob)
    q_countries = {c for c in (country_code(subject.nationality), country_code(subject.address_country)) if c}
    q_gender = _gender(subject.gender)

    best: dict[int, _Hit] = {}
    considered = 0
    initials = initials_mode(search_type)
    for name, schema in query_names(subject):
        q_tokens = name_tokens(name, schema)
        allowed_schemas = SCHEMA_GROUPS.get(schema, SCHEMA_GROUPS["LegalEntity"])
        left = query_leftovers(index, q_tokens)
        candidates, sims, generated = _candidates(index, q_tokens, search_type, max(0.0, tau_c - MAX_BONUS),
                                                  None if name.isascii() else unit_scripts(name, q_tokens), left)
        considered += generated
        if not candidates:
            continue
        rev = reverse_matches(q_tokens, sims)
        # most promising names first, so that a party's weaker aliases can be skipped
        for name_id in sorted(candidates, key=lambda n: (-candidates[n], n)):
            rec_idx = index.name_record[name_id]
            current = best.get(rec_idx)
            if current is not None and current.name_score > candidates[name_id] + 1e-9:
                continue
            if index.record_schema(rec_idx) not in allowed_schemas or not eligible(rec_idx):
                continue
            factor = KIND_FACTOR.get(index.name_kind[name_id], 1.0)
            # what the name must score to be kept: the threshold less the largest bonus, and the record's best name
            need = max(tau_c - MAX_BONUS, current.name_score if current is not None else 0.0) / factor
            alignment = align(q_tokens, index.name_tokens[name_id], rev, initials, index.token_weight,
                              schema == PERSON, left, need)
            if not alignment.pairs:
                continue
            score = alignment.score * factor
            if score + MAX_BONUS < tau_c:
                continue
            if search_type == "narrow_search" and alignment.query_leftover:
                continue  # narrow: every query part must align
            if current is None or (score, -name_id) > (current.name_score, -current.name_id):
                best[rec_idx] = _Hit(rec_idx, name_id, name, schema, alignment, score)

    hits = []
    for hit in best.values():
        rec = index.records[hit.record_idx]
        adjustment, qualifiers, excluded = _qualify(rec, q_dates, q_countries, q_gender, search_type,
                                                    subject)
        if excluded:
            continue
        hit.qualifiers = qualifiers
        hit.score = round(min(1.0, max(0.0, hit.name_score + adjustment)), 4)
        if hit.score + 1e-9 >= tau:
            hits.append(hit)
    hits.sort(key=lambda h: (-h.score, index.records[h.record_idx].record.id))
    return hits, considered


# --- candidates -------------------------------------------------------------------------------------------

def query_leftovers(index: ScreeningIndex, q_tokens: tuple[str, ...]) -> list[float]:
    """The least weight each query part left over weighs in a name score (`least_query_leftover` times its weight):
    what the candidate bounds and `align`'s early exit assume of the parts a name leaves over."""
    weight = index.token_weight
    return [least_query_leftover(q_tokens, k) * weight(t) for k, t in enumerate(q_tokens)]


def _candidates(index: ScreeningIndex, q_tokens: tuple[str, ...], search_type: str,
                tau_name: float, script: dict[str, str] | None = None, left: list[float] | None = None
                ) -> tuple[dict[int, float], dict[str, dict[str, float]], int]:
    """{id of a listed name that may reach `tau_name`: upper bound of its name score}, the part matches of
    every query unit, and how many names the parts' bound let through (before `_viable` dropped those whose
    pairs are too weak: the figure `ScreeningResult.candidates` reports). `script`: the script words of the
    query's units written in an abjad (`vowelling.unit_scripts`; engine 3.3.0)."""
    if not q_tokens:
        return {}, {}, 0
    q_units = units(q_tokens)
    broad = search_type == "broad_search"
    script = script or {}
    matched = {u: index.unit_match(u, search_type, i != j, script.get(u, "")) for u, i, j in q_units}
    if search_type != "narrow_search":
        for u, i, j in q_units:
            if i != j or len(u) != 2:
                continue
            # "le"/"el": two-letter parts swapped, and "al"/"el", the Arabic article (the index finds only
            # exact ones)
            for other in (u[::-1], *(ARTICLES - {u} if u in ARTICLES else ())):
                if other != u and other not in matched[u].sims:
                    k = index.part_id(other)
                    if k >= 0:
                        e = matched[u]
                        matched[u] = UnitMatch({**e.sims, other: part_similarity(u, other, search_type)},
                                             e.ids + (k,), max(e.heaviest, index.token_weight(other)))
        # a Chinese name (every part romanized syllables) in the other romanization (Wade-Giles, pinyin:
        # "hsiaoping" / "xiaoping"), looked up as written (engine 3.0.0)
        chinese = all(map(syllabic, q_tokens))
        for u, i, j in (q_units if chinese else ()):
            for other in other_romanizations(u):
                if other not in matched[u].sims:
                    k = index.part_id(other)
                    if k >= 0:
                        e = matched[u]
                        matched[u] = UnitMatch({**e.sims, other: part_similarity(u, other, search_type)},
                                             e.ids + (k,), max(e.heaviest, index.token_weight(other)))
    sims = {u: e.sims for u, e in matched.items()}
    heaviest = {u: e.heaviest for u, e in matched.items()}
    # names aligning with query token k (alone, or written together with a neighbour): sorted id arrays
    per_token: list[np.ndarray] = []
    for k, token in enumerate(q_tokens):
        names = index.names_array(token, search_type, False, script.get(token, ""))
        extra = [index.names_array(u, search_type, True, script.get(u, "")) for u, i, j in q_units
                 if i != j and (i == k or j == k) and matched[u].ids]
        if broad and len(token) > 1 and index.has_part(token[0]):
            extra.append(index.names_array(token[0], "narrow_search"))  # broad: "John" meets the initial "J"
        per_token.append(sorted_union([names, *extra]) if extra else names)
    # broad and medium: a query initial ("J") may meet any listed part starting with its letter: it counts as
    # aligned in every name's bound, and candidates come from the other parts (when there are any)
    wild = [search_type != "narrow_search" and len(t) == 1 for t in q_tokens] \
        if not all(len(t) == 1 for t in q_tokens) else \
        [False] * len(q_tokens)
    # Upper bound of a name's score from the query parts it can align with (set A): each aligned part
    # weighs at most `hi` (the heaviest listed part it may meet), each query part left over weighs at least
    # `left` (its own weight, less when it is explained, a middle name, a leading "Muhammad" or a father's
    # name after "bin"), and listed parts left over only lower it: score <= hi(A) / (hi(A) + left(not A)).
    weight = index.token_weight
    own = [weight(t) for t in q_tokens]
    if left is None:
        left = query_leftovers(index, q_tokens)
    hi = []
    for k, token in enumerate(q_tokens):
        found = [heaviest[u] for u, i, j in q_units if i <= k <= j and sims[u]]
        if broad and len(token) > 1 and index.has_part(token[0]):
            found.append(weight(token[0]))
        hi.append(max(found, default=own[k]) if not wild[k] else own[k])
    total_left = sum(left)

    def bound(aligned_hi: float, aligned_left: float) -> float:
        rest = total_left - aligned_left
        return aligned_hi / (aligned_hi + rest) if aligned_hi + rest > 0 else 0.0

    # Candidates come from the rarest parts, read until the parts left could not reach tau on their own.
    order = sorted((k for k in range(len(q_tokens)) if not wild[k]), key=lambda k: (len(per_token[k]), k))
    rem_hi, rem_left = sum(hi), total_left
    chosen: list[int] = []
    for k in order:
        if chosen and bound(rem_hi, rem_left) < tau_name:
            break
        chosen.append(k)
        rem_hi -= hi[k]
        rem_left -= left[k]
    pool = sorted_union([per_token[k] for k in chosen])
    if not len(pool):
        return {}, sims, 0  # (most screenings: no listed name holds a part near the rarest ones)
    if tau_name <= 0 or len(q_tokens) == 1:
        ids, bounds = pool, np.ones(len(pool))
    else:
        # The bound of every pooled name at once: the same sums in the same order as name by name (adding
        # 0.0 where a name lacks a part leaves a float sum unchanged), so the same bounds to the last bit.
        a_hi = np.zeros(len(pool))
        a_left = np.zeros(len(pool))
        for names, h, o, w in zip(per_token, hi, left, wild):
            if w:
                a_hi += h
                a_left += o
                continue
            if not len(names):
                continue
            pos = np.searchsorted(names, pool)
            pos[pos == len(names)] = 0
            member = names[pos] == pool
            np.add(a_hi, h, out=a_hi, where=member)
            np.add(a_left, o, out=a_left, where=member)
        den = a_hi + (total_left - a_left)
        b = np.zeros(len(pool))
        np.divide(a_hi, den, out=b, where=den > 0)
        keep = ~(b + 1e-9 < tau_name)
        ids, bounds = pool[keep], np.minimum(b[keep], 1.0)
    generated = len(ids)
    if tau_name > 0 and len(ids) > VIABLE_MIN_NAMES:  # below, aligning them all costs less than the filter
        viable = _viable(index, q_tokens, q_units, matched, left, ids, tau_name, initials_mode(search_type))
        ids, bounds = ids[viable], bounds[viable]
    return dict(zip(ids.tolist(), bounds.tolist())), sims, generated


_R_INITIAL = INITIAL_SIM ** SIM_EXPONENT
VIABLE_MIN_NAMES = 48  # fewer candidate names are aligned without `_viable` (its numpy calls cost more)
_MAX_KIND_FACTOR = max(1.0, *KIND_FACTOR.values())


def _viable(index: ScreeningIndex, q_tokens: tuple[str, ...], q_units, found: dict[str, UnitMatch],
            left: list[float], ids: np.ndarray, tau_name: float, initials: bool | str) -> np.ndarray:
    """Which of the names `ids` (sorted) might still reach `tau_name`, from the similarity of the best pair
    each can form for each query part (a mask). Dropping the others changes no result: such a name, once
    aligned, would score below the threshold and be passed over.

    Why it is sound. `align` scores M / D: M = sum of w_p * r_p over its pairs (r_p = sim_p ** SIM_EXPONENT,
    or sim_p for a query of one part against a listed name of one part: it scores as its pair; w_p: token
    weights in 0.25..1, the max of two for a joined listed unit met by one query part, the sum of two for two
    parts against two, the min of two for an initial), D = sum of w_p + the weights of the query parts left
    over (`left`: at least `least_query_leftover` of their own: less when explained, a middle name or
    explained by its place) + those of the listed parts left over (>= 0), then times a kind factor <= 1. The
    score reaches t only if M - t * D >= 0. Split that sum by query part: a part left over adds at most -t * left; a
    single-part pair adds w * (r - t) <= h(r) = (r - t if r >= t else (r - t) / 4), h growing with r; a pair
    of a joined query unit (two parts) adds at most max(0, h(r)) to each of the two. So M - t * D <= sum over
    parts of g = max(-t * left, h(best single r), max(0, h(best joined r))), the best r among the
    pairs the name can form at all (the listed units it holds that `found` pairs with the query unit; broad
    search: also an initial). If that sum is below 0 the name cannot reach t.
    """
    t = (tau_name - 1e-9) / _MAX_KIND_FACTOR
    n = len(ids)
    postings_range = index.postings_range
    vals = index.postings_array
    single = np.full((len(q_tokens), n), -1.0)  # best r of a pair, -1: none
    joined = np.full((len(q_tokens), n), -1.0)
    for u, i, j in q_units:
        unit = found[u]
        if not unit.ids:
            continue
        ranges = [postings_range(k) for k in unit.ids]  # the parts' ids, in the order of their similarities
        names = np.concatenate([vals[a:b] for a, b in ranges])
        r = np.repeat(np.array([s ** SIM_EXPONENT for s in unit.sims.values()]), [b - a for a, b in ranges])
        pos = np.searchsorted(ids, names)
        pos[pos == n] = 0
        held = ids[pos] == names
        best = np.full(n, -1.0)
        np.maximum.at(best, pos[held], r[held])
        if i == j:
            np.maximum(single[i], best, out=single[i])
        else:
            np.maximum(joined[i], best, out=joined[i])
            np.maximum(joined[j], best, out=joined[j])
    if initials is True:  # broad: any part may meet an initial starting with its letter, or be one
        np.maximum(single, _R_INITIAL, out=single)
    elif initials:  # medium: a query initial may meet any listed part starting with its letter
        for k, token in enumerate(q_tokens):
            if len(token) == 1:
                np.maximum(single[k], _R_INITIAL, out=single[k])
    if len(q_tokens) == 1:
        # against a listed name of one part, a one-part query scores as its pair: r is the similarity itself
        one = index.name_part_counts(ids) == 1
        if one.any():
            single[0] = np.where(one & (single[0] > 0), np.abs(single[0]) ** (1 / SIM_EXPONENT), single[0])

    def h(r: np.ndarray) -> np.ndarray:
        return np.where(r >= t, r - t, (r - t) * 0.25)

    total = np.zeros(n)
    for k in range(len(q_tokens)):
        g = np.full(n, -t * left[k])
        np.maximum(g, np.where(single[k] >= 0, h(single[k]), -np.inf), out=g)
        np.maximum(g, np.where(joined[k] >= 0, np.maximum(h(joined[k]), 0.0), -np.inf), out=g)
        total += g
    return total >= -1e-9


def _eligibility(index: ScreeningIndex, config: ScreeningConfig):
    lists, hidden = set(config.lists), set(config.hidden_lists)
    pep_countries = {c.lower() for c in config.pep_countries}
    sanction_countries = {c.lower() for c in config.sanction_countries}
    cache: dict[int, bool] = {}

    def eligible(rec_idx: int) -> bool:
        found = cache.get(rec_idx)
        if found is not None:
            return found
        list_name, is_pep, is_sanctioned, sanctioned_by, pep_of = index.record_filters(rec_idx)
        if list_name in hidden:
            ok = False
        elif lists:
            ok = list_name in lists
        else:
            ok = False
            if is_sanctioned:
                ok = (not sanction_countries or not sanctioned_by or "un" in sanctioned_by
                      or bool(sanctioned_by & sanction_countries))
            if not ok and is_pep:
                ok = not pep_countries or not pep_of or bool(pep_of & pep_countries)
        cache[rec_idx] = ok
        return ok

    return eligible


# --- qualifiers -------------------------------------------------------------------------------------------

@lru_cache(maxsize=65536)
def _subject_dates(dob: str | None) -> tuple[DateValue, ...]:
    if not dob:
        return ()
    iso = parse_date(dob)
    value = DateValue.parse(iso) if iso else None
    return (value,) if value else ()


def _gender(value: str | None) -> str | None:
    v = (value or "").strip().lower()
    return {"m": "male", "male": "male", "f": "female", "female": "female"}.get(v)


def _qualify(rec, q_dates, q_countries, q_gender, search_type, subject) -> tuple[float, list[dict], bool]:
    adjustment = 0.0
    out: list[dict[str, Any]] = []
    excluded = False
    record = rec.record.full()
    if q_dates and rec.dates and record.schema == "Person":
        outcome, _ = min((compare_dates(q, r) for q in q_dates for r in rec.dates),
                         key=lambda o: (DOB_RANK[o[0]], o[1]))
        if outcome == "exact":
            effect = DOB_BONUS_EXACT
        elif outcome == "year":
            effect = DOB_BONUS_YEAR
        elif outcome == "day":
            effect = -DOB_PENALTY_DAY
        elif outcome == "near":
            effect = -DOB_PENALTY_DAY if search_type == "broad_search" else -DOB_PENALTY_NEAR
        else:
            effect = -DOB_PENALTY_CONFLICT
        if search_type == "narrow_search" and outcome in ("near", "conflict"):
            excluded = True
        adjustment += effect
        out.append({"qualifier": "date_of_birth", "query": subject.dob, "listed": list(record.birth_dates),
                    "outcome": outcome, "effect": round(effect, 4)})
    if q_countries and rec.countries:
        if q_countries & rec.countries:
            effect, outcome = COUNTRY_BONUS, "match"
        else:
            effect, outcome = -COUNTRY_PENALTY, "conflict"
            if search_type == "narrow_search":
                excluded = True
        adjustment += effect
        out.append({"qualifier": "country", "query": sorted(c.upper() for c in q_countries),
                    "listed": sorted(c.upper() for c in rec.countries), "outcome": outcome,
                    "effect": round(effect, 4)})
    if q_gender and record.gender in ("male", "female"):
        if q_gender != record.gender:
            adjustment -= GENDER_PENALTY
            if search_type == "narrow_search":
                excluded = True
            out.append({"qualifier": "gender", "query": q_gender, "listed": record.gender, "outcome": "conflict",
                        "effect": -GENDER_PENALTY})
        else:
            out.append({"qualifier": "gender", "query": q_gender, "listed": record.gender, "outcome": "match",
                        "effect": 0.0})
    return adjustment, out, excluded


# --- results ----------------------------------------------------------------------------------------------

def _fingerprint(subject: Subject, config: ScreeningConfig) -> str:
    raw = repr((sorted(screened(subject).items()), subject.gender, subject.nationality, config.to_dict()))
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def _result(index: ScreeningIndex, hit: _Hit, subject: Subject, config: ScreeningConfig,
            fingerprint: str) -> dict[str, Any]:
    rec = index.records[hit.record_idx]
    record = rec.record.full()
    info = index.lists[rec.list_name]
    props: dict[str, list[str]] = {k: list(record.properties.get(k, [])) for k in PROPERTY_KEYS}
    props["aliases"] = [n for n in record.all_names() if n != record.caption]
    if record.gender and not props["gender"]:
        props["gender"] = [record.gender]
    if not config.extended_result:
        props = {k: props[k] for k in SHORT_PROPERTY_KEYS}
    version = index.list_versions.get(rec.list_name)
    sanction_matches = [{**s, "list_name": rec.list_name, "list_version": version} for s in record.sanctions] \
        if rec.is_sanctioned else []
    pep_matches = [{**p, "list_name": rec.list_name, "list_version": version} for p in record.positions] \
        if rec.is_pep else []
    if rec.is_pep and not pep_matches:
        pep_matches = [{"list_name": rec.list_name, "list_version": version,
                        "country": next(iter(sorted(rec.pep_countries)), None)}]
    if rec.is_sanctioned and not sanction_matches:
        sanction_matches = [{"list_name": rec.list_name, "list_version": version, "authority": info.publisher}]
    alignment = hit.alignment
    transliterated = not hit.query_name.isascii() and not is_latin(hit.query_name)  # written in another script
    explanation = {
        "query_name": hit.query_name,
        "matched_alias": index.name_text[hit.name_id],
        "alias_kind": index.name_kind[hit.name_id],
        "name_score": round(hit.name_score, 4),
        "alias_factor": KIND_FACTOR.get(index.name_kind[hit.name_id], 1.0),
        "parts": alignment.explain([part_rule(q, m, sim, transliterated) for q, m, sim in alignment.pairs]),
        "qualifiers": hit.qualifiers,
        "search_type": config.search_type,
        "list": rec.list_name,
        "list_version": version,
    }
    return {
        "uuid": str(uuid.uuid5(RESULT_NAMESPACE, f"{fingerprint}:{rec.list_name}:{record.id}")),
        "name": record.caption,
        "matched_name": index.name_text[hit.name_id],
        "similarity": hit.score,
        "is_pep": rec.is_pep,
        "is_sanctioned": rec.is_sanctioned,
        "pep_matches": pep_matches,
        "sanction_matches": sanction_matches,
        "record": {"id": record.id, "caption": record.caption, "schema": record.schema,
                   "first_seen": record.first_seen, "last_seen": record.last_seen,
                   "last_change": record.last_change},
        "properties": props,
        "explanation": explanation,
    }
