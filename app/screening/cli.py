"""flask CLI for the screening lists and the engine.

    flask lists import --format FORMAT PATH [--list NAME]
        (ofac-csv, un-xml, eu-xml, uk-xml, dfat-xlsx, ca-xml, ftm, senzing, asic-banned: docs/lists.md)
    flask lists status [--json]
    flask lists update [--list NAME]
    flask lists accept|reject LIST:N      (app/lists/cli.py: the operator's decision, the Lists page's service)
    flask lists generate-synthetic --count N [--seed S]
    flask screening build-index [--force]
    flask screening screen-batch --input Q.csv --output R.jsonl [--search-type medium_search] [--threshold 80]
    flask screening compare-pairs --input P.csv --output S.csv [--search-type medium_search]
    flask screening screen NAME [--dob 1970] [--country IR] [--schema Person]
"""
from __future__ import annotations

import csv
import json
import shutil
import sys
import time
from pathlib import Path

import click
from flask import Flask, current_app
from flask.cli import AppGroup

from app import signals
from app.core.transactions import transaction
from app.extensions import db
from app.screening import index_dir, store
from app.screening.constants import SEARCH_TYPES
from app.screening.engine import MAX_RESULTS, ConfigError, ScreeningConfig, Subject, screen
from app.screening.importers import FORMATS, ListFormatError, parse_list
from app.screening.index_holder import holder
from app.screening.pairs import pair_score
from app.screening.sources import FetchError, fetch, sources

lists_cli = AppGroup("lists", help="PEP and sanctions lists: import, update, status.")
screening_cli = AppGroup("screening", help="The screening engine: batch screening and name comparison.")

QUERY_COLUMNS = ("full_name", "first_name", "middle_name", "last_name", "gender", "date_of_birth",
                 "place_of_birth", "nationality")
SCHEMA_ALIASES = {"": "Person", "person": "Person", "individual": "Person", "organization": "Organization",
                  "organisation": "Organization", "business": "Organization", "company": "Company",
                  "legalentity": "LegalEntity", "entity": "LegalEntity", "vessel": "Vessel",
                  "airplane": "Airplane", "aircraft": "Airplane"}


def _fail(message: str) -> None:
    click.echo(f"Error: {message}", err=True)
    sys.exit(2)


def _import(fmt: str, path: Path, list_name: str | None, source: str) -> store.ImportSummary:
    parsed = parse_list(fmt, path, list_name=list_name)  # a bad file fails here, before any write
    checksum = store.checksum_of(path)
    with transaction():
        return store.save_list(db.session, parsed, fmt=fmt, source=source, checksum=checksum,
                               hold_fraction=current_app.config.get("LIST_HOLD_REMOVED_FRACTION"),
                               hold_min=current_app.config.get("LIST_HOLD_MIN_REMOVED", 10))


def _announce(stored: list[store.ImportSummary]) -> None:
    """After the new versions' index is built: tell the domains that react to list changes (monitors re-screen
    the customers the changed records concern)."""
    for summary in stored:
        if summary.created:
            signals.list_version_stored.send(summary.list_name, version=summary.version)


def _report(summary: store.ImportSummary) -> None:
    if summary.held:
        click.echo(f"{summary.list_name}: version {summary.version} HELD, not applied: it would remove "
                   f"{summary.removed} of {summary.records} records (more than the allowed share). Check the "
                   f"publication; then `flask lists accept {summary.list_name}:{summary.version}` or `flask lists "
                   f"reject {summary.list_name}:{summary.version}`.", err=True)
        return
    if not summary.created:
        click.echo(f"{summary.list_name}: unchanged since version {summary.version} ({summary.records} records);"
                   " nothing stored")
    else:
        click.echo(f"{summary.list_name}: version {summary.version} stored, {summary.records} records"
                   f" (+{summary.added} added, ~{summary.changed} changed, -{summary.removed} removed)")
    for warning in summary.warnings:
        click.echo(f"warning: {warning}", err=True)


def _build_index() -> None:
    """After an import: build the index of the new list versions (SCREENING_INDEX_DIR), figures on stderr."""
    if index_dir.index_root() is None:
        return
    report = index_dir.build_current_index(db.session)
    db.session.rollback()
    click.echo(json.dumps({"index": report.to_dict()}), err=True)


NO_INDEX = click.option("--no-index", is_flag=True, help="Do not build the screening index afterwards.")


