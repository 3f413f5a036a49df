"""ASIC's Banned and Disqualified Persons register, as published on data.gov.au: one CSV (comma-delimited,
header row, UTF-8 or Windows-1252) with the columns

    REGISTER_NAME, BD_PER_NAME, BD_PER_TYPE, BD_PER_DOC_NUM, BD_PER_START_DT, BD_PER_END_DT,
    BD_PER_ADD_LOCAL, BD_PER_ADD_STATE, BD_PER_ADD_PCODE, BD_PER_ADD_COUNTRY, BD_PER_COMMENTS

Names are written "LAST, GIVEN NAMES"; dates "DD/MM/YYYY" (an empty end date: open-ended). A person banned on
several registers has one row each; each row becomes one record, tagged with its register type
(`banned_type`, the values of the API's `config.banned_disqualified_persons.banned_types`).
"""
from __future__ import annotations

import csv
import hashlib
import io
import re
from datetime import datetime
from pathlib import Path

from app.screening.importers.common import ListFormatError, read_text
from app.screening.normalize import reorder_last_first
from app.screening.records import ListInfo, ListRecord, ParsedList

INFO = ListInfo(name="au_asic_banned", title="ASIC Banned and Disqualified Persons",
                publisher="Australian Securities and Investments Commission", kind="banned", jurisdiction="au",
                url="https://data.gov.au/data/dataset/asic-banned-disqualified-persons")

COLUMNS = ("REGISTER_NAME", "BD_PER_NAME", "BD_PER_TYPE", "BD_PER_DOC_NUM", "BD_PER_START_DT", "BD_PER_END_DT",
           "BD_PER_ADD_LOCAL", "BD_PER_ADD_STATE", "BD_PER_ADD_PCODE", "BD_PER_ADD_COUNTRY", "BD_PER_COMMENTS")

# BD_PER_TYPE as published (lower-cased, punctuation folded) -> the API's banned_types value
_TYPES = [
    (re.compile(r"^afs\b|australian financial serv|^financial serv"), "afs_banned_disqualified"),
    (re.compile(r"futures"), "banned_futures"),
    (re.compile(r"securities"), "banned_securities"),
    (re.compile(r"credit"), "credit_banned_disqualified"),
    (re.compile(r"smsf|super"), "disqualified_smsf"),
    (re.compile(r"trustee|\bato\b"), "ato_disqualified_trustee"),
    (re.compile(r"director|disq\.? dir|^disq"), "disqualified_director"),
]


def banned_type(published: str) -> str | None:
    text = re.sub(r"[^a-z ]+", " ", published.lower()).strip()
    for pattern, value in _TYPES:
        if pattern.search(text):
            return value
    return None


def _date(value: str, path: Path, lineno: int, column: str) -> str | None:
    value = (value or "").strip()
    if not value:
        return None
    for fmt in ("%d/%m/%Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(value, fmt).date().isoformat()
        except ValueError:
            continue
    raise ListFormatError(f"{path}, line {lineno}: {column} {value!r} is not a DD/MM/YYYY date")


def parse(path: Path) -> ParsedList:
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in (".csv", ".tsv", ".txt"))
        if len(files) != 1:
            raise ListFormatError(f"{path}: expected one ASIC banned and disqualified CSV file in the folder")
        path = files[0]
    text = read_text(path)
    first = text.split("\n", 1)[0]
    delimiter = "\t" if first.count("\t") > first.count(",") else ","
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = [h.strip().upper() for h in next(reader, [])]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise ListFormatError(f"{path}: not an ASIC banned and disqualified persons file (missing columns "
                              f"{', '.join(missing)})")
    pos = {c: header.index(c) for c in COLUMNS}
    records: list[ListRecord] = []
    warnings: list[str] = []
    seen: set[str] = set()
    for lineno, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < len(header):
            raise ListFormatError(f"{path}, line {lineno}: expected {len(header)} columns, found {len(row)}")
        cell = {c: row[pos[c]].strip() for c in COLUMNS}
        published_name = cell["BD_PER_NAME"]
        if not published_name:
            raise ListFormatError(f"{path}, line {lineno}: BD_PER_NAME is empty")
        kind = banned_type(cell["BD_PER_TYPE"])
        if kind is None:
            warnings.append(f"line {lineno}: unknown register type {cell['BD_PER_TYPE']!r}, kept as "
                            "disqualified_director")
            kind = "disqualified_director"
        start = _date(cell["BD_PER_START_DT"], path, lineno, "BD_PER_START_DT")
        end = _date(cell["BD_PER_END_DT"], path, lineno, "BD_PER_END_DT")
        key = "|".join((published_name.upper(), kind, cell["BD_PER_DOC_NUM"], start or ""))
        rid = "asic-bd-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]
        if rid in seen:
            continue  # the register repeats a row verbatim now and then
        seen.add(rid)
        caption = reorder_last_first(published_name).title() if "," in published_name else published_name.title()
        props = {"banned_type": [kind], "register": [cell["BD_PER_TYPE"] or cell["REGISTER_NAME"]],
                 "document_number": [cell["BD_PER_DOC_NUM"]], "start_date": [start] if start else [],
                 "end_date": [end] if end else [], "locality": [cell["BD_PER_ADD_LOCAL"].title()],
                 "state": [cell["BD_PER_ADD_STATE"]], "postcode": [cell["BD_PER_ADD_PCODE"]],
                 "country": [cell["BD_PER_ADD_COUNTRY"].title()], "comments": [cell["BD_PER_COMMENTS"]],
                 "notes": [f"{cell['BD_PER_TYPE']} from {start or '?'} to {end or 'indefinitely'}"]}
        props = {k: [v for v in vals if v] for k, vals in props.items()}
        records.append(ListRecord(id=rid, schema="Person", caption=caption, topics=["debarment"],
                                  countries=["au"], identifiers=[{"type": "asic_document", "value":
                                                                  cell["BD_PER_DOC_NUM"]}] if cell["BD_PER_DOC_NUM"]
                                  else [], properties=props))
    return ParsedList(info=INFO, records=records, source=str(path), warnings=warnings)
