"""Small, invented screening-list fixtures.

They are stored as `<name>.fixture.<ext>` so that they cannot be mistaken for copies of the official
publications (`sdn.csv`, `consolidated.xml`, ...), and are materialised once per test session, under the
official file names the importers expect, in a temporary folder."""
from __future__ import annotations

import atexit
import shutil
import tempfile
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
            shutil.copyfile(path, out)
    return target
