"""Screening index at scale: build time, size on disk, memory of screening processes and query latency at
100k, 300k and 1M synthetic list records.

    .venv/bin/python bench/screening_scale.py [--sizes 100000,300000,1000000] [--queries 2000]
        [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/bench_screening_scale] [--seed 7]
        [--reuse] [--scratch DIR]

`--reuse`: keep the records already in the bench database when they are those of this size and seed (the
import of 1M records takes minutes); imports otherwise. Use it with one size at a time. `--scratch DIR`: build
the index and write the queries there (kept afterwards) instead of a temporary directory.

For each size:
1. empties the screening tables of the bench database (created and migrated if needed) and imports N records
   with the code of `flask lists generate-synthetic --count N --seed S` (timed, not a target);
2. builds the index into a scratch SCREENING_INDEX_DIR with the code of `flask screening build-index`
   (`index_dir.build_current_index`: reads the database, writes, fsyncs, renames): build seconds, bytes on disk;
3. starts a screening process (a fresh interpreter that creates the Flask app and opens the built index,
   memory-mapped) and runs the queries: half are listed names with one typo, half are names of the same
   locales generated with another seed (mostly not listed); default config (medium_search, 80). Latency of
   each `screen()` call, caches cold at the start: p50 / p99 / mean;
4. while the first process is still alive, a second process opens the same index and runs the same
   queries: its private memory (USS: what it adds to the machine, the index pages being shared) and RSS.
Peak RSS is VmHWM of /proc/self/status; USS is Private_Clean + Private_Dirty of /proc/self/smaps_rollup.
Prints one JSON line per size and a Markdown table.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/bench_screening_scale"


def _proc_memory() -> dict[str, int]:
    out: dict[str, int] = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmRSS:", "VmHWM:")):
                out[line.split(":")[0]] = int(line.split()[1]) * 1024
    try:
        with open("/proc/self/smaps_rollup") as fh:
            for line in fh:
                parts = line.split()
                if parts and parts[0].rstrip(":") in ("Pss", "Private_Clean", "Private_Dirty", "Shared_Clean"):
                    out[parts[0].rstrip(":")] = int(parts[1]) * 1024
    except OSError:
        pass
    out["USS"] = out.get("Private_Clean", 0) + out.get("Private_Dirty", 0)
    return out


def child(directory: str, queries_path: str, database_url: str) -> None:
    """A screening process: the Flask app, the index opened from disk, the queries timed one by one."""
    from app import create_app
    from app.screening.engine import Subject, screen
    from app.screening.index import ScreeningIndex
    create_app({"SQLALCHEMY_DATABASE_URI": database_url, "TESTING": True, "RATELIMIT_ENABLED": False})
    base = _proc_memory()
    t0 = time.perf_counter()
    index = ScreeningIndex.open(directory)
    open_s = time.perf_counter() - t0
    queries = json.loads(Path(queries_path).read_text())
    latencies, cpu = [], []
    hits = 0
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        result = screen(index, Subject(full_name=q))
        latencies.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        hits += bool(result.results)
    latencies.sort()
    cpu.sort()
    mem = _proc_memory()
    report = {"open_seconds": round(open_s, 4), "queries": len(queries), "with_results": hits,
              "p50_ms": round(1000 * latencies[len(latencies) // 2], 3),
              "p99_ms": round(1000 * latencies[int(len(latencies) * 0.99) - 1], 3),
              "mean_ms": round(1000 * statistics.fmean(latencies), 3),
              "cpu_p50_ms": round(1000 * cpu[len(cpu) // 2], 3), "cpu_p99_ms": round(1000 * cpu[int(len(cpu) * 0.99) - 1], 3),
              "base_rss": base["VmRSS"], "rss": mem["VmRSS"], "peak_rss": mem["VmHWM"], "uss": mem["USS"],
              "pss": mem.get("Pss", 0), "cache_bytes": index.cache_bytes()}
    print(json.dumps(report), flush=True)
    sys.stdin.readline()  # stay alive (pages mapped) until the parent has measured the other process
    mem = _proc_memory()
    print(json.dumps({"uss_end": mem["USS"], "rss_end": mem["VmRSS"]}), flush=True)


def _queries(index_dir: str, count: int, seed: int) -> list[str]:
    from app.screening.index import ScreeningIndex
    from app.screening.synthetic import _typo, iter_records
    index = ScreeningIndex.open(index_dir)
    rng = random.Random(seed)
    listed = [_typo(rng, index.name_text[rng.randrange(len(index.name_text))]) for _ in range(count // 2)]
    unlisted = [r.caption for r in iter_records(count - len(listed), seed + 1000)]
    out = listed + unlisted
    rng.shuffle(out)
    return out


def _start_child(index_dir: str, queries_path: str, database_url: str) -> tuple[subprocess.Popen, dict]:
    proc = subprocess.Popen([sys.executable, __file__, "--child", index_dir, "--queries-file", queries_path,
                             "--database-url", database_url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, cwd=ROOT)
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"child failed (exit {proc.wait()})")
    return proc, json.loads(line)


def _finish(proc: subprocess.Popen) -> dict:
    proc.stdin.write("\n")
    proc.stdin.flush()
    out = json.loads(proc.stdout.readline())
    proc.wait()
    return out


def _ensure_database(url: str) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    u = make_url(url)
    if not u.drivername.startswith("postgresql"):
        return
    admin = create_engine(u.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if not conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": u.database}).scalar():
            conn.execute(text(f'CREATE DATABASE "{u.database}"'))
    admin.dispose()


def _already_imported(n: int, seed: int) -> bool:
    """Whether the bench database holds exactly the records of `generate(n, seed)` (and nothing else)."""
    from app.extensions import db
    from app.screening import store
    from app.screening.models import ScreeningList, ScreeningListVersion
    lists = db.session.query(ScreeningList).all()
    if not lists:
        return False
    for lst in lists:
        latest = (db.session.query(ScreeningListVersion).filter_by(list_id=lst.id, version=lst.current_version)
                  .one_or_none())
        if latest is None or latest.source != f"synthetic:{n}:{seed}":
            return False
    return store.active_record_count(db.session) == n


def run_size(app, n: int, seed: int, queries: int, database_url: str, scratch: Path, reuse: bool = False) -> dict:
    from sqlalchemy import text

    from app.core.transactions import transaction
    from app.extensions import db
    from app.screening import index_dir, store
    from app.screening.synthetic import generate
    with app.app_context():
        gen_s = import_s = None
        if not (reuse and _already_imported(n, seed)):
            db.session.remove()
            with db.engine.begin() as conn:
                conn.execute(text("TRUNCATE screening_records, screening_list_versions, screening_lists"
                                  " RESTART IDENTITY CASCADE"))
            t0 = time.perf_counter()
            parsed = generate(n, seed)
            gen_s = time.perf_counter() - t0
            with transaction():
                store.save_list(db.session, parsed, fmt="synthetic", source=f"synthetic:{n}:{seed}",
                                checksum=f"synthetic:{n}:{seed}")
            import_s = time.perf_counter() - t0 - gen_s
            del parsed
        db.session.remove()
        root = scratch / f"index-{n}"
        app.config["SCREENING_INDEX_DIR"] = str(root)
        load = os.getloadavg()
        report = index_dir.build_current_index(db.session, force=True)  # timed even when --scratch holds it
        db.session.remove()
    qpath = scratch / f"queries-{n}.json"
    qpath.write_text(json.dumps(_queries(report.path, queries, seed)))
    first, a = _start_child(report.path, str(qpath), database_url)
    second, b = _start_child(report.path, str(qpath), database_url)
    b_end = _finish(second)
    a_end = _finish(first)
    return {"records": n, "names": report.names,
            "generate_seconds": round(gen_s, 1) if gen_s is not None else "reused",
            "import_seconds": round(import_s, 1) if import_s is not None else "reused", "build_seconds": report.seconds,
            "build_cpu_seconds": report.cpu_seconds, "index_bytes": report.bytes,
            "load_before_build": [round(x, 2) for x in load], "first": {**a, **a_end}, "second": {**b, **b_end},
            "load_after": [round(x, 2) for x in os.getloadavg()]}


def _mb(x: int) -> str:
    return f"{x / 1e6:,.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,300000,1000000")
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--database-url", default=DEFAULT_DB)
    parser.add_argument("--reuse", action="store_true",
                        help="keep the records in the database when they are this size's and seed's")
    parser.add_argument("--scratch", default=None, help="directory for the index and queries (kept)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--queries-file", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.queries_file, args.database_url)
        return

    from flask_migrate import upgrade

    from app import create_app
    _ensure_database(args.database_url)
    app = create_app({"SQLALCHEMY_DATABASE_URI": args.database_url, "TESTING": True, "RATELIMIT_ENABLED": False})
    with app.app_context():
        upgrade()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-screening-scale-") as tmp:
        scratch = Path(args.scratch) if args.scratch else Path(tmp)
        scratch.mkdir(parents=True, exist_ok=True)
        for n in (int(s) for s in args.sizes.split(",")):
            row = run_size(app, n, args.seed, args.queries, args.database_url, scratch, args.reuse)
            print(json.dumps(row), flush=True)
            rows.append(row)
    print(f"\nmachine: {os.cpu_count()} cores, Python {sys.version.split()[0]}\n")
    print("| records | names | build (wall / CPU) | on disk | 1st process peak RSS | 2nd process adds (USS) | 2nd RSS"
          " | p50 | p99 | mean | CPU p50 / p99 | load (1 min) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        a, b = r["first"], r["second"]
        print(f"| {r['records']:,} | {r['names']:,} | {r['build_seconds']:.1f} s / {r['build_cpu_seconds']:.1f} s"
              f" | {_mb(r['index_bytes'])} | {_mb(a['peak_rss'])} | {_mb(b['uss'])} | {_mb(b['rss'])}"
              f" | {a['p50_ms']:.2f} ms | {a['p99_ms']:.1f} ms | {a['mean_ms']:.2f} ms"
              f" | {a['cpu_p50_ms']:.2f} / {a['cpu_p99_ms']:.1f} ms | {r['load_before_build'][0]:.1f} |")


if __name__ == "__main__":
    main()
