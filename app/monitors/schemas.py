"""Monitor and monitor-run schemas: one source for validation and the OpenAPI document (spec "Monitor",
"POST /programs/{program_uuid}/monitors", "PATCH /monitors/{monitor_uuid}"; runs are ours, docs/monitors.md)."""
from __future__ import annotations

import uuid as uuid_mod
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AliasChoices, Field

from app.core.schemas import RequestSchema, ResponseSchema, UtcDateTime
from app.monitors.models import MODES, RUN_STATUSES, TRIGGERS
from app.monitors.schedules import SCHEDULES
from app.providers.registry import CHECK_TYPES

# The operations a monitor may repeat: those answered by our own engine over lists that change (docs/decisions.md).
MONITOR_TYPES = ("pep_sanction_check", "banned_disqualified_persons")
Schedule = Literal[tuple(SCHEDULES)]
MonitorName = Annotated[str, Field(min_length=3, max_length=255)]
SCHEDULE_DOC = ("manual (runs only through the run endpoint), every_day, weekdays, weekends, monday ... sunday, "
                "monthly_1, monthly_15, monthly_1_15, quarterly (1 January, April, July, October); scheduled runs "
                "start at the local hour (default 02:00) in the account's time zone.")



def _runs_over_programs(value: str) -> str:
    if value not in MONITOR_TYPES:
        raise ValueError(f"{value} does not run over a program's entities; monitors and runs screen "
                         f"{', '.join(MONITOR_TYPES)}.")
    return value


# The operation of a monitor or a run: a known check type, and one that runs over a program's entities.
RunType = Annotated[Literal[CHECK_TYPES.names], AfterValidator(_runs_over_programs)]
RunConfig = dict[str, Any] | None
CONFIG_DOC = "The operation's options (as in a check launch's config section); omitted keys take their defaults."


class MonitorCreate(RequestSchema):
    monitor_name: MonitorName
    monitor_check_type: RunType = Field(
        description=f"The operation to repeat; one of {', '.join(MONITOR_TYPES)}, enabled on the account.")
    status: Literal["active", "paused"]
    schedule: Schedule = Field(description=SCHEDULE_DOC)
    config: RunConfig = Field(None, description=CONFIG_DOC)

    model_config = {**RequestSchema.model_config, "json_schema_extra": {"examples": [
        {"monitor_name": "PEP and sanctions, all customers", "monitor_check_type": "pep_sanction_check",
         "status": "active", "schedule": "every_day",
         "config": {"search_type": "medium_search", "similarity_threshold": "80"}}]}}


class MonitorUpdate(RequestSchema):
    monitor_name: MonitorName | None = None
    status: Literal["active", "paused"] | None = None
    schedule: Schedule | None = Field(None, description=SCHEDULE_DOC)
    config: dict[str, Any] | None = Field(None, description="Merged key by key into the current options.")


class MonitorRunRequest(RequestSchema):
    mode: Literal["all", "new"] = Field("all", description="all: every live entity of the program; new: only the "
                                                           "entities this monitor has never screened.")


MAX_SELECTED = 10_000


class ProgramRunRequest(RequestSchema):
    check_type: RunType = Field(
        description=f"The screening to run; one of {', '.join(MONITOR_TYPES)}, enabled on the account.")
    entity_uuids: list[uuid_mod.UUID] | None = Field(
        None, min_length=1, max_length=MAX_SELECTED,
        description="The entities of the program to screen (at most 10,000); omitted: every live entity of it.")
    config: RunConfig = Field(None, description=CONFIG_DOC)

    model_config = {**RequestSchema.model_config, "json_schema_extra": {"examples": [
        {"check_type": "pep_sanction_check"},
        {"check_type": "pep_sanction_check", "entity_uuids": ["0b6f3c1e-6a57-4a8e-9d0e-2f4b7c9a1d35"],
         "config": {"similarity_threshold": "90"}}]}}


class MonitorOut(ResponseSchema):
    uuid: uuid_mod.UUID
    monitor_number: str
    monitor_name: str
    monitor_check_type: str
    monitor_check_type_name: str
    status: str
    process_status: str | None
    process_status_comment: str | None
    schedule: str
    schedule_name: str | None
    config: dict[str, Any]
    last_run_at: UtcDateTime | None
    has_run_before: bool
    next_run_at: UtcDateTime | None = Field(
        validation_alias=AliasChoices("next_scheduled_run", "next_run_at"), description=(
        "The next scheduled run (null: manual, or the monitor or its program paused)."))
    last_events_raised: int | None = Field(description="Events raised by the latest finished run.")
    program_uuid: uuid_mod.UUID
    created_at: UtcDateTime
    updated_at: UtcDateTime


class MonitorDeletedOut(MonitorOut):
    deleted_at: UtcDateTime | None


class MonitorRunOut(ResponseSchema):
    uuid: uuid_mod.UUID
    monitor_uuid: uuid_mod.UUID | None = Field(description="null: a one-off run (POST /programs/{uuid}/runs).")
    program_uuid: uuid_mod.UUID
    trigger: Literal[TRIGGERS]
    mode: Literal[MODES] = Field(description="all, new (entities the monitor never screened), delta (a list "
                                             "update's), selected (a one-off run over chosen entities).")
    status: Literal[RUN_STATUSES]
    check_type: str
    config: dict[str, Any]
    entities_total: int
    entities_processed: int
    entities_skipped: int = Field(description="Entities deleted or archived after the run began (not screened).")
    checks_charged: int
    credits_charged: int
    events_raised: int
    list_versions_before: dict[str, str] | None
    list_versions_after: dict[str, str] | None
    engine_version: str | None
    list_update: dict[str, Any] | None
    scheduled_for: UtcDateTime | None
    started_at: UtcDateTime | None
    ended_at: UtcDateTime | None
    error: str | None
    created_at: UtcDateTime
