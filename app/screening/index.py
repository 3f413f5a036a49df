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
"""
from __future__ import annotations

import json
import math
import os
import threading
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, NamedTuple

import numpy as np

from app.screening.matching import DateValue, part_similarity, sound_keys
from app.screening.normalize import country_code, deletes1, name_tokens
from app.screening.records import NAME_KINDS, ListInfo, ListRecord

MIN_DELETE_LEN = 3  # tokens shorter than this are only found exactly or by sound
# Bump when the on-disk layout or the tokenization changes: old directories are rebuilt.
# 2: a legal form with a one-letter typo is a legal form, "&" is "and" (engine 2.1.0).
# 3: spelling keys beside Metaphone keys; legal forms in words and organization words read as one (2.2.0).
# 4: organization words and legal forms with a typo, more legal forms; abjad keys of the article-less part (2.3.0);
#    the medium-search near parts of listed parts held by 2+ names, computed at build (n_* arrays).
# 5: legal forms written out in Spanish, Portuguese, French, Italian, German and Dutch; "C.A.", "S.C.S.",
#    "Pvt", "Private"; Korean eo/eu folded in the spelling keys of romanized syllables; an airplane's name is
#    one token (2.4.0).
# 6: organization words in more languages (agricola, maquinaria, fundacion, ...), "joint venture" a legal form, a
#    web address read as the name, the Belarusian "-enka" in the spelling keys, a consonant before a short
#    part another name in the precomputed near parts (2.5.0).
FORMAT_VERSION = 6
DEFAULT_CACHE_BYTES = 16 * 1024 * 1024  # per cache (matches, postings, records), approximate
# Listed parts of this many letters held by this many names or more get their medium-search near parts
# computed at build time (a query holding them reads them instead of searching the variant tables).
NEAR_MIN_LEN = 3
NEAR_MIN_NAMES = 2
_ARRAYS = ("rec_offs", "rec_list", "rec_flags", "rec_schema", "rec_sanc", "rec_pep",
           "name_record", "name_length", "name_kind", "name_tok_offs", "name_tok", "name_text_offs",
           "p_blob", "p_offs", "p_bstart", "p_border", "p_voffs", "p_vals",
           "d_blob", "d_offs", "d_bstart", "d_border", "d_voffs", "d_vals",
           "s_blob", "s_offs", "s_bstart", "s_border", "s_voffs", "s_vals",
           "n_keys", "n_offs", "n_ids", "n_sims")
_BLOBS = ("records.jsonl", "names.txt")


def sorted_union(arrays: list[np.ndarray]) -> np.ndarray:
    """The distinct values of sorted integer arrays, ascending. Faster than `np.unique` (which hashes): a
    stable sort of sorted runs merges them (timsort), and duplicates are neighbours afterwards."""
    if len(arrays) == 1:
        return arrays[0]
    merged = np.sort(np.concatenate(arrays), kind="stable")
    if len(merged) < 2:
        return merged
    first = np.empty(len(merged), dtype=bool)
    first[0] = True
    np.not_equal(merged[1:], merged[:-1], out=first[1:])
    return merged[first]


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
    bytes: int = 0  # on disk (0 for an index built in memory)
    lists: dict[str, int] = field(default_factory=dict)


# --- bounded caches ---------------------------------------------------------------------------------------

class ByteBoundedCache:
    """A map whose entries carry an approximate size, bounded by `max_bytes`: two generations of at most half
    the budget each. New entries go to the young one; a hit in the old one moves the entry to the young one;
    when the young one is full it becomes the old one and the old one is dropped (an LRU of two steps).

    A look-up is one or two `dict.get`s without a lock (atomic under the GIL): the engine looks up thousands
    of parts a second, and an `OrderedDict` behind a lock cost more than the look-up it saved. Writes take
    the lock."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self._half = max_bytes // 2
        self._young: dict[Any, tuple[Any, int]] = {}
        self._old: dict[Any, tuple[Any, int]] = {}
        self._young_bytes = 0
        self._old_bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        return self._young_bytes + self._old_bytes

    def get(self, key):
        found = self._young.get(key)
        if found is not None:
            return found[0]
        found = self._old.get(key)
        if found is None:
            return None
        self.put(key, *found)
        return found[0]

    def put(self, key, value, size: int) -> None:
        if size > self._half:
            return
        with self._lock:
            young = self._young
            old = young.get(key)
            if old is not None:
                self._young_bytes -= old[1]
            elif self._young_bytes + size > self._half:
                self._old, self._old_bytes = young, self._young_bytes
                young = self._young = {}
                self._young_bytes = 0
            young[key] = (value, size)
            self._young_bytes += size

    def clear(self) -> None:
        with self._lock:
            self._young, self._old = {}, {}
            self._young_bytes = self._old_bytes = 0

    def __len__(self) -> int:
        return len(self._young) + sum(1 for k in self._old if k not in self._young)


