from __future__ import annotations

from pathlib import Path

import pytest

from app.screening import index_holder
from tests.list_fixtures import lists_dir as fixture_lists_dir

LISTS = fixture_lists_dir()


@pytest.fixture
def lists_dir() -> Path:
    return LISTS


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture(autouse=True)
def fresh_index_holder(app, tmp_path):
    """Tests see list changes at once (no stamp-check interval), start without a cached index, and build
    indexes into a folder of their own."""
    interval = index_holder.holder.check_interval
    previous_dir = app.config.get("SCREENING_INDEX_DIR")
    app.config["SCREENING_INDEX_DIR"] = str(tmp_path / "index")
    index_holder.holder.check_interval = 0.0
    index_holder.holder.reset()
    yield
    index_holder.holder.reset()
    index_holder.holder.check_interval = interval
    app.config["SCREENING_INDEX_DIR"] = previous_dir
