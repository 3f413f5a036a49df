from __future__ import annotations

from pathlib import Path

import pytest

from app.screening.importers import parse_list
from app.screening.index import ScreeningIndex
from tests.list_fixtures import lists_dir as fixture_lists_dir

LISTS = fixture_lists_dir()


@pytest.fixture(scope="session")
def lists_dir() -> Path:
    return LISTS


@pytest.fixture(scope="session")
def parsed_lists():
    return [parse_list("ofac-csv", LISTS / "ofac"), parse_list("un-xml", LISTS / "un" / "consolidated.xml"),
            parse_list("ftm", LISTS / "ftm" / "entities.ftm.json"), parse_list("senzing", LISTS / "senzing" / "pep.json")]


@pytest.fixture(scope="session")
def index(parsed_lists) -> ScreeningIndex:
    items = [(p.info, r) for p in parsed_lists for r in p.records]
    return ScreeningIndex(items, {p.info.name: "v1" for p in parsed_lists})