# --- string tables ----------------------------------------------------------------------------------------

def _hash(raw: bytes) -> int:
    return zlib.crc32(raw)


class _StrTable:
    """Strings (UTF-8 blob + offsets) found by a crc32 bucket index, each with a list of int values (CSR)."""

    def __init__(self, blob, offs, bstart, border, voffs, vals):
        self.n = len(offs) - 1
        self.mask = len(bstart) - 2
        self._blob = _mv(blob)
        self._offs = _mv(offs)
        self._bstart = _mv(bstart)
        self._border = _mv(border)
        self._voffs = _mv(voffs)
        self.vals_array = np.asarray(vals)  # a plain view: slicing a np.memmap is slow
        self._vals = _mv(vals)

    def find(self, key: str) -> int:
        raw = key.encode()
        return self.find_hashed(raw, _hash(raw))

    def find_hashed(self, raw: bytes, h: int) -> int:
        """`find` of an encoded key whose `_hash` is known (one hash for several tables)."""
        bstart = self._bstart
        b = h & self.mask
        i = bstart[b]
        end = bstart[b + 1]
        if i == end:  # an empty bucket: most look-ups of strings that are not there end here
            return -1
        offs, blob, border = self._offs, self._blob, self._border
        n = len(raw)
        while i < end:
            k = border[i]
            start = offs[k]
            if offs[k + 1] - start == n and blob[start:start + n] == raw:
                return k
            i += 1
        return -1

    def string(self, k: int) -> str:
        return bytes(self._blob[self._offs[k]:self._offs[k + 1]]).decode()

    def values(self, k: int):
        return self._vals[self._voffs[k]:self._voffs[k + 1]]

    def count(self, k: int) -> int:
        return self._voffs[k + 1] - self._voffs[k]

    def value_range(self, k: int) -> tuple[int, int]:
        return self._voffs[k], self._voffs[k + 1]


def _mv(arr) -> memoryview:
    """A memoryview of a 1-d numpy array: indexing it gives Python ints (fast in the look-up loops)."""
    arr = np.ascontiguousarray(arr)
    return memoryview(arr) if len(arr) else memoryview(np.zeros(1, arr.dtype))[:0]


def _encode_strings(strings: list[str]) -> tuple[np.ndarray, np.ndarray, list[bytes]]:
    raws = [s.encode() for s in strings]
    lengths = np.fromiter((len(r) for r in raws), dtype=np.int64, count=len(raws))
    offs = np.zeros(len(raws) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offs[1:])
    blob = np.frombuffer(b"".join(raws), dtype=np.uint8) if raws else np.zeros(0, np.uint8)
    return blob, offs, raws


def _table_arrays(prefix: str, strings: list[str], key_ids: np.ndarray, values: np.ndarray) -> dict[str, np.ndarray]:
    """Arrays of a string table: strings[k], and for each k the `values` whose `key_ids` equal k (in order)."""
    blob, offs, raws = _encode_strings(strings)
    n = len(strings)
    nb = 1
    while nb < max(1, n):
        nb <<= 1
    hashes = np.fromiter((_hash(r) for r in raws), dtype=np.uint32, count=n) & np.uint32(nb - 1)
    border = np.argsort(hashes, kind="stable").astype(np.int32)
    bstart = np.zeros(nb + 1, dtype=np.int64)
    np.cumsum(np.bincount(hashes, minlength=nb), out=bstart[1:])
    order = np.argsort(key_ids, kind="stable")
    vals = values[order].astype(np.int32)
    voffs = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(key_ids, minlength=n), out=voffs[1:])
    return {f"{prefix}_blob": blob, f"{prefix}_offs": offs, f"{prefix}_bstart": bstart, f"{prefix}_border": border,
            f"{prefix}_voffs": voffs, f"{prefix}_vals": vals}