@lists_cli.command("import")
@click.option("--format", "fmt", type=click.Choice(FORMATS), required=True, help="The publication's format.")
@click.option("--list", "list_name", default=None, help="Store under this list name (default: from the file).")
@NO_INDEX
@click.argument("path", type=click.Path(path_type=Path))
def import_list(fmt: str, list_name: str | None, no_index: bool, path: Path) -> None:
    """Import a publication as a new version of its list (a folder for ofac-csv, a file otherwise), then build
    the screening index of the new versions."""
    try:
        summary = _import(fmt, path, list_name, str(path.resolve()))
    except ListFormatError as exc:
        _fail(f"{exc}. Nothing was imported.")
    _report(summary)
    if not no_index:
        _build_index()
    _announce([summary])


@lists_cli.command("generate-synthetic")
@click.option("--count", type=click.IntRange(1, 5_000_000), required=True, help="How many records.")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--list", "list_name", default="synthetic", show_default=True, help="Store under this list name.")
@NO_INDEX
def generate_synthetic(count: int, seed: int, list_name: str, no_index: bool) -> None:
    """Import COUNT synthetic records (names of many locales and scripts, aliases, dates of birth, countries)
    as a new version of a list, for benchmarks. Same count and seed: same records."""
    from app.screening.synthetic import generate
    started = time.perf_counter()
    parsed = generate(count, seed, list_name)
    generated = time.perf_counter()
    with transaction():
        summary = store.save_list(db.session, parsed, fmt="synthetic", source=f"synthetic:count={count},seed={seed}",
                                  checksum=f"synthetic:{count}:{seed}")
    _report(summary)
    click.echo(json.dumps({"records": count, "generate_seconds": round(generated - started, 3),
                           "import_seconds": round(time.perf_counter() - generated, 3)}), err=True)
    if not no_index:
        _build_index()


@lists_cli.command("status")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per list.")
def status(as_json: bool) -> None:
    """What is loaded: each list's version, record count, and last import."""
    rows = store.list_status(db.session)
    if as_json:
        for row in rows:
            click.echo(json.dumps(row))
        return
    if not rows:
        click.echo("No lists loaded. Use `flask lists import` or `flask lists update`.")
        return
    click.echo(f"{'list':<20} {'kind':<9} {'ver':>4} {'records':>8}  {'imported (UTC)':<21} {'last change':<22} source")
    for r in rows:
        diff = r["last_diff"] or {}
        change = f"+{diff.get('added', 0)} ~{diff.get('changed', 0)} -{diff.get('removed', 0)}"
        click.echo(f"{r['list']:<20} {r['kind']:<9} {r['version']:>4} {r['records']:>8}  "
                   f"{r['imported_at'] or '-':<21} {change:<22} {r['source'] or '-'}")


@lists_cli.command("update")
@click.option("--list", "only", multiple=True, help="Update only this list (repeatable).")
@NO_INDEX
def update_lists(only: tuple[str, ...], no_index: bool) -> None:
    """Fetch the official publications from the configured URLs (docs/lists.md) and import them. A list whose
    download fails, arrives truncated or does not read as its format is left as it was; the others are imported."""
    configured = sources(current_app.config.get("SCREENING_LIST_SOURCES"),
                         current_app.config.get("SCREENING_LIST_URLS"))
    names = list(only) or sorted(configured)
    unknown = [n for n in names if n not in configured]
    if unknown:
        _fail(f"no source configured for {', '.join(unknown)} (known: {', '.join(sorted(configured))})")
    failures = 0
    stored: list[store.ImportSummary] = []
    for name in names:
        spec = configured[name]
        try:
            folder, target = fetch(name, spec, timeout=current_app.config.get("LIST_FETCH_TIMEOUT_SECONDS", 120))
        except FetchError as exc:
            click.echo(f"Error: {name}: {exc}. Nothing was changed for this list.", err=True)
            failures += 1
            continue
        try:
            summary = _import(spec["format"], target, name, ", ".join(spec["files"].values()))
            _report(summary)
            stored.append(summary)
        except ListFormatError as exc:
            click.echo(f"Error: {name}: {exc}. Nothing was imported.", err=True)
            failures += 1
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    if not no_index and failures < len(names):
        _build_index()
    _announce(stored)
    if failures:
        sys.exit(2)


def _config(search_type: str, threshold: int, max_results: int) -> ScreeningConfig:
    try:
        return ScreeningConfig(search_type=search_type, similarity_threshold=threshold, max_results=max_results)
    except ConfigError as exc:
        _fail(str(exc))
        raise  # unreachable


def _index():
    index = holder.get(db.session)
    if not index.records:
        _fail("no lists loaded; run `flask lists import` first")
    return index


