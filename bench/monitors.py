#!/usr/bin/env python3
"""Monitor runs at scale: a full pep_sanction_check run over N synthetic entities on PostgreSQL, Redis and one RQ
worker (a SimpleWorker in this process, burst mode), a second run on unchanged lists (events raised), and the growth
of the tables a run writes (evidence rows, chunks, ledger, checks, events) per 100,000 entities.

    python bench/monitors.py [--entities 100000] [--database monitor_bench] [--redis-db 12]

The lists must be in the bench database already (`flask lists import`, e.g. ../shared/data/lists: OFAC, UN, US
Congress); the script creates the database and migrates it when missing, and prints figures (it writes nothing
into the repository)."""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TABLES = ("monitor_results", "monitor_chunks", "monitor_runs", "credit_ledger", "checks", "events", "alert_states")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entities", type=int, default=100_000)
    ap.add_argument("--database", default="monitor_bench")
    ap.add_argument("--redis-db", type=int, default=12)
    ap.add_argument("--changed", type=int, default=1000, help="records of the OFAC list a list update changes")
    args = ap.parse_args()
    url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{args.database}"
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-tc", f"CREATE DATABASE {args.database}"],
                   capture_output=True)
    os.environ.update(DATABASE_URL=url, REDIS_URL=f"redis://127.0.0.1:6379/{args.redis_db}", FLASK_APP="wsgi.py")
    from flask_migrate import upgrade
    from redis import Redis
    from rq import SimpleWorker
    from sqlalchemy import func, select, text

    from app import create_app
    from app.core.transactions import commit
    from app.extensions import db
    from app.jobs import QUEUES, _redis_connection
    app = create_app()
    Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    with app.app_context():
        upgrade()
        from app.accounts.services import cli_actor, get_account
        from app.billing.services import open_account, prices
        from app.entities.synthetic import generate_entities
        from app.events.models import Event
        from app.monitors import services
        from app.programs.services import create_program
        from app.screening.models import ScreeningRecord
        if not db.session.scalar(select(func.count()).select_from(ScreeningRecord)):
            sys.exit("no lists in the bench database: flask lists import them first (see the docstring)")
        acct = open_account(name=f"Monitor bench {uuid.uuid4().hex[:6]}", email=f"bench-{uuid.uuid4().hex[:8]}@example.com",
                            password="bench-password-1", credit=10 * args.entities)
        actor = cli_actor(get_account(uuid.UUID(acct["account_uuid"])))
        program = create_program(actor, {"program_name": "Bench customers"})
        db.session.commit()
        t = time.perf_counter()
        generate_entities(actor, program.uuid, args.entities, seed=5)
        db.session.commit()
        print(f"generated {args.entities:,} entities in {time.perf_counter() - t:.1f} s")
        monitor = services.create_monitor(actor, program.uuid, {
            "monitor_name": "Bench", "monitor_check_type": "pep_sanction_check", "status": "active",
            "schedule": "manual"})
        db.session.commit()

        def sizes() -> dict[str, int]:
            return {t: db.session.scalar(text(f"SELECT pg_total_relation_size('{t}')")) for t in TABLES}

        def work() -> float:
            t0 = time.perf_counter()
            worker = SimpleWorker([app.config["RQ_QUEUE_PREFIX"] + q for q in QUEUES],
                                  connection=_redis_connection(app, worker=True))
            worker.work(burst=True, with_scheduler=False)
            return time.perf_counter() - t0

        from app.checks.services import index_for_run
        index_for_run()  # the worker's index, loaded before the clock starts (as a running worker has it)
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        for n in (1, 2):
            before = sizes()
            events0 = db.session.scalar(select(func.count()).select_from(Event))
            t0 = time.perf_counter()
            run = services.run_monitor(actor, monitor.uuid, {"mode": "all"})
            commit()  # the chunks are enqueued after the commit
            queued = time.perf_counter() - t0
            took = work() + queued
            db.session.expire_all()
            run = db.session.get(type(run), run.id)
            events = db.session.scalar(select(func.count()).select_from(Event)) - events0
            after = sizes()
            grow = {k: (after[k] - before[k]) * 100_000 / args.entities / 1e6 for k in TABLES}
            print(f"run {n}: {run.status}, {run.entities_processed:,} entities in {took:.1f} s "
                  f"({run.entities_processed / took:,.0f} entities/s; launch {queued:.2f} s), {events} events, "
                  f"{run.credits_charged:,} credits at {prices()['pep_sanction_check']} each")
            print("  growth per 100,000 entities (MB): " + ", ".join(f"{k} {v:.2f}" for k, v in grow.items()))
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS {rss:.0f} MB (after the index was loaded: {rss0:.0f} MB; the runs added {rss - rss0:.0f} MB)")
        list_update(actor, monitor, work, args.changed)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"peak RSS after the list update {peak:.0f} MB (its index of the customers' names added "
              f"{peak - rss:.0f} MB)")


def list_update(actor, monitor, work, changed: int) -> None:
    """A new version of the OFAC list in which `changed` records gained a sanction programme (a deciding fact):
    stored, its index built (as `flask lists import` does), announced, and the delta runs worked off. Prints the
    seconds from the version stored to its events raised."""
    from sqlalchemy import func, select, update

    from app.core.transactions import commit
    from app.events.models import Event
    from app.extensions import db
    from app.monitors import services
    from app.monitors.models import Monitor, MonitorRun
    from app.screening import index_dir, store
    from app.screening.models import ScreeningList, ScreeningRecord
    from app.screening.records import ParsedList
    name = "us_ofac_sdn"
    db.session.execute(update(Monitor).where(Monitor.id != monitor.id).values(status="paused"))  # earlier benches'
    commit()
    ids = list(db.session.scalars(select(ScreeningRecord.record_id).join(
        ScreeningList, ScreeningList.id == ScreeningRecord.list_id).where(
        ScreeningList.name == name, ScreeningRecord.removed_in_version.is_(None))))
    pairs = list(store.iter_records(db.session, name, ids))
    records = [r for _, r in pairs]
    for r in records[:changed]:
        r.sanctions = [*r.sanctions, {"programs": [f"BENCH-{uuid.uuid4().hex[:6]}"], "authority": "bench"}]
    events0 = db.session.scalar(select(func.count()).select_from(Event))
    summary = store.save_list(db.session, ParsedList(info=pairs[0][0], records=records), fmt="bench",
                              source="bench/monitors.py", checksum=uuid.uuid4().hex)
    commit()
    stored = time.perf_counter()
    index_dir.build_current_index(db.session)
    db.session.rollback()
    indexed = time.perf_counter()
    runs = services.rescreen_for_list_update(name, summary.version)
    commit()
    nominated = time.perf_counter()
    work()
    done = time.perf_counter()
    db.session.expire_all()
    events = db.session.scalar(select(func.count()).select_from(Event)) - events0
    screened = sum(db.session.get(MonitorRun, r.id).entities_processed for r in runs)
    print(f"list update: {summary.changed:,} records changed; index built {indexed - stored:.1f} s, candidates "
          f"nominated {nominated - indexed:.1f} s ({screened:,} entities re-screened), events raised "
          f"{done - stored:.1f} s after the version was stored ({events} events)")


if __name__ == "__main__":
    main()