# --- records --------------------------------------------------------------------------------------------

class _LazyListRecord:
    """A listed record whose schema is at hand (a column); everything else is decoded on first use."""

    __slots__ = ("schema", "_index", "_i", "_full")

    def __init__(self, index: "ScreeningIndex", i: int, schema: str):
        self._index, self._i, self.schema, self._full = index, i, schema, None

    def full(self) -> ListRecord:
        if self._full is None:
            self._full = self._index._decode_record(self._i)
        return self._full

    @property
    def id(self) -> str:
        return self.full().id

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("_index", "_i", "_full", "schema"):
            raise AttributeError(name)
        return getattr(self.full(), name)

    def __repr__(self) -> str:
        return repr(self.full())


class _RecordView:
    """What `index.records[i]` returns: the fields of `IndexedRecord`, from columns or decoded on first use."""

    __slots__ = ("_index", "_i", "list_name", "is_pep", "is_sanctioned", "sanction_countries", "pep_countries",
                 "_record", "_extra")

    def __init__(self, index: "ScreeningIndex", i: int):
        self._index, self._i = index, i
        self.list_name = index._list_names[index._rec_list[i]]
        flags = index._rec_flags[i]
        self.is_pep, self.is_sanctioned = bool(flags & 1), bool(flags & 2)
        self.sanction_countries = index._country_sets[index._rec_sanc[i]]
        self.pep_countries = index._country_sets[index._rec_pep[i]]
        self._record = _LazyListRecord(index, i, index._schemas[index._rec_schema[i]])
        self._extra: tuple | None = None

    @property
    def record(self) -> ListRecord:
        return self._record  # type: ignore[return-value]  (duck-typed: decoded on first use)

    def _details(self) -> tuple:
        if self._extra is None:
            record = self._record.full()
            dates = tuple(d for d in (DateValue.parse(v) for v in record.birth_dates) if d)
            countries = frozenset(c for c in (country_code(v) for v in record.countries) if c)
            self._extra = (dates, countries)
        return self._extra

    @property
    def dates(self) -> tuple[DateValue, ...]:
        return self._details()[0]

    @property
    def countries(self) -> frozenset[str]:
        return self._details()[1]


class _Records:
    def __init__(self, index: "ScreeningIndex"):
        self._index = index

    def __len__(self) -> int:
        return self._index._n_records

    def __getitem__(self, i: int) -> _RecordView:
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        cache = self._index._record_cache
        found = cache.get(i)
        if found is None:
            found = _RecordView(self._index, i)
            cache.put(i, found, 600)  # ~ a view with its decoded record
        return found

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __bool__(self) -> bool:
        return len(self) > 0


class _NameTokens:
    def __init__(self, index: "ScreeningIndex"):
        self._index = index

    def __len__(self) -> int:
        return self._index._n_names

    def __getitem__(self, name_id: int) -> tuple[str, ...]:
        ix = self._index
        text = ix.part_text
        return tuple(text(k) for k in ix._name_tok[ix._name_tok_offs[name_id]:ix._name_tok_offs[name_id + 1]])


class _NameText:
    def __init__(self, index: "ScreeningIndex"):
        self._index = index

    def __len__(self) -> int:
        return self._index._n_names

    def __getitem__(self, name_id: int) -> str:
        ix = self._index
        return bytes(ix._names_blob[ix._name_text_offs[name_id]:ix._name_text_offs[name_id + 1]]).decode()


class _NameKind:
    def __init__(self, index: "ScreeningIndex"):
        self._index = index

    def __len__(self) -> int:
        return self._index._n_names

    def __getitem__(self, name_id: int) -> str:
        return NAME_KINDS[self._index._name_kind[name_id]]


# --- the index ------------------------------------------------------------------------------------------

