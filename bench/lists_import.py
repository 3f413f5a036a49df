"""List importers on real publication files: parse time, peak memory, record and name counts, store and index time.

    .venv/bin/python bench/lists_import.py --list ca-xml=/tmp/lists-bench/sema-lmes.xml \
        --list dfat-xlsx=/tmp/lists-bench/regulation8_consolidated.xlsx [--list FORMAT=PATH ...] [--runs 3] [--write]

The files are read from where they are (outside the repository: the official publications, or copies of them kept
as test data by public screening projects; docs/performance.md says which). For each file, in a fresh child process
(so that its peak resident memory is the parse's): the best of --runs parses through `parse_list` (what `flask lists
import` runs), the records by schema, names per record (the caption and every alias), the share of records with an
alias of each kind, of people with a date of birth, of records with a country, an identifier, a program. Then, in
this process, all files are stored into a scratch SQLite database (`store.save_list`, timed), the screening index is
built (timed), and the captions of each list's first 200 sanctioned or PEP records are screened back (the record
found at the default threshold, every jurisdiction): a check that what was read is what the engine screens.
--write replaces the "## List importers on real publications" section of docs/performance.md.
"""
from __future__ import annotations

import _venv  # noqa: F401  (re-runs with the project's interpreter)

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## List importers on real publications"


def measure_one(fmt: str, path: str, runs: int) -> dict:
    from app.screening.importers import parse_list

    times = []
    parsed = None
    for _ in range(runs):
        t0 = time.perf_counter()
        parsed = parse_list(fmt, path)
        times.append(time.perf_counter() - t0)
    records = parsed.records
    names = [1 + len(r.names) for r in records]
    kinds = Counter(k for r in records for k in {n.kind for n in r.names})
    people = [r for r in records if r.schema == "Person"]
    size = Path(path).stat().st_size if Path(path).is_file() else sum(p.stat().st_size for p in Path(path).iterdir())
    return {
        "format": fmt, "file": path, "bytes": size, "list": parsed.info.name, "published": parsed.published_at,
        "parse_s": min(times), "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "records": len(records), "schemas": dict(Counter(r.schema for r in records).most_common()),
        "names_mean": statistics.mean(names), "names_max": max(names), "names_total": sum(names),
        "alias_kinds": {k: v / len(records) for k, v in kinds.items()},
        "dob_share": (sum(1 for r in people if r.birth_dates) / len(people)) if people else None,
        "country_share": sum(1 for r in records if r.countries) / len(records),
        "identifier_share": sum(1 for r in records if r.identifiers) / len(records),
        "program_share": sum(1 for r in records if any(s.get("programs") for s in r.sanctions)) / len(records),
        "pep_share": sum(1 for r in records if r.is_pep) / len(records),
        "position_share": sum(1 for r in records if r.positions) / len(records),
        "warnings": parsed.warnings[:5],
    }


def run_child(fmt: str, path: str, runs: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", fmt, path, "--runs", str(runs)], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def store_and_screen(items: list[tuple[str, str]]) -> dict:
    from flask_migrate import upgrade

    from app import create_app
    from app.core.transactions import transaction
    from app.extensions import db
    from app.screening import store
    from app.screening.engine import Subject, screen
    from app.screening.importers import parse_list

    scratch = tempfile.TemporaryDirectory(prefix="bench-lists-")
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{scratch.name}/bench.db", "TESTING": True,
                      "RATELIMIT_ENABLED": False})
    out: dict = {"store_s": {}, "self_found": {}}
    with app.app_context():
        upgrade()
        firsts = {}
        for fmt, path in items:
            parsed = parse_list(fmt, path)
            if parsed.info.name in firsts:  # two publications of one list: store the second as its own list
                parsed.info.name = f"{parsed.info.name}_{Path(path).stem}".lower()
            screenable = [r for r in parsed.records if r.is_sanctioned or r.is_pep]
            firsts[parsed.info.name] = [(r.id, r.caption, r.schema) for r in screenable[:200]]
            t0 = time.perf_counter()
            with transaction():
                summary = store.save_list(db.session, parsed, fmt=fmt, source=path, checksum=store.checksum_of(path))
            out["store_s"][summary.list_name] = time.perf_counter() - t0
        db.session.remove()
        t0 = time.perf_counter()
        index = store.build_index(db.session)
        out["index_s"] = time.perf_counter() - t0
        out["index_names"] = index.stats.names
        for name, firsts_ in firsts.items():
            found = 0
            for rid, caption, schema in firsts_:
                field = {"Person": "full_name", "Vessel": "vessel_name"}.get(schema, "business_name")
                kind = schema if schema in ("Person", "Vessel") else "Organization"
                subject = Subject(**{field: caption}, schema=kind)
                result = screen(index, subject, {"sanction_countries": [], "max_results": 25}).to_dict()
                found += any(r["record"]["id"] == rid for r in result["results"])
            out["self_found"][name] = (found, len(firsts_))
    return out


