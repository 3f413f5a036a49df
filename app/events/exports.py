"""The events' CSV export as a request gets it: streamed in the request up to HEAVY_EXPORT_SYNC_ROWS events
(measured: docs/decisions.md), else written by a heavy job (app/heavy) into a file the person downloads."""
from __future__ import annotations

from typing import Mapping

from flask import current_app
from sqlalchemy import func, select

from app.core.actor import Actor
from app.core.csvsafe import csv_lines
from app.events import queries
from app.events.models import Event
from app.extensions import db
from app.heavy import services as heavy
from app.heavy.models import HeavyJob


def export_count(actor: Actor, api_args: Mapping[str, str]) -> int:
    params = queries.list_params(api_args)
    return db.session.scalar(select(func.count(Event.id)).where(*queries.conditions_for(actor, params))) or 0


def export_request(actor: Actor, api_args: Mapping[str, str], filename: str) -> HeavyJob | None:
    """None when the export is small enough to stream now; else its heavy job (the caller commits). `api_args`
    are the events list's parameters (`filter[...]`, `sort`), as `queries.list_params` reads them."""
    rows = export_count(actor, api_args)
    if rows <= int(current_app.config["HEAVY_EXPORT_SYNC_ROWS"]):
        return None
    rows = min(rows, queries.EXPORT_LIMIT)
    return heavy.submit(actor, "events_export", params={"args": dict(api_args), "filename": filename,
                                                        "rows": rows},
                        request_key=heavy.request_key("events_export", repr(sorted(api_args.items())), actor),
                        message=f"Waiting for a worker to export {rows:,} events.")


@heavy.handler("events_export", "pdf", "Events export (CSV)")
def run_events_export(job: HeavyJob, actor: Actor, progress) -> heavy.Outcome:
    params = job.params or {}
    total = max(1, int(params.get("rows") or 1))
    progress(5, f"Exporting {total:,} events.")
    out: list[str] = []
    for i, line in enumerate(csv_lines(queries.export_rows(actor, queries.list_params(params.get("args") or {})))):
        out.append(line)
        if i and i % 2000 == 0:
            progress(5 + 90 * i // total, f"Exported {i:,} of {total:,} events.")
    data = "".join(out).encode("utf-8")
    return heavy.Outcome(data=data, filename=params.get("filename") or "events.csv", content_type="text/csv",
                         summary={"rows": max(0, len(out) - 1)})
