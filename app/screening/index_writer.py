"""The index writer: (ListInfo, ListRecord) pairs -> the arrays of a `ScreeningIndex`, in memory or written to a
directory (one `.npy` file per array, two blobs, `meta.json`; every file fsynced). The layout is described in
`index`; `FORMAT_VERSION` names it.
"""
from __future__ import annotations

import gc
import json
import os
import time
from pathlib import Path
from typing import Any, Iterable, NamedTuple

import numpy as np

from app.screening.constants import ARTICLES, THEOPHORIC_PREFIXES
from app.screening.index_tables import StrTable, table_arrays
from app.screening.jurisdictions import served_countries
from app.screening.normalize import country_code, deletes1, name_tokens
from app.screening.records import NAME_KINDS, ListInfo, ListRecord
from app.screening.similarity import sound_keys

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
# 7: short forms, Cyrillic readings, abjad keys of "Abd"/"Abu" and the article written with the next part (3.0.0).
# 8: "Abd al-"/"Abu al-" written as one word in Arabic script read as two parts; skeleton keys ("$"), the
#    article before a sun letter ("&" keys without it) and a final ة after two letters (3.1.0).
# 9: the near parts computed at build follow engine 3.2.0's similarity (a nasab's links in Arabic script, other
#    romanizations of Arabic and Persian consonants), and "son of" / "daughter of" are read "bin" / "bint" (3.2.0).
# 10: "Ben", "Bin", "Ibn" written with the next part filed under its abjad keys, as "Abd" and "Abu" are (3.3.0).
# 11: a hamza on its seat (ئ, ؤ) transliterated as the bare hamza; titles, "junior" and "senior" written in Arabic,
#     Persian or Cyrillic script read as the Latin words (3.4.0).
# 12: the near parts computed at build follow engine 3.5.0's similarity (a final ی or ي an alef maqsura).
FORMAT_VERSION = 12
# Listed parts of this many letters held by this many names or more get their medium-search near parts
# computed at build time (a query holding them reads them instead of searching the variant tables).
NEAR_MIN_LEN = 3
NEAR_MIN_NAMES = 2
# the files of a built directory: one `.npy` file per array, and two blobs (beside `meta.json`)
ARRAYS = ("rec_offs", "rec_list", "rec_flags", "rec_schema", "rec_sanc", "rec_pep",
          "name_record", "name_length", "name_kind", "name_tok_offs", "name_tok", "name_text_offs",
          "p_blob", "p_offs", "p_bstart", "p_border", "p_voffs", "p_vals",
          "d_blob", "d_offs", "d_bstart", "d_border", "d_voffs", "d_vals",
          "s_blob", "s_offs", "s_bstart", "s_border", "s_voffs", "s_vals",
          "n_keys", "n_offs", "n_ids", "n_sims")
BLOBS = ("records.jsonl", "names.txt")


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
        sanction_countries.update(served_countries(info.jurisdiction))
        for s in record.sanctions:
            code = country_code(s.get("country")) if s.get("country") else None
            if code:
                sanction_countries.add(code)
            elif str(s.get("country") or "").lower() == "eu":  # an EU sanction in an OpenSanctions export
                sanction_countries.update(served_countries("eu"))
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


