"""Reading an entity CSV file into row dicts for `EntityIn` (validation itself is the schema's).

The header (line 1) names the columns with the API's field names, in any order and case. Empty cells are
omitted (so a column of another entity type may stay empty, and an empty risk_level takes the default).
`flags` holds several flags separated by `;`, `|` or `,`. Enumerations (entity_type, business_number_type,
risk_level, flags) are accepted in any case, as spreadsheets tend to capitalise them. Errors are keyed
`rows.<line>.<field>`, where <line> is the line of the file on which the row starts. Every cell passes the
inputs rule of the API and the portal (app/core/inputs.py: NFC; control characters, Unicode line separators and
invisible format characters refused, naming the character)."""
from __future__ import annotations

import csv
import io
import re

from app.core.inputs import clean_value
from app.core.errors import Invalid, PayloadTooLarge
from app.entities.schemas import INPUT_FIELDS

MAX_ROWS = 50_000  # default of CSV_MAX_ROWS
_LOWERCASE = ("entity_type", "business_number_type", "risk_level")
_FLAG_SPLIT = re.compile(r"[;|,]")


def _file_error(message: str) -> Invalid:
    return Invalid(message, errors={"file": [message]})


def _columns(header: list[str]) -> list[str]:
    """The header's column names; Invalid (line 1's errors) when it is not a valid header."""
    columns = [name.strip().lower() for name in header]
    errors: dict[str, list[str]] = {}
    seen: set[str] = set()
    for name in columns:
        if not name:
            errors.setdefault("rows.1", []).append("A column has no name.")
        elif name not in INPUT_FIELDS:
            errors.setdefault(f"rows.1.{name}", []).append("Unknown column.")
        elif name in seen:
            errors.setdefault(f"rows.1.{name}", []).append("Duplicate column.")
        seen.add(name)
    if "entity_type" not in columns:
        errors.setdefault("rows.1.entity_type", []).append("Required column.")
    if errors:
        raise Invalid("The header line of the file is not valid; nothing was imported.", errors=errors)
    return columns


def parse_csv(text: str, max_rows: int = MAX_ROWS) -> tuple[list[tuple[int, dict]], dict[str, list[str]]]:
    """([(line number, {field: value})] for every well-formed non-blank data row, {rows.<line>: [error]} for
    the malformed ones), or Invalid when the file itself (header, encoding, size) is not usable."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise _file_error("The file is empty: it needs a header line and at least one row.")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
        header_end = reader.line_num
        columns = _columns(header)

        rows: list[tuple[int, dict]] = []
        malformed: dict[str, list[str]] = {}
        previous_end = header_end
        for cells in reader:
            line = previous_end + 1
            previous_end = reader.line_num
            if not any(cell.strip() for cell in cells):
                continue
            if len(rows) + len(malformed) >= max_rows:
                raise PayloadTooLarge(f"The file has more than {max_rows:,} rows; split it into smaller files.")
            if len(cells) > len(columns):
                malformed[f"rows.{line}"] = ["The row has more cells than the header has columns."]
                continue
            row: dict = {}
            for name, cell in zip(columns, cells):
                cell = cell.strip()
                if not cell:
                    continue
                cell = clean_value(cell, f"rows.{line}.{name}", malformed)  # NFC; refused characters named
                if f"rows.{line}.{name}" in malformed:
                    continue
                if name == "flags":
                    row[name] = [f.strip().lower() for f in _FLAG_SPLIT.split(cell) if f.strip()]
                elif name in _LOWERCASE:
                    row[name] = cell.lower()
                else:
                    row[name] = cell
            if not any(key.startswith(f"rows.{line}.") for key in malformed):
                rows.append((line, row))
    except csv.Error as exc:
        raise _file_error(f"The file is not valid CSV (line {reader.line_num}): {exc}.") from None
    if not rows and not malformed:
        raise _file_error("The file has a header but no rows.")
    return rows, malformed


def count_rows(text: str, max_rows: int = MAX_ROWS) -> int:
    """The number of non-blank data rows, with the header checked as `parse_csv` checks it: what decides between
    an import in the request and a job, read in milliseconds (the rows themselves are validated by the import).
    413 beyond max_rows; the file errors of `parse_csv` for an empty or unreadable file."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise _file_error("The file is empty: it needs a header line and at least one row.")
    reader = csv.reader(io.StringIO(text, newline=""))
    count = 0
    try:
        _columns(next(reader))
        for cells in reader:
            if any(c.strip() for c in cells):
                count += 1
                if count > max_rows:
                    raise PayloadTooLarge(f"The file has more than {max_rows:,} rows; split it into smaller files.")
    except csv.Error as exc:
        raise _file_error(f"The file is not valid CSV (line {reader.line_num}): {exc}.") from None
    return count