def report(rows: list[dict], stored: dict) -> str:
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [SECTION, "",
             f"`bench/lists_import.py`, {when}; Python {platform.python_version()}, {platform.machine()},"
             f" {os.cpu_count()} CPUs shared with other work (figures are one run's, best of the parse runs).", "",
             "| list (format) | file | records | parse | peak memory | names / record (max) | weak | original"
             " script | people with a DOB | with a country | with an identifier | with a program | store |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        k = r["alias_kinds"]
        dob = f"{r['dob_share']:.0%}" if r["dob_share"] is not None else "–"
        lines.append(
            f"| {r['list']} ({r['format']}) | {Path(r['file']).name}, {r['bytes'] / 2**20:.1f} MB | {r['records']:,} |"
            f" {r['parse_s']:.2f} s | {r['peak_rss_mb']:.0f} MB | {r['names_mean']:.2f} ({r['names_max']}) |"
            f" {k.get('weak', 0):.0%} | {k.get('original_script', 0):.0%} | {dob} | {r['country_share']:.0%} |"
            f" {r['identifier_share']:.0%} | {r['program_share']:.0%} | {stored['store_s'][r['list']]:.2f} s |")
    lines += ["", f"Index of all of them: {stored['index_names']:,} names, built in {stored['index_s']:.2f} s."
              " The captions of each list's first 200 sanctioned or PEP records screened back (default threshold,"
              " every jurisdiction): "
              + ", ".join(f"{name} {f}/{n}" for name, (f, n) in stored["self_found"].items()) + ".", ""]
    for r in rows:
        schemas = ", ".join(f"{k} {v:,}" for k, v in r["schemas"].items())
        extra = f"; PEPs {r['pep_share']:.0%}, with a position {r['position_share']:.0%}" if r["pep_share"] else ""
        lines.append(f"- {r['list']}: {schemas}{extra}" + (f"; warnings: {r['warnings']}" if r["warnings"] else ""))
    return "\n".join(lines) + "\n"


def write_section(text: str) -> None:
    path = ROOT / "docs" / "performance.md"
    current = path.read_text(encoding="utf-8")
    start = current.find(SECTION + "\n")
    if start == -1:
        new = current.rstrip("\n") + "\n\n" + text
    else:
        end = current.find("\n## ", start + len(SECTION))
        new = current[:start] + text + ("\n" + current[end + 1:] if end != -1 else "")
    path.write_text(new.rstrip("\n") + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="append", default=[], metavar="FORMAT=PATH")
    parser.add_argument("--one", nargs=2, metavar=("FORMAT", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure_one(args.one[0], args.one[1], args.runs)))
        return
    items = [tuple(item.split("=", 1)) for item in args.list]
    if not items:
        parser.error("give at least one --list FORMAT=PATH")
    rows = []
    seen: set[str] = set()
    for fmt, path in items:
        row = run_child(fmt, path, args.runs)
        if row["list"] in seen:
            row["list"] = f"{row['list']}_{Path(path).stem}".lower()
        seen.add(row["list"])
        rows.append(row)
        print(f"{row['list']}: {row['records']:,} records in {row['parse_s']:.2f} s, {row['peak_rss_mb']:.0f} MB,"
              f" {row['names_mean']:.2f} names/record", file=sys.stderr)
    stored = store_and_screen(items)
    text = report(rows, stored)
    print(text)
    if args.write:
        write_section(text)
        print("docs/performance.md updated", file=sys.stderr)


if __name__ == "__main__":
    main()
