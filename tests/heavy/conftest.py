"""Heavy jobs fixtures: the settings a test lowers (restored after it), lists to screen, and an entity whose
history is large enough to be a job."""
from __future__ import annotations

import pytest

from tests.checks.conftest import fresh_index_holder, save_lists  # noqa: F401  (the index seen by each check)

DEFAULTS = ("HEAVY_SLOTS", "HEAVY_MAX_RUNNING_PER_ACCOUNT", "HEAVY_MAX_QUEUED_PER_ACCOUNT", "HEAVY_BUDGET_SECONDS",
            "HEAVY_BUDGET_REFILL_PER_MINUTE", "HEAVY_PDF_SYNC_ITEMS", "HEAVY_IMPORT_SYNC_ROWS",
            "HEAVY_EXPORT_SYNC_ROWS", "PORTAL_RATE_LIMIT_USER", "PORTAL_RATE_LIMIT_ACCOUNT",
            "PORTAL_HEAVY_RATE_LIMIT_USER", "PORTAL_HEAVY_RATE_LIMIT_ACCOUNT", "REDIS_URL")


@pytest.fixture
def settings(app):
    """app.config for this test only: `settings(HEAVY_SLOTS=1, ...)`."""
    saved = {k: app.config[k] for k in DEFAULTS}

    def change(**values):
        app.config.update(values)
    yield change
    app.config.update(saved)


@pytest.fixture
def screened(app, tenant, work):
    """An entity with three screening checks (each with results and an event): a history of some size."""
    save_lists(app)
    program = tenant.program(program_name="Heavy history")
    entity = tenant.entity(program["uuid"], first_name="Bartholomew", last_name="Quenneville",
                           birth_date="1961-03-14")
    for _ in range(3):
        r = tenant.api.post(f"/entities/{entity['uuid']}/checks", json={"check_types": ["pep_sanction_check"]})
        assert r.status_code == 202, r.get_json()
    work()
    return {"program": program, "entity": entity}


def csv_rows(n: int, seed: str = "x", bad_line: int | None = None) -> bytes:
    lines = ["entity_type,first_name,last_name,reference_number"]
    for i in range(n):
        etype = "spaceship" if bad_line is not None and i + 2 == bad_line else "individual"
        lines.append(f"{etype},Ava{seed},Numbat{i:05d},R{seed}-{i}")
    return ("\n".join(lines) + "\n").encode()
