"""Screening index build, back to back between versions: the wall and CPU time of building the index of the
records in the bench database, the part of it that computes the near parts (`index_writer._near_arrays`), and
the build process's peak memory.

    .venv/bin/python bench/index_build.py [--root DIR] [--database-url URL] [--no-gc]

The records are those `bench/screening_scale.py` imported (run it once with `--sizes 1000000`; this script
imports nothing). `--root`: the checkout whose code builds (default: this one); to compare with an earlier
engine, export it (`git archive <commit> | tar -x -C /tmp/exp-<commit>`) and pass that directory, running this
script from here. Each run is a new process; alternate the versions, the machine's speed drifts. `--no-gc`:
the cyclic garbage collector off for the whole process (what engine 3.4.0's build does for itself).
Prints one JSON line: wall and CPU seconds, the near parts' seconds and count, peak RSS (VmHWM) in MB.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_DB = "postgresql+psycopg://postgres@127.0.0.1:5432/bench_screening_scale"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    parser.add_argument("--database-url", default=DEFAULT_DB)
    parser.add_argument("--no-gc", action="store_true")
    args = parser.parse_args()
    root = str(Path(args.root).resolve())
    sys.path.insert(0, root)
    os.chdir(root)
    from app import create_app
    from app.extensions import db
    from app.screening import index_writer
    from app.screening.index import ScreeningIndex
    from app.screening.store import iter_index_rows

    app = create_app({"SQLALCHEMY_DATABASE_URI": args.database_url, "TESTING": True, "RATELIMIT_ENABLED": False})
    near: dict[str, float] = {}
    near_arrays = index_writer._near_arrays

    def timed(*a, **k):
        wall, cpu = time.perf_counter(), time.process_time()
        out = near_arrays(*a, **k)
        near.update(near_wall=round(time.perf_counter() - wall, 1), near_cpu=round(time.process_time() - cpu, 1),
                    near_parts=len(out["n_ids"]))
        return out

    index_writer._near_arrays = timed
    if args.no_gc:
        gc.disable()
    with app.app_context():
        target = Path(tempfile.mkdtemp(prefix="bench-index-build-")) / "index"
        wall, cpu = time.perf_counter(), time.process_time()
        stats = ScreeningIndex.write(iter_index_rows(db.session), {}, target)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        shutil.rmtree(target.parent)
    with open("/proc/self/status") as fh:
        peak = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM"))
    print(json.dumps({"root": root, "records": stats["records"], "wall": round(wall, 1), "cpu": round(cpu, 1),
                      **near, "peak_rss_mb": peak // 1024, "load": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
