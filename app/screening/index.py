"""The screening index: every listed name split into parts, an inverted index from parts to names, and the
variant tables that find near parts quickly. Stored as flat numpy arrays, so that a built index can be written
to a directory once and memory-mapped by every process that screens (the pages are shared between processes;
nothing is rebuilt per process).

- `postings`: part (a token, or two adjacent tokens written together) -> ids of the names holding it;
- `deletes`: every token with one letter deleted -> the tokens it came from (SymSpell's trick: two tokens
  one edit apart share a deletion, so one-edit and two-edit neighbours are found by dictionary look-ups,
  never by scanning the vocabulary);
- `sounds`: Metaphone key -> tokens.

Each of these string tables is a blob of UTF-8 strings with offsets and a hash-bucket index (crc32), so a
look-up reads a few array cells; the records themselves are stored as JSON lines and decoded on demand (the
fields the candidate loop filters on have their own columns). `ScreeningIndex(items, versions)` builds in
memory; `ScreeningIndex.build(items, versions, directory)` writes a directory; `ScreeningIndex.open(directory)`
maps one.

This module is the query API (`ScreeningIndex`: look-ups, weights, caches). The writer that builds the arrays
is `index_writer`, the string tables and caches `index_tables`, the views of records and names `index_views`.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, NamedTuple

import numpy as np

from app.screening.index_tables import ByteBoundedCache, StrTable, key_hash, memview, sorted_union
from app.screening.index_views import NameKind, NameText, NameTokens, Records
from app.screening.index_writer import ARRAYS, BLOBS, FORMAT_VERSION, MIN_DELETE_LEN, build_arrays
from app.screening.normalize import deletes1
from app.screening.records import ListInfo, ListRecord
from app.screening import vowelling
from app.screening.constants import ABJAD_SIM, COMPOUND_MIN_LEN, VOWELLED_SIM
from app.screening.similarity import abjad_key, assimilated, part_similarity, sound_keys, vowelless

# عبد, أبو as their letters transliterate; بن (engine 3.2.0: "bn lshybh", بن الشيبة, is "Binalshibh", as Latin writes
# Maghrebi and Yemeni family names made of "ben"/"bin" and a name: "Benali", "Bensalah")
ABJAD_PREFIXES = ("bd", "bw", "bn")
THEOPHORIC = "llh"  # الله
# زاده ("born of"), which Persian writes apart from the name before it and Latin joins to it ("khwnd zdh", آخوند زاده:
# "Akhundzada"; engine 3.2.0)
ZADEH = "zdh"

# Two query parts written in an abjad, written together, whose consonants are this many or more ("sdyq ml", صدیق مل:
# "sdqml") look up their consonant key, whatever the parts: Persian and Pashto compound names written apart in the
# script, together in Latin ("Siddiqmal"; engine 3.3.0). Fewer consonants meet too many names ("lyl lrr": "lr").
JOINED_MIN_CONSONANTS = 5

# A query part written in an abjad, one word in the script, of COMPOUND_MIN_LEN letters or more is also sought as
# two listed parts written together (`ScreeningIndex._compounds`; engine 3.3.0), each half this long at least, from
# the listed parts this near each half.
COMPOUND_MIN_HALF = 3
COMPOUND_NEAR = 6

DEFAULT_CACHE_BYTES = 16 * 1024 * 1024  # per cache (matches, postings, records), approximate


@dataclass
class IndexStats:
    records: int = 0
    names: int = 0
    vocabulary: int = 0
    postings: int = 0
    deletes: int = 0
    build_seconds: float = 0.0
    bytes: int = 0  # on disk (0 for an index built in memory)
    lists: dict[str, int] = field(default_factory=dict)


class ScreeningIndex:
    """Built from (ListInfo, ListRecord) pairs, or opened from a directory; immutable afterwards (safe to share
    between threads; its arrays are shared between processes when opened from disk)."""

    def __init__(self, items: Iterable[tuple[ListInfo, ListRecord]] | None = None,
                 list_versions: dict[str, str] | None = None, *, cache_bytes: int = DEFAULT_CACHE_BYTES,
                 _arrays: dict[str, Any] | None = None, _meta: dict[str, Any] | None = None):
        if _arrays is None:
            _arrays, _meta = build_arrays(items or (), list_versions or {}, None, ScreeningIndex)
        self._attach(_arrays, _meta, cache_bytes)

    @classmethod
    def build(cls, items: Iterable[tuple[ListInfo, ListRecord]], list_versions: dict[str, str],
              directory: str | Path, **kwargs) -> "ScreeningIndex":
        """Build into `directory` (which must not exist yet, or be empty) and open the result."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        build_arrays(items, list_versions, directory, ScreeningIndex)
        return cls.open(directory, **kwargs)

    @classmethod
    def write(cls, items: Iterable[tuple[ListInfo, ListRecord]], list_versions: dict[str, str],
              directory: str | Path) -> dict[str, Any]:
        """Build into `directory` (created; every file fsynced) without opening it; returns its stats."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        return build_arrays(items, list_versions, directory, ScreeningIndex)[1]["stats"]

    @classmethod
    def open(cls, directory: str | Path, *, cache_bytes: int = DEFAULT_CACHE_BYTES) -> "ScreeningIndex":
        """Memory-map a built directory (read-only; nothing is copied into the process)."""
        directory = Path(directory)
        meta = json.loads((directory / "meta.json").read_text())
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(f"{directory}: index format {meta.get('format')}, expected {FORMAT_VERSION}")
        arrays: dict[str, Any] = {name: np.load(directory / f"{name}.npy", mmap_mode="r") for name in ARRAYS}
        for name in BLOBS:
            path = directory / name
            arrays[name] = np.memmap(path, dtype=np.uint8, mode="r") if path.stat().st_size else np.zeros(0, np.uint8)
        index = cls(_arrays=arrays, _meta=meta, cache_bytes=cache_bytes)
        index.directory = directory
        return index

    def _attach(self, a: dict[str, Any], meta: dict[str, Any], cache_bytes: int) -> None:
        self.directory: Path | None = None
        self._arrays = a  # keeps the maps alive
        self.list_versions: dict[str, str] = dict(sorted(meta["list_versions"].items()))
        self.lists: dict[str, ListInfo] = {l["name"]: ListInfo(**l) for l in meta["lists"]}
        self._list_names: list[str] = [l["name"] for l in meta["lists"]]
        self._schemas: list[str] = meta["schemas"]
        self._country_sets: list[frozenset[str]] = [frozenset(s) for s in meta["country_sets"]]
        self._n_records = len(a["rec_list"])
        self._n_names = len(a["name_record"])
        self._rec_offs = memview(a["rec_offs"])
        self._rec_list = memview(a["rec_list"])
        self._rec_flags = memview(a["rec_flags"])
        self._rec_schema = memview(a["rec_schema"])
        self._rec_sanc = memview(a["rec_sanc"])
        self._rec_pep = memview(a["rec_pep"])
        self._records_blob = memview(a["records.jsonl"])
        self._names_blob = memview(a["names.txt"])
        self._name_tok_offs = memview(a["name_tok_offs"])
        self._name_tok_offs_array = a["name_tok_offs"]  # the same offsets as numpy, for vectors of names
        self._name_tok = memview(a["name_tok"])
        self._name_text_offs = memview(a["name_text_offs"])
        self._name_kind = memview(a["name_kind"])
        self._postings = StrTable(*(a[f"p_{s}"] for s in ("blob", "offs", "bstart", "border", "voffs", "vals")))
        self._deletes = StrTable(*(a[f"d_{s}"] for s in ("blob", "offs", "bstart", "border", "voffs", "vals")))
        self._sounds = StrTable(*(a[f"s_{s}"] for s in ("blob", "offs", "bstart", "border", "voffs", "vals")))
        # near parts computed at build time: the part ids that have them (sorted), and CSR lists of the near
        # parts' ids and similarities, in the order `unit_match` found them
        self._near_keys = np.asarray(a["n_keys"])
        self._near_offs = memview(a["n_offs"])
        self._near_ids = memview(a["n_ids"])
        self._near_sims = memview(a["n_sims"])
        # the public surface the engine reads
        self.records = Records(self)
        self.name_record = memview(a["name_record"])
        self.name_length = memview(a["name_length"])
        self.name_tokens = NameTokens(self)
        self.name_text = NameText(self)
        self.name_kind = NameKind(self)
        self._match_cache = ByteBoundedCache(cache_bytes)
        self._posting_cache = ByteBoundedCache(cache_bytes)
        self._record_cache = ByteBoundedCache(cache_bytes)
        # part texts and weights by part: plain dicts emptied when full (~100 bytes an entry)
        self._part_texts: dict[int, str] = {}
        self._weights: dict[str, float] = {}
        self._part_texts_max = max(16, cache_bytes // 200)
        self.stats = IndexStats(**meta["stats"])

    def record_schema(self, i: int) -> str:
        """The schema of record `i` (a column: nothing decoded)."""
        return self._schemas[self._rec_schema[i]]

    def record_filters(self, i: int) -> tuple[str, bool, bool, frozenset[str], frozenset[str]]:
        """What the eligibility filters read of record `i`, from columns: its list, whether it is a PEP and
        whether sanctioned, the sanctioning jurisdictions ("un": all) and the PEP position countries."""
        flags = self._rec_flags[i]
        return (self._list_names[self._rec_list[i]], bool(flags & 1), bool(flags & 2),
                self._country_sets[self._rec_sanc[i]], self._country_sets[self._rec_pep[i]])

    def _decode_record(self, i: int) -> ListRecord:
        raw = bytes(self._records_blob[self._rec_offs[i]:self._rec_offs[i + 1]])
        d = json.loads(raw)
        return ListRecord.from_data(id=d["id"], schema=d["schema"], caption=d["caption"], data=d["data"],
                                    first_seen=d.get("first_seen"), last_seen=d.get("last_seen"),
                                    last_change=d.get("last_change"))

    # -- look-ups -------------------------------------------------------------------------------------

    def _has(self, part: str) -> bool:
        return self._postings.find(part) >= 0

    def has_part(self, part: str) -> bool:
        """Whether some listed name holds this part (a token, or two tokens written together)."""
        return self._has(part)

    def name_part_counts(self, name_ids: np.ndarray) -> np.ndarray:
        """How many parts each of these names has."""
        offs = self._name_tok_offs_array
        return offs[name_ids + 1] - offs[name_ids]

    def part_text(self, k: int) -> str:
        """The text of indexed part `k` (an id of the postings table; cached: common parts recur)."""
        found = self._part_texts.get(k)
        if found is None:
            found = self._postings.string(k)
            if len(self._part_texts) >= self._part_texts_max:
                self._part_texts.clear()
            self._part_texts[k] = found
        return found

    def _near(self, table: StrTable, k: int, into: dict[str, int]) -> None:
        """Add the parts filed under key `k` of a variant table (deletions, sounds) to `into` (text -> id)."""
        texts = self._part_texts
        for t in table.values(k):
            text = texts.get(t)
            into[text if text is not None else self.part_text(t)] = t

    def _near_deletion(self, raw: bytes, into: dict[str, int]) -> None:
        """Add the listed parts a deletion of a query unit (encoded: `_deletions`) leads to: the part itself (the
        unit less one letter) and the parts filed under it in the deletion table (one substitution or swap). One
        hash serves both tables."""
        h = key_hash(raw)
        k = self._postings.find_hashed(raw, h)
        if k >= 0:
            into[raw.decode()] = k
        k = self._deletes.find_hashed(raw, h)
        if k >= 0:
            self._near(self._deletes, k, into)

    def unit_match(self, unit: str, search_type: str, joined: bool = False, script: str = "") -> "UnitMatch":
        """The indexed parts that may align with a query unit, with their similarity, their part ids and the
        heaviest of their weights (cached per process).

        `joined`: the unit is two query tokens written together. `script` (engine 3.3.0): the query word in Arabic,
        Persian or Hebrew script that the unit transliterates (`vowelling.unit_scripts`: `_script_match` reads it),
        or the two words of a joined unit (they look up their consonant key when it is long enough:
        JOINED_MIN_CONSONANTS)."""
        if script and not joined:
            return self._script_match(unit, search_type, script)
        key = (unit, search_type, joined, True) if script else (unit, search_type, joined)
        found = self._match_cache.get(key)
        if found is not None:
            return found
        sims: dict[str, float] = {}
        ids: list[int] = []
        postings, deletes, sounds = self._postings, self._deletes, self._sounds
        k = postings.find(unit)
        if k >= 0:
            if search_type == "medium_search" and not joined:
                found = self._built_near(k)
                if found is not None:
                    return self._put_match(key, found)
            sims[unit] = 1.0
            ids.append(k)
        if search_type != "narrow_search":
            near: dict[str, int] = {}  # part -> its id
            if joined:
                # two query tokens written together: only the listed parts it equals, or equals less one
                # letter, are sought (typos inside joined names are found token by token)
                for d in _deletions(unit):
                    k = postings.find_raw(d)
                    if k >= 0:
                        near[d.decode()] = k
            elif len(unit) >= MIN_DELETE_LEN:
                k = deletes.find(unit)
                if k >= 0:
                    self._near(deletes, k, near)                     # listed part = unit + one letter
                first = _deletions(unit)
                for d in first:
                    self._near_deletion(d, near)
                if search_type == "broad_search" and len(unit) >= 5:
                    for d2 in {d2 for d in first for d2 in _deletions(d.decode())}:
                        self._near_deletion(d2, near)
            if not joined:
                for key_sound in sound_keys(unit, query=True):
                    k = sounds.find(key_sound)
                    if k >= 0:
                        self._near(sounds, k, near)
            elif (unit[:2] in ABJAD_PREFIXES or THEOPHORIC in (unit[:3], unit[-3:]) or unit[-3:] == ZADEH
                  or assimilated(unit) or (script and len(abjad_key(unit)) >= JOINED_MIN_CONSONANTS)) \
                    and unit.isalpha() and vowelless(unit):
                # "Abd" or "Abu" in an abjad and the next part, written together ("bd lmnn", عبد المنان): the
                # listed names with "Abd" or "Abu" written with the next part ("abdul manan", "abdulmanan";
                # engine 3.0.0), and (3.1.0) a name and "Allah" ("hdyt llh", هدايت الله: "Hidayatullah"; "llh
                # dd": "Allahdad"), a name and "al-Din" ("shms ldyn": "Shamsuddin"); (3.2.0) "bin" and a name ("bn
                # lshybh": "Binalshibh"), a name and "-zadeh" ("khwnd zdh": "Akhundzada"). Not any two parts: their
                # consonants ("lyl lrr": "lr") meet too many names.
                for key_sound in sound_keys(unit, query=True):
                    if key_sound[:1] in ("&", "$"):
                        k = sounds.find(key_sound)
                        if k >= 0:
                            self._near(sounds, k, near)
            for candidate, k in near.items():
                if candidate not in sims:
                    s = part_similarity(unit, candidate, search_type)
                    if s > 0.0:
                        sims[candidate] = s
                        ids.append(k)
        return self._cached_match(key, sims, ids)

    def _script_match(self, unit: str, search_type: str, word: str) -> "UnitMatch":
        """`unit_match` of a part written in an abjad, with what its script word says more (engine 3.3.0; medium
        and broad search):
        - a short part (`vowelling.eligible`): the parts its script letters spell ("jn", جان: "Jan"; "dy", ضيا:
          "Zia"), found under their keys, at VOWELLED_SIM (`vowelling.similarity`);
        - a long one (`COMPOUND_MIN_LEN`): two listed parts written together that it is one word of ("khdyrhym",
          خدايرحيم: "Khudai Rahim"), as Persian script writes compound given names (`_compounds`)."""
        key = (unit, search_type, False, word)
        found = self._match_cache.get(key)
        if found is not None:
            return found
        base = self.unit_match(unit, search_type)
        if search_type == "narrow_search":
            return self._put_match(key, base)  # (the script word read no more: cached under its key as well)
        sims = dict(base.sims)
        ids = list(base.ids)
        if vowelling.eligible(unit, word):
            spelled = vowelling.reading(word)
            if spelled is None:
                return self._put_match(key, base)
            near: dict[str, int] = {}
            sounds = self._sounds
            for key_sound in spelled.keys:
                k = sounds.find(key_sound)
                if k >= 0:
                    self._near(sounds, k, near)
            for candidate, s in sims.items():
                if s < VOWELLED_SIM:
                    sims[candidate] = max(s, vowelling.similarity(word, candidate))
            for candidate, k in near.items():
                # a part found under these keys only is one of the word's spellings, or nothing: a key of one
                # consonant ("&s") holds many short names the transliteration alone would not meet ("ysy", عيسي, is
                # "Issa", not "Sue")
                s = vowelling.similarity(word, candidate) if candidate not in sims else 0.0
                if s > 0.0:
                    sims[candidate] = max(s, part_similarity(unit, candidate, search_type))
                    ids.append(k)
        elif len(unit) >= COMPOUND_MIN_LEN and unit.isalpha() and vowelless(unit):
            for candidate, k in self._compounds(unit, search_type).items():
                if candidate not in sims:
                    s = part_similarity(unit, candidate, search_type)
                    if s > 0.0:
                        sims[candidate] = s
                        ids.append(k)
        else:
            return self._put_match(key, base)
        return self._cached_match(key, sims, ids)

    def _matched(self, sims: dict[str, float], ids: tuple[int, ...] | list[int]) -> "UnitMatch":
        """A UnitMatch of these parts: the heaviest part is the rarest one (the weight falls as the posting list
        grows)."""
        count = self._postings.count
        return UnitMatch(sims, tuple(ids), self._weight_of_count(min(map(count, ids))) if ids else 0.0)

    def _cached_match(self, key: tuple, sims: dict[str, float], ids: list[int]) -> "UnitMatch":
        return self._put_match(key, self._matched(sims, ids))

    def _put_match(self, key: tuple, found: "UnitMatch") -> "UnitMatch":
        self._match_cache.put(key, found, 240 + 160 * len(found.ids))
        return found

    def _compounds(self, unit: str, search_type: str) -> dict[str, int]:
        """Two listed parts written together ("khudai rahim" as "khudairahim") that a query part in an abjad may
        be as one word: for each place the part may be cut in two (both halves of COMPOUND_MIN_HALF letters and
        two consonants at least), the listed parts near each half (at ABJAD_SIM at least, the COMPOUND_NEAR
        nearest), written together, when a listed name holds them so. {joined text: its part id}."""
        out: dict[str, int] = {}
        postings = self._postings
        for cut in range(COMPOUND_MIN_HALF, len(unit) - COMPOUND_MIN_HALF + 1):
            left, right = unit[:cut], unit[cut:]
            if len(abjad_key(left)) < 2 or len(abjad_key(right)) < 2:
                continue
            lefts = _nearest(self.unit_match(left, search_type).sims)
            if not lefts:
                continue
            rights = _nearest(self.unit_match(right, search_type).sims)
            for a in lefts:
                for b in rights:
                    k = postings.find(a + b)
                    if k >= 0:
                        out[a + b] = k
        return out

    def _built_near(self, k: int) -> "UnitMatch | None":
        """The medium-search match of listed part `k` as the build computed it (None: not computed)."""
        keys = self._near_keys
        i = int(keys.searchsorted(k))
        if i == len(keys) or keys[i] != k:
            return None
        a, b = self._near_offs[i], self._near_offs[i + 1]
        ids = tuple(self._near_ids[a:b])
        text = self.part_text
        sims = {text(t): s for t, s in zip(ids, self._near_sims[a:b])}
        return self._matched(sims, ids)

    def names_array(self, unit: str, search_type: str, joined: bool = False, script: str = "") -> np.ndarray:
        """Ids of the names holding a part that may align with the unit: a sorted numpy array of distinct ids
        (int32; cached: common parts recur). `script`: as `unit_match`'s.

        What the engine's candidate step reads: a common part's ids stay one compact array (4 bytes an id),
        never a Python set of ints, and the per-name bounds are computed over such arrays at once."""
        key = (unit, search_type, joined, script) if script else (unit, search_type, joined)
        found = self._posting_cache.get(key)
        if found is not None:
            return found
        ids = self.unit_match(unit, search_type, joined, script).ids
        table = self._postings
        vals = table.vals_array
        if not ids:
            found = np.zeros(0, dtype=np.int32)
        elif len(ids) == 1:  # one part's postings: ascending and distinct already (names numbered in order)
            a, b = table.value_range(ids[0])
            found = vals[a:b]
        else:
            found = sorted_union([vals[a:b] for a, b in map(table.value_range, ids)])
        self._posting_cache.put(key, found, 200 + (0 if len(ids) == 1 else 4 * len(found)))
        return found

    def part_id(self, part: str) -> int:
        """The id of an indexed part (-1: no listed name holds it)."""
        return self._postings.find(part)

    def postings_range(self, k: int) -> tuple[int, int]:
        """Where the ids of the names holding part `k` lie in `postings_array`."""
        return self._postings.value_range(k)

    @property
    def postings_array(self) -> np.ndarray:
        return self._postings.vals_array

    def token_frequency(self, token: str) -> int:
        """How many listed names hold this part (the length of its posting list; 0 if unknown)."""
        k = self._postings.find(token)
        return self._postings.count(k) if k >= 0 else 0

    def clear_caches(self) -> None:
        self._part_texts.clear()
        self._weights.clear()
        self._match_cache.clear()
        self._posting_cache.clear()
        self._record_cache.clear()

    def cache_bytes(self) -> int:
        return (self._match_cache.bytes + self._posting_cache.bytes + self._record_cache.bytes
                + 100 * (len(self._part_texts) + len(self._weights)))

    def token_weight(self, token: str) -> float:
        """How much a name part says about who someone is, in 0.25..1, from its rarity among the listed
        names (inverse document frequency): a part most names share weighs little, a part of one name (or
        of none: a query part the lists do not know) weighs 1."""
        found = self._weights.get(token)
        if found is None:
            found = self._weight_of_count(self.token_frequency(token))
            if len(self._weights) >= self._part_texts_max:
                self._weights.clear()
            self._weights[token] = found
        return found

    def _weight_of_count(self, df: int) -> float:
        idf = math.log((self._n_names + 1) / (df + 1))
        return 0.25 + 0.75 * min(1.0, idf / 8.0)


def _deletions(unit: str) -> set[bytes]:
    """The unit less any one letter (`deletes1`), encoded as the string tables' keys are: cut from the encoded unit
    when it is ASCII (a look-up then encodes nothing, and decodes only what it finds)."""
    if unit.isascii():
        raw = unit.encode()
        return {raw[:i] + raw[i + 1:] for i in range(len(raw))}
    return {d.encode() for d in deletes1(unit)}


def _nearest(sims: dict[str, float]) -> list[str]:
    """The COMPOUND_NEAR listed parts nearest a half of a query part (`_compounds`), at ABJAD_SIM at least."""
    near = sorted((-s, t) for t, s in sims.items() if s >= ABJAD_SIM)
    return [t for _, t in near[:COMPOUND_NEAR]]


class UnitMatch(NamedTuple):
    """What a query unit may align with: {listed part: similarity}, the parts' ids (in the same order) and
    the largest weight among them (0.0: none). A named tuple: one is made per query part not cached yet."""

    sims: dict[str, float]
    ids: tuple[int, ...]
    heaviest: float

