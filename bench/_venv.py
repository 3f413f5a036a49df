"""Imported first by every bench script: re-run the script with the project's .venv interpreter when it was
started with another one (so `python bench/x.py` works as well as `.venv/bin/python bench/x.py`), and put the
project and bench folders on the import path."""
import os
import sys
from pathlib import Path

HERE = Path(os.path.abspath(__file__)).parent
ROOT = HERE.parent
_VENV_PY = ROOT / ".venv" / "bin" / "python"
if _VENV_PY.exists() and Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
    os.execv(str(_VENV_PY), [str(_VENV_PY), os.path.abspath(sys.argv[0]), *sys.argv[1:]])
for path in (str(HERE), str(ROOT)):
    if path not in sys.path:
        sys.path.insert(0, path)
