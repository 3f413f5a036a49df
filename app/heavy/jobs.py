"""The RQ entry points of heavy work: one per queue (a job takes the row's id and its run's id), the sweeper's
tick and the purge of old results."""
from __future__ import annotations

from app import jobs
from app.heavy import services


@jobs.job("pdf", name="run_heavy_pdf", timeout=900)
def run_heavy_pdf(row_id: int, job_id: str | None) -> str | None:
    return services.run(row_id, job_id)


@jobs.job("imports", name="run_heavy_import", timeout=1800)
def run_heavy_import(row_id: int, job_id: str | None) -> str | None:
    return services.run(row_id, job_id)


@jobs.job("maintenance", name="heavy_tick", every="HEAVY_TICK_SECONDS")
def heavy_tick() -> dict[str, int]:
    """Free the slots of lost runs, queue lost jobs again, dispatch what may run (a backstop: dispatching
    happens when a job is asked for and when one ends)."""
    return services.sweep()


@jobs.job("maintenance", name="purge_heavy_results", cron="17 * * * *")
def purge_heavy_results() -> int:
    """Delete the stored PDFs, imports' files and exports past HEAVY_RESULT_TTL_HOURS."""
    return services.purge()