def build_arrays(items: Iterable[tuple], list_versions: dict[str, str], directory: Path | None,
                 index_type: type) -> tuple[dict[str, Any], dict[str, Any]]:
    """The arrays and the meta data of the index of `items`, also written to `directory` unless None.
    `index_type` is `index.ScreeningIndex` (which imports this module): its own search computes the near parts
    stored with the index (`_near_arrays`).

    Python's cyclic garbage collector is paused meanwhile: the build makes millions of short-lived objects (a
    record, its names, a part's features) that hold no cycles, and the collector's passes over the objects that
    live on (the caches of the similarity) found nothing to free while they took 7 s of a 1M-record build."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _build_arrays(items, list_versions, directory, index_type)
    finally:
        if enabled:
            gc.enable()


def _build_arrays(items: Iterable[tuple], list_versions: dict[str, str], directory: Path | None,
                  index_type: type) -> tuple[dict[str, Any], dict[str, Any]]:
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
    articled: set[str] = set()
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
                # the Arabic article written with its name, as Arabic script writes it ("al tikriti" as
                # "altikriti", to meet "التكريتي" -> "ltkryty"): filed under its abjad keys too (engine 3.0.0)
                # and so are "Abd"/"Abdul"/"Abu" with theirs ("abdul manan": "عبد المنان" -> "bd lmnn" written
                # together; 3.3.0: "Ben", "Bin", "Ibn" with theirs, "ben hassine": "بنحسين" -> "bnhsyn")
                articled.update(tokens[i] + tokens[i + 1] for i in range(len(tokens) - 1)
                                if tokens[i] in ARTICLES or tokens[i] in JOINED_PREFIXES)
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
    arrays.update(table_arrays("p", parts, np.asarray(pair_key, dtype=np.int32),
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
    for part in sorted(articled):
        for key in sound_keys(part):
            if key[:1] in ("&", "%"):
                s_key.append(s_ids.setdefault(key, len(s_ids)))
                s_val.append(part_ids[part])
    arrays.update(table_arrays("d", list(d_ids), np.asarray(d_key, dtype=np.int32), np.asarray(d_val, dtype=np.int32)))
    arrays.update(table_arrays("s", list(s_ids), np.asarray(s_key, dtype=np.int32), np.asarray(s_val, dtype=np.int32)))
    arrays.update(_near_arrays(arrays, parts, singles, {"p": part_ids, "d": d_ids, "s": s_ids}, index_type))

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
    for name in ARRAYS:
        np.save(directory / f"{name}.npy", arrays[name])
    size = sum(p.stat().st_size for p in directory.iterdir() if p.is_file())
    meta["stats"]["build_seconds"] = round(time.perf_counter() - started, 3)
    meta["stats"]["bytes"] = size
    (directory / "meta.json").write_text(json.dumps(meta, ensure_ascii=False))
    for p in directory.iterdir():
        fsync(p)
    fsync(directory)
    return arrays, meta


def _near_arrays(arrays: dict[str, Any], parts: list[str], singles: list[str], ids: dict[str, dict[str, int]],
                 index_type: type) -> dict[str, np.ndarray]:
    """The medium-search near parts of every listed part of NEAR_MIN_LEN+ letters held by NEAR_MIN_NAMES+
    names, computed once here with the index's own `unit_match` (so a query reading them gets exactly what
    the search would have found): the search type the engine runs by default, for the parts queries hold
    most often.

    `ids`: the dicts the postings ("p"), deletion ("d") and sound ("s") tables were built from ({string: id}).
    The draft index finds strings through them and reads part texts from `parts` (`_draft_type`): the same
    ids as the tables' own hash look-ups, without hashing and decoding each string again."""
    voffs = arrays["p_voffs"]
    part_ids = ids["p"]
    chosen = sorted(k for k in (part_ids[t] for t in singles if len(t) >= NEAR_MIN_LEN)
                    if voffs[k + 1] - voffs[k] >= NEAR_MIN_NAMES)
    empty = {"n_keys": np.zeros(0, np.int32), "n_offs": np.zeros(1, np.int64), "n_ids": np.zeros(0, np.int32),
             "n_sims": np.zeros(0, np.float64)}
    if not chosen:
        return empty
    draft = _draft_type(index_type)(
        _arrays={**arrays, **empty, "records.jsonl": np.zeros(0, np.uint8), "names.txt": np.zeros(0, np.uint8)},
        _meta={"list_versions": {}, "lists": [], "schemas": [], "country_sets": [], "stats": {}}, cache_bytes=1 << 20)
    draft.use_dicts(parts, ids)
    offs = [0]
    out_ids: list[int] = []
    sims: list[float] = []
    for k in chosen:
        found = draft.unit_match(parts[k], "medium_search")
        out_ids.extend(found.ids)
        sims.extend(found.sims.values())
        offs.append(len(out_ids))
    return {"n_keys": np.asarray(chosen, dtype=np.int32), "n_offs": np.asarray(offs, dtype=np.int64),
            "n_ids": np.asarray(out_ids, dtype=np.int32), "n_sims": np.asarray(sims, dtype=np.float64)}


class _DictTable(StrTable):
    """A string table that finds its strings through the dict it was built from (the same ids)."""

    def __init__(self, table: StrTable, ids: dict[str, int]):
        self.__dict__.update(table.__dict__)
        self._ids = ids

    def find(self, key: str) -> int:
        return self._ids.get(key, -1)

    def find_raw(self, raw: bytes) -> int:
        return self._ids.get(raw.decode(), -1)


def _draft_type(index_type: type) -> type:
    """The index the build computes near parts with: `index_type`'s search over the build's own dicts."""

    class _DraftIndex(index_type):  # type: ignore[misc, valid-type]
        def use_dicts(self, parts: list[str], ids: dict[str, dict[str, int]]) -> None:
            self._parts = parts
            self._part_ids, self._delete_ids = ids["p"], ids["d"]
            self._postings = _DictTable(self._postings, ids["p"])
            self._deletes = _DictTable(self._deletes, ids["d"])
            self._sounds = _DictTable(self._sounds, ids["s"])

        def part_text(self, k: int) -> str:
            return self._parts[k]

        def _near(self, table: StrTable, k: int, into: dict[str, int]) -> None:
            parts = self._parts
            for t in table.values(k):
                into[parts[t]] = t

        def _near_deletion(self, raw: bytes, into: dict[str, int]) -> None:
            d = raw.decode()
            k = self._part_ids.get(d, -1)
            if k >= 0:
                into[d] = k
            k = self._delete_ids.get(d, -1)
            if k >= 0:
                self._near(self._deletes, k, into)

        def _built_near(self, k: int) -> None:
            return None  # what is being built

        def _cached_match(self, key: tuple, sims: dict[str, float], ids: list[int]) -> "_Near":
            return _Near(sims, ids)  # each part is searched once: nothing to cache, no weight to read

    return _DraftIndex


class _Near(NamedTuple):
    sims: dict[str, float]
    ids: list[int]


# "Ben", "Bin", "Ibn" and a name ("Ben Hassine"), which Maghrebi and Gulf family names write as one word in Arabic
# script ("بنحسين", "bnhsyn"; engine 3.3.0)
JOINED_PREFIXES = THEOPHORIC_PREFIXES | {"abu", "abou", "bou", "ul", "ur", "ud", "us", "ben", "bin", "ibn"}


def fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
