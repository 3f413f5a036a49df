"""PEP / sanctions list store and matching engine.

The engine (`engine`, `index*`, `matching`, `similarity`, `constants`, `qualifiers`, `normalize`, `records`,
`importers`) is pure Python over plain data; `models`, `store`, `index_dir`, `index_holder` and `cli` connect it to
the database, the index directory and the command line. For checks and monitors:

    from app.screening import screen, Subject, ScreeningConfig
    result = screen(Subject(full_name="...", dob="1970"), ScreeningConfig(similarity_threshold=80))
    result.results, result.list_versions, result.engine_version
"""
from __future__ import annotations

from typing import Any

from app.screening.engine import ENGINE_VERSION, ConfigError, ScreeningConfig, ScreeningResult, Subject

__all__ = ["ENGINE_VERSION", "ConfigError", "ScreeningConfig", "ScreeningResult", "Subject", "screen"]


def screen(subject: Subject | dict[str, Any], config: ScreeningConfig | dict[str, Any] | None = None,
           *, session=None) -> ScreeningResult:
    """Screen a subject against the lists loaded in the database (the process-wide index, rebuilt when a
    list version changes). `session` defaults to the Flask-SQLAlchemy session."""
    from app.screening import engine
    from app.screening.index_holder import holder  # here: importing the engine loads no database side
    if session is None:
        from app.extensions import db
        session = db.session
    return engine.screen(holder.get(session), subject, config)