class ScreeningIndex:
    """Built from (ListInfo, ListRecord) pairs, or opened from a directory; immutable afterwards (safe to share
    between threads; its arrays are shared between processes when opened from disk)."""

    def __init__(self, items: Iterable[tuple[ListInfo, ListRecord]] | None = None,
                 list_versions: dict[str, str] | None = None, *, cache_bytes: int = DEFAULT_CACHE_BYTES,
                 _arrays: dict[str, Any] | None = None, _meta: dict[str, Any] | None = None):
        if _arrays is None:
            _arrays, _meta = _build(items or (), list_versions or {}, None)
        self._attach(_arrays, _meta, cache_bytes)

    @classmethod
    def build(cls, items: Iterable[tuple[ListInfo, ListRecord]], list_versions: dict[str, str],
              directory: str | Path, **kwargs) -> "ScreeningIndex":
        """Build into `directory` (which must not exist yet, or be empty) and open the result."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        _build(items, list_versions, directory)
        return cls.open(directory, **kwargs)

    @classmethod
    def write(cls, items: Iterable[tuple[ListInfo, ListRecord]], list_versions: dict[str, str],
              directory: str | Path) -> dict[str, Any]:
        """Build into `directory` (created; every file fsynced) without opening it; returns its stats."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        return _build(items, list_versions, directory)[1]["stats"]

    @classmethod
    def open(cls, directory: str | Path, *, cache_bytes: int = DEFAULT_CACHE_BYTES) -> "ScreeningIndex":
        """Memory-map a built directory (read-only; nothing is copied into the process)."""
        directory = Path(directory)
        meta = json.loads((directory / "meta.json").read_text())
        if meta.get("format") != FORMAT_VERSION:
            raise ValueError(f"{directory}: index format {meta.get('format')}, expected {FORMAT_VERSION}")
        arrays: dict[str, Any] = {name: np.load(directory / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
        for name in _BLOBS:
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
        self._rec_offs = _mv(a["rec_offs"])
        self._rec_list = _mv(a["rec_list"])
        self._rec_flags = _mv(a["rec_flags"])
        self._rec_schema = _mv(a["rec_schema"])
        self._rec_sanc = _mv(a["rec_sanc"])
        self._rec_pep = _mv(a["rec_pep"])
        self._records_blob = _mv(a["records.jsonl"])
        self._names_blob = _mv(a["names.txt"])
        self._name_tok_offs = _mv(a["name_tok_offs"])
        self._name_tok_offs_array = a["name_tok_offs"]  # the same offsets as numpy, for vectors of names
        self._name_tok = _mv(a["name_tok"])
        self._name_text_offs = _mv(a["name_text_offs"])
        self._name_kind = _mv(a["name_kind"])
        self._postings = _StrTable(*(a[f"p_{s}"] for s in ("blob", "offs", "bstart", "border", "voffs", "vals")))
        self._deletes = _StrTable(*(a[f"d_{s}"] for s in ("blob", "offs", "bstart", "border", "voffs", "vals")))
        self._sounds = _StrTable(*(a[f"s_{s}"] for s in ("blob", "offs", "bstart", "border", "voffs", "vals")))
        # near parts computed at build time: the part ids that have them (sorted), and CSR lists of the near
        # parts' ids and similarities, in the order `unit_match` found them
        self._near_keys = np.asarray(a["n_keys"])
        self._near_offs = _mv(a["n_offs"])
        self._near_ids = _mv(a["n_ids"])
        self._near_sims = _mv(a["n_sims"])
        # the public surface the engine reads
        self.records = _Records(self)
        self.name_record = _mv(a["name_record"])
        self.name_length = _mv(a["name_length"])
        self.name_tokens = _NameTokens(self)
        self.name_text = _NameText(self)
        self.name_kind = _NameKind(self)
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

    def _near(self, table: _StrTable, k: int, into: dict[str, int]) -> None:
        """Add the parts filed under key `k` of a variant table (deletions, sounds) to `into` (text -> id)."""
        texts = self._part_texts
        for t in table.values(k):
            text = texts.get(t)
            into[text if text is not None else self.part_text(t)] = t

    def _near_deletion(self, d: str, into: dict[str, int]) -> None:
        """Add the listed parts a deletion `d` of a query unit leads to: the part `d` itself (the unit less
        one letter) and the parts filed under `d` in the deletion table (one substitution or swap). One hash
        serves both tables."""
        raw = d.encode()
        h = _hash(raw)
        k = self._postings.find_hashed(raw, h)
        if k >= 0:
            into[d] = k
        k = self._deletes.find_hashed(raw, h)
        if k >= 0:
            self._near(self._deletes, k, into)

    def unit_match(self, unit: str, search_type: str, joined: bool = False) -> "UnitMatch":
        """The indexed parts that may align with a query unit, with their similarity, their part ids and the
        heaviest of their weights (cached per process).

        `joined`: the unit is two query tokens written together."""
        key = (unit, search_type, joined)
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
                    self._match_cache.put(key, found, 240 + 160 * len(found.ids))
                    return found
            sims[unit] = 1.0
            ids.append(k)
        if search_type != "narrow_search":
            near: dict[str, int] = {}  # part -> its id
            if joined:
                # two query tokens written together: only the listed parts it equals, or equals less one
                # letter, are sought (typos inside joined names are found token by token)
                for d in deletes1(unit):
                    k = postings.find(d)
                    if k >= 0:
                        near[d] = k
            elif len(unit) >= MIN_DELETE_LEN:
                k = deletes.find(unit)
                if k >= 0:
                    self._near(deletes, k, near)                     # listed part = unit + one letter
                first = deletes1(unit)
                for d in first:
                    self._near_deletion(d, near)
                if search_type == "broad_search" and len(unit) >= 5:
                    for d in first:
                        for d2 in deletes1(d):
                            self._near_deletion(d2, near)
            if not joined:
                for key_sound in sound_keys(unit, query=True):
                    k = sounds.find(key_sound)
                    if k >= 0:
                        self._near(sounds, k, near)
            for candidate, k in near.items():
                if candidate not in sims:
                    s = part_similarity(unit, candidate, search_type)
                    if s > 0.0:
                        sims[candidate] = s
                        ids.append(k)
        # the heaviest part is the rarest one (the weight falls as the posting list grows)
        count = self._postings.count
        found = UnitMatch(sims, tuple(ids), self._weight_of_count(min(map(count, ids))) if ids else 0.0)
        self._match_cache.put(key, found, 240 + 160 * len(ids))
        return found

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
        count = self._postings.count
        return UnitMatch(sims, ids, self._weight_of_count(min(map(count, ids))))

    def names_array(self, unit: str, search_type: str, joined: bool = False) -> np.ndarray:
        """Ids of the names holding a part that may align with the unit: a sorted numpy array of distinct ids
        (int32; cached: common parts recur).

        What the engine's candidate step reads: a common part's ids stay one compact array (4 bytes an id),
        never a Python set of ints, and the per-name bounds are computed over such arrays at once."""
        key = (unit, search_type, joined)
        found = self._posting_cache.get(key)
        if found is not None:
            return found
        ids = self.unit_match(unit, search_type, joined).ids
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


class UnitMatch(NamedTuple):
    """What a query unit may align with: {listed part: similarity}, the parts' ids (in the same order) and
    the largest weight among them (0.0: none). A named tuple: one is made per query part not cached yet."""

    sims: dict[str, float]
    ids: tuple[int, ...]
    heaviest: float


# --- building -------------------------------------------------------------------------------------------

def _record_data(record: ListRecord) -> dict[str, Any]:
    """`record.to_data()` without `dataclasses.asdict`'s deep copies (the values are plain JSON already)."""
    return {"names": [{"full": n.full, "kind": n.kind} for n in record.names], "birth_dates": record.birth_dates,
            "countries": record.countries, "topics": record.topics, "identifiers": record.identifiers,
            "properties": record.properties, "sanctions": record.sanctions, "positions": record.positions,
            "gender": record.gender}


def _country_sets(info: ListInfo, record: ListRecord) -> tuple[frozenset[str], frozenset[str]]:
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
    return frozenset(sanction_countries), frozenset(pep_countries)


def _build(items: Iterable[tuple], list_versions: dict[str, str],
           directory: Path | None) -> tuple[dict[str, Any], dict[str, Any]]:
    started = time.perf_counter()
    lists: dict[str, int] = {}
    infos: list[ListInfo] = []
    schemas: dict[str, int] = {}
    sets: dict[frozenset[str], int] = {frozenset(): 0}
    kinds = {k: i for i, k in enumerate(NAME_KINDS)}
    rec_offs, rec_list, rec_flags, rec_schema, rec_sanc, rec_pep = (
        [0], bytearray(), bytearray(), bytearray(), [], [])
    name_record, name_length, name_kind, name_tok_offs, name_tok = [], [], bytearray(), [0], []
    name_text_offs = [0]
    part_ids: dict[str, int] = {}
    parts: list[str] = []
    pair_key: list[int] = []
    pair_name: list[int] = []
    counts: dict[str, int] = {}
    records_out = open(directory / "records.jsonl", "wb") if directory else None
    names_out = open(directory / "names.txt", "wb") if directory else None
    records_mem: list[bytes] = []
    names_mem: list[bytes] = []
    rec_pos = names_pos = 0
    try:
        for item in items:
            info, record = item[0], item[1]
            li = lists.get(info.name)
            if li is None:
                li = lists[info.name] = len(infos)
                infos.append(info)
            counts[info.name] = counts.get(info.name, 0) + 1
            rec_idx = len(rec_list)
            raw = item[2] if len(item) > 2 else json.dumps({"id": record.id, "schema": record.schema, "caption": record.caption,
                              "data": _record_data(record), "first_seen": record.first_seen,
                              "last_seen": record.last_seen, "last_change": record.last_change},
                             ensure_ascii=False, separators=(",", ":")).encode()  # type: ignore[misc]
            (records_out.write(raw) if records_out else records_mem.append(raw))
            rec_pos += len(raw)
            rec_offs.append(rec_pos)
            rec_list.append(li)
            rec_flags.append((1 if record.is_pep else 0) | (2 if record.is_sanctioned else 0))
            rec_schema.append(schemas.setdefault(record.schema, len(schemas)))
            sanc, pep = _country_sets(info, record)
            rec_sanc.append(sets.setdefault(sanc, len(sets)))
            rec_pep.append(sets.setdefault(pep, len(sets)))
            seen: set[tuple[str, ...]] = set()
            for full, kind in [(record.caption, "primary"), *((n.full, n.kind) for n in record.names)]:
                tokens = name_tokens(full, record.schema)
                if not tokens or tokens in seen:
                    continue
                seen.add(tokens)
                name_id = len(name_record)
                name_record.append(rec_idx)
                name_length.append(sum(map(len, tokens)))
                name_kind.append(kinds.get(kind, kinds["alias"]))
                text = full.encode()
                (names_out.write(text) if names_out else names_mem.append(text))
                names_pos += len(text)
                name_text_offs.append(names_pos)
                keys = set(tokens)
                keys.update(tokens[i] + tokens[i + 1] for i in range(len(tokens) - 1))
                for t in tokens:
                    k = part_ids.get(t)
                    if k is None:
                        k = part_ids[t] = len(parts)
                        parts.append(t)
                    name_tok.append(k)
                name_tok_offs.append(len(name_tok))
                for part in keys:
                    k = part_ids.get(part)
                    if k is None:
                        k = part_ids[part] = len(parts)
                        parts.append(part)
                    pair_key.append(k)
                    pair_name.append(name_id)
    finally:
        if records_out:
            records_out.close()
        if names_out:
            names_out.close()

    arrays: dict[str, Any] = {
        "rec_offs": np.asarray(rec_offs, dtype=np.int64),
        "rec_list": np.frombuffer(bytes(rec_list), dtype=np.uint8),
        "rec_flags": np.frombuffer(bytes(rec_flags), dtype=np.uint8),
        "rec_schema": np.frombuffer(bytes(rec_schema), dtype=np.uint8),
        "rec_sanc": np.asarray(rec_sanc, dtype=np.int32),
        "rec_pep": np.asarray(rec_pep, dtype=np.int32),
        "name_record": np.asarray(name_record, dtype=np.int32),
        "name_length": np.asarray(name_length, dtype=np.int32),
        "name_kind": np.frombuffer(bytes(name_kind), dtype=np.uint8),
        "name_tok_offs": np.asarray(name_tok_offs, dtype=np.int64),
        "name_tok": np.asarray(name_tok, dtype=np.int32),
        "name_text_offs": np.asarray(name_text_offs, dtype=np.int64),
    }
    del name_record, name_length, name_tok, rec_offs
    # postings: part -> name ids (ascending, since names were numbered in order)
    arrays.update(_table_arrays("p", parts, np.asarray(pair_key, dtype=np.int32),
                                np.asarray(pair_name, dtype=np.int32)))
    n_postings = len(pair_key)
    del pair_key, pair_name
    # variants of single tokens: one-letter deletions and sound keys -> part ids of the tokens
    singles = sorted({parts[k] for k in arrays["name_tok"].tolist()})
    d_ids: dict[str, int] = {}
    d_key: list[int] = []
    d_val: list[int] = []
    s_ids: dict[str, int] = {}
    s_key: list[int] = []
    s_val: list[int] = []
    for token in singles:
        t = part_ids[token]
        if len(token) >= MIN_DELETE_LEN:
            for d in deletes1(token):
                d_key.append(d_ids.setdefault(d, len(d_ids)))
                d_val.append(t)
        for key in sound_keys(token):
            s_key.append(s_ids.setdefault(key, len(s_ids)))
            s_val.append(t)
    arrays.update(_table_arrays("d", list(d_ids), np.asarray(d_key, dtype=np.int32), np.asarray(d_val, dtype=np.int32)))
    arrays.update(_table_arrays("s", list(s_ids), np.asarray(s_key, dtype=np.int32), np.asarray(s_val, dtype=np.int32)))
    arrays.update(_near_arrays(arrays, parts, singles, part_ids))

    meta = {
        "format": FORMAT_VERSION,
        "list_versions": dict(sorted(list_versions.items())),
        "lists": [vars(i).copy() for i in infos],
        "schemas": list(schemas),
        "country_sets": [sorted(s) for s in sets],
        "stats": {"records": len(rec_list), "names": len(name_kind), "vocabulary": len(parts),
                  "postings": n_postings, "deletes": len(d_ids), "build_seconds": 0.0, "bytes": 0,
                  "lists": counts},
    }
    if directory is None:
        arrays["records.jsonl"] = np.frombuffer(b"".join(records_mem), dtype=np.uint8)
        arrays["names.txt"] = np.frombuffer(b"".join(names_mem), dtype=np.uint8)
        meta["stats"]["build_seconds"] = time.perf_counter() - started
        return arrays, meta
    for name in _ARRAYS:
        np.save(directory / f"{name}.npy", arrays[name])
    size = sum(p.stat().st_size for p in directory.iterdir() if p.is_file())
    meta["stats"]["build_seconds"] = round(time.perf_counter() - started, 3)
    meta["stats"]["bytes"] = size
    (directory / "meta.json").write_text(json.dumps(meta, ensure_ascii=False))
    for p in directory.iterdir():
        _fsync(p)
    _fsync(directory)
    return arrays, meta


def _near_arrays(arrays: dict[str, Any], parts: list[str], singles: list[str],
                 part_ids: dict[str, int]) -> dict[str, np.ndarray]:
    """The medium-search near parts of every listed part of NEAR_MIN_LEN+ letters held by NEAR_MIN_NAMES+
    names, computed once here with the index's own `unit_match` (so a query reading them gets exactly what
    the search would have found): the search type the engine runs by default, for the parts queries hold
    most often."""
    voffs = arrays["p_voffs"]
    chosen = sorted(k for k in (part_ids[t] for t in singles if len(t) >= NEAR_MIN_LEN)
                    if voffs[k + 1] - voffs[k] >= NEAR_MIN_NAMES)
    empty = {"n_keys": np.zeros(0, np.int32), "n_offs": np.zeros(1, np.int64), "n_ids": np.zeros(0, np.int32),
             "n_sims": np.zeros(0, np.float64)}
    if not chosen:
        return empty
    draft = ScreeningIndex(_arrays={**arrays, **empty, "records.jsonl": np.zeros(0, np.uint8),
                                    "names.txt": np.zeros(0, np.uint8)},
                           _meta={"list_versions": {}, "lists": [], "schemas": [], "country_sets": [],
                                  "stats": {}}, cache_bytes=1 << 20)
    offs = [0]
    ids: list[int] = []
    sims: list[float] = []
    for k in chosen:
        found = draft.unit_match(parts[k], "medium_search")
        ids.extend(found.ids)
        sims.extend(found.sims.values())
        offs.append(len(ids))
    return {"n_keys": np.asarray(chosen, dtype=np.int32), "n_offs": np.asarray(offs, dtype=np.int64),
            "n_ids": np.asarray(ids, dtype=np.int32), "n_sims": np.asarray(sims, dtype=np.float64)}


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
