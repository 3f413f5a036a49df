"""CSV for spreadsheets: a cell that a spreadsheet would read as a formula is neutralised (OWASP "CSV
injection"): a leading `=`, `+`, `-`, `@`, tab or carriage return gets a `'` in front, which spreadsheets show
as text. Numbers we write ourselves are passed as int/float and left alone."""
from __future__ import annotations

import csv
import io
from typing import Iterable, Iterator

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value) -> object:
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_lines(rows: Iterable[Iterable]) -> Iterator[str]:
    """Each row as one CSV line (streamed), every text cell neutralised."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow([safe_cell(v) for v in row])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
