"""Small, invented screening-list fixtures.

They are stored as `<name>.fixture.<ext>` so that they cannot be mistaken for copies of the official
publications (`sdn.csv`, `consolidated.xml`, ...), and are materialised once per test session, under the
official file names the importers expect, in a temporary folder. A workbook is stored as its rows
(`<name>.fixture.xlsx.json`) and written as an XLSX file by openpyxl when it is materialised."""
from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from datetime import datetime
from functools import lru_cache
from pathlib import Path

SOURCE = Path(__file__).resolve().parent / "fixtures" / "lists"


@lru_cache(maxsize=1)
def lists_dir() -> Path:
    target = Path(tempfile.mkdtemp(prefix="list-fixtures-"))
    atexit.register(shutil.rmtree, target, ignore_errors=True)
    for path in SOURCE.rglob("*"):
        if path.is_file():
            out = target / path.relative_to(SOURCE)
            out = out.with_name(out.name.replace(".fixture.", "."))
            out.parent.mkdir(parents=True, exist_ok=True)
            if out.name.endswith(".xlsx.json"):
                write_xlsx(json.loads(path.read_text(encoding="utf-8")), out.with_name(out.name[:-len(".json")]))
            else:
                shutil.copyfile(path, out)
    return target


def write_xlsx(spec: dict, path: Path) -> Path:
    """An XLSX workbook of one sheet: an optional title row, the header, the rows ({"date": ISO} is a date cell)."""
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.title = spec.get("sheet", "Sheet1")
    if spec.get("title"):
        sheet.append([spec["title"]])
    sheet.append(spec["header"])
    for row in spec["rows"]:
        sheet.append([datetime.fromisoformat(v["date"]) if isinstance(v, dict) else v for v in row])
    workbook.save(path)
    return path