@screening_cli.command("screen-batch")
@click.option("--input", "input_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True)
@click.option("--output", "output_path", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--search-type", type=click.Choice(SEARCH_TYPES), default="medium_search", show_default=True)
@click.option("--threshold", type=int, default=80, show_default=True, help="similarity_threshold, 10..100")
@click.option("--max-results", type=click.Choice([str(n) for n in MAX_RESULTS]), default="25", show_default=True)
def screen_batch(input_path: Path, output_path: Path, search_type: str, threshold: int, max_results: str) -> None:
    """Screen every row of a CSV (full_name, first_name, middle_name, last_name, gender, date_of_birth,
    place_of_birth, nationality); write one JSON line per row: {"row": i, "results": [...]} (i from 0)."""
    config = _config(search_type, threshold, int(max_results))
    with input_path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        columns = set(reader.fieldnames or ())
        if not columns & {"full_name", "first_name", "last_name"}:
            _fail(f"{input_path}: expected a header with {', '.join(QUERY_COLUMNS)}")
        rows = list(reader)
    started = time.perf_counter()
    index = _index()
    built = time.perf_counter()
    with output_path.open("w", encoding="utf-8") as out:
        for i, row in enumerate(rows):
            result = screen(index, Subject.from_dict(row), config)
            out.write(json.dumps({"row": i, "results": result.results}, ensure_ascii=False) + "\n")
    done = time.perf_counter()
    rate = len(rows) / (done - built) if done > built else 0.0
    click.echo(json.dumps({"rows": len(rows), "seconds": round(done - built, 3), "per_second": round(rate, 1),
                           "index_ready_seconds": round(built - started, 3), "index_records": len(index.records),
                           "index_bytes": index.stats.bytes, "index_dir": str(index.directory or ""),
                           "lists": index.list_versions, "engine": result.engine_version if rows else None}),
               err=True)


@screening_cli.command("build-index")
@click.option("--force", is_flag=True, help="Rebuild even if the index of the loaded versions is built.")
def build_index(force: bool) -> None:
    """Build the index of the loaded list versions into SCREENING_INDEX_DIR (what every process that screens
    opens); print its figures (records, names, seconds, bytes) as JSON on stderr."""
    if index_dir.index_root() is None:
        _fail("SCREENING_INDEX_DIR is not configured")
    report = index_dir.build_current_index(db.session, force=force)
    db.session.rollback()
    click.echo(json.dumps(report.to_dict()), err=True)


@screening_cli.command("compare-pairs")
@click.option("--input", "input_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), required=True)
@click.option("--output", "output_path", type=click.Path(dir_okay=False, path_type=Path), required=True)
@click.option("--search-type", type=click.Choice(SEARCH_TYPES), default="medium_search", show_default=True)
def compare_pairs(input_path: Path, output_path: Path, search_type: str) -> None:
    """Score name pairs (name1,name2,schema) as the engine would for that schema; adds a `score` column (0..1)."""
    with input_path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        if not {"name1", "name2"} <= set(reader.fieldnames or ()):
            _fail(f"{input_path}: expected a header name1,name2,schema")
        rows = list(reader)
    with output_path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["name1", "name2", "schema", "score"])
        for row in rows:
            raw_schema = (row.get("schema") or "").strip()
            schema = SCHEMA_ALIASES.get(raw_schema.lower(), raw_schema or "Person")
            score = pair_score(row.get("name1") or "", row.get("name2") or "", schema, search_type)
            writer.writerow([row.get("name1"), row.get("name2"), raw_schema, f"{score:.4f}"])
    click.echo(f"{len(rows)} pairs scored", err=True)


@screening_cli.command("screen")
@click.argument("name")
@click.option("--dob", default=None)
@click.option("--country", default=None, help="Nationality: ISO-2 code or country name.")
@click.option("--schema", default="Person", show_default=True)
@click.option("--search-type", type=click.Choice(SEARCH_TYPES), default="medium_search", show_default=True)
@click.option("--threshold", type=int, default=80, show_default=True)
def screen_one(name: str, dob: str | None, country: str | None, schema: str, search_type: str,
               threshold: int) -> None:
    """Screen one name and print the result (with explanations) as JSON."""
    config = _config(search_type, threshold, 25)
    schema = SCHEMA_ALIASES.get(schema.lower(), schema)
    field = "business_name" if schema in ("Organization", "Company", "LegalEntity") else (
        "vessel_name" if schema == "Vessel" else "full_name")
    subject = Subject(**{field: name}, dob=dob, nationality=country, schema=schema)
    click.echo(json.dumps(screen(_index(), subject, config).to_dict(), indent=2, ensure_ascii=False))


def register(app: Flask) -> None:
    app.cli.add_command(lists_cli)
    app.cli.add_command(screening_cli)
