"""CSV for spreadsheets: no cell of ours can become a formula (OWASP "CSV injection"), in any locale.

A spreadsheet reads a cell as a formula when it starts with `=`, `+`, `-`, `@`, a tab or a carriage return. Our
files are comma-separated, but a spreadsheet set to another locale splits a line on its own separator (`;` in
much of Europe, a tab or `|` on import), so a value such as `Orejuela;=HYPERLINK(A1)` would become two cells, the
second a formula. So every text cell is written quoted (a quoted separator never starts a cell), and a `'` goes in
front of a formula trigger at the start of the cell and after every separator (`,` `;` tab `|`, or a line break),
also when spaces come between: spreadsheets show a `'`-led cell as text, and an importer that ignores the quotes
still sees no formula. Numbers we write ourselves are passed as int/float and left alone, unquoted."""
from __future__ import annotations

import csv
import io
import re
from typing import Iterable, Iterator

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
SEPARATORS = ",;\t|\r\n"
# A trigger after a separator and any spaces: a `'` goes in front of it (a tab or carriage return is both).
_TRIGGER = re.compile(r"(?<=[,;\t|\r\n])([ ]*)([=+\-@\t\r])")


def safe_cell(value) -> object:
    if not isinstance(value, str):
        return value
    if value.startswith(FORMULA_STARTS):
        value = "'" + value
    return _TRIGGER.sub(r"\1'\2", value)


def csv_lines(rows: Iterable[Iterable]) -> Iterator[str]:
    """Each row as one CSV line (streamed), every text cell neutralised and quoted."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_NONNUMERIC)
    for row in rows:
        writer.writerow([safe_cell(v) for v in row])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
