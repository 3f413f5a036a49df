"""Built indexes on disk: one directory per set of list versions, built once, swapped atomically, opened by
every process; the CLI commands that build them and report their figures."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

from flask import current_app

from app.extensions import db
from app.screening import index_dir, index_holder, screen
from app.screening.index import ScreeningIndex
from app.screening.jobs import build_screening_index
from tests.screening.test_store import T0, _save


def _root() -> Path:
    return index_dir.index_root()


def _built(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink())


def test_build_once_per_version_and_swap(app_ctx, lists_dir):
    _save(lists_dir / "ofac")
    first = index_dir.build_current_index(db.session)
    assert first.built and first.records == 5 and first.bytes > 0 and first.list_versions == {"us_ofac_sdn": "v1"}
    root = _root()
    assert _built(root) == [first.key]                          # no temporary directory left behind
    assert os.readlink(root / "current") == first.key
    again = index_dir.build_current_index(db.session)
    assert not again.built and again.key == first.key           # already built: nothing rebuilt
    _save(lists_dir / "ofac_v2", now=T0 + timedelta(days=1))
    second = index_dir.build_current_index(db.session)
    assert second.built and second.key != first.key
    assert os.readlink(root / "current") == second.key
    assert _built(root) == sorted([first.key, second.key])      # the previous version is kept for its readers


def test_old_versions_are_pruned(app_ctx, lists_dir):
    keys = []
    for day, folder in enumerate(["ofac", "ofac_v2", "ofac", "ofac_v2", "ofac"]):
        _save(lists_dir / folder, now=T0 + timedelta(days=day))
        keys.append(index_dir.build_current_index(db.session).key)
    assert len(set(keys)) == 5
    assert set(_built(_root())) == set(keys[-index_dir.KEEP_BUILT:])


def test_a_process_without_an_index_builds_it_once_then_opens_it(app_ctx, lists_dir):
    _save(lists_dir / "ofac")
    assert not _root().exists()
    index = index_holder.holder.get(db.session)                 # nothing was ever built: built here, once
    assert index.directory is not None and index.directory.parent == _root()
    assert [r["record"]["id"] for r in screen({"full_name": "Dmitri Korval"}).results] == ["ofac-1001"]
    index_holder.holder.reset()
    reopened = index_holder.holder.get(db.session)              # another process: opens, does not rebuild
    assert reopened.directory == index.directory and reopened is not index
    assert _built(_root()) == [index.directory.name]


def test_a_new_process_serves_the_previous_version_until_the_job_builds(app_ctx, lists_dir):
    _save(lists_dir / "ofac")
    index_dir.build_current_index(db.session)
    _save(lists_dir / "ofac_v2", now=T0 + timedelta(days=1))
    index_holder.holder.reset()                                 # a process starting now
    assert screen({"full_name": "Petra Nova"}).list_versions == {"us_ofac_sdn": "v1"}
    report = build_screening_index()                            # the job, as the worker runs it
    assert report["built"] and report["list_versions"] == {"us_ofac_sdn": "v2"}
    result = screen({"full_name": "Petra Nova"})
    assert result.list_versions == {"us_ofac_sdn": "v2"} and [r["record"]["id"] for r in result.results] == ["ofac-1006"]


def test_another_process_opens_the_built_index(app_ctx, lists_dir):
    _save(lists_dir / "ofac")
    report = index_dir.build_current_index(db.session)
    code = textwrap.dedent(f"""
        import json, sys
        from app.screening.engine import Subject, screen
        from app.screening.index import ScreeningIndex
        index = ScreeningIndex.open({report.path!r})
        result = screen(index, Subject(full_name="Dmitri Anatolyevich Korval", dob="1961-03-14"))
        print(json.dumps([r["record"]["id"] for r in result.results]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert json.loads(out.stdout) == ["ofac-1001"]


def test_import_builds_the_index_and_reports_it(app, runner, lists_dir):
    result = runner.invoke(args=["lists", "import", "--format", "ofac-csv", str(lists_dir / "ofac")])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stderr.strip().splitlines()[-1])["index"]
    assert figures["records"] == 5 and figures["bytes"] > 0 and figures["built"]
    assert Path(figures["path"]).is_dir()
    skipped = runner.invoke(args=["lists", "import", "--no-index", "--format", "un-xml",
                                  str(lists_dir / "un" / "consolidated.xml")])
    assert skipped.exit_code == 0 and '"index"' not in skipped.stderr
    built = runner.invoke(args=["screening", "build-index"])
    assert built.exit_code == 0, built.output
    figures = json.loads(built.stderr)
    assert figures["built"] and figures["records"] == 8 and figures["seconds"] >= 0
    assert figures["list_versions"] == {"un_sc_sanctions": "v1", "us_ofac_sdn": "v1"}
    again = json.loads(runner.invoke(args=["screening", "build-index"]).stderr)
    assert not again["built"] and again["key"] == figures["key"]
    forced = json.loads(runner.invoke(args=["screening", "build-index", "--force"]).stderr)
    assert forced["built"] and forced["key"] == figures["key"]


def test_screen_batch_prints_figures_as_json(app, runner, lists_dir, tmp_path):
    assert runner.invoke(args=["lists", "import", "--format", "ofac-csv", str(lists_dir / "ofac")]).exit_code == 0
    queries = tmp_path / "q.csv"
    queries.write_text("full_name\nDmitri Korval\nNobody Atall\n")
    result = runner.invoke(args=["screening", "screen-batch", "--input", str(queries), "--output",
                                 str(tmp_path / "r.jsonl")])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stderr)
    assert figures["rows"] == 2 and figures["index_records"] == 5 and figures["index_bytes"] > 0
    assert figures["lists"] == {"us_ofac_sdn": "v1"} and figures["seconds"] >= 0


def test_generate_synthetic(app, runner):
    result = runner.invoke(args=["lists", "generate-synthetic", "--count", "300", "--seed", "5"])
    assert result.exit_code == 0, result.output
    assert "synthetic: version 1 stored, 300 records" in result.output
    figures = [json.loads(line) for line in result.stderr.strip().splitlines()]
    assert figures[0]["records"] == 300 and figures[-1]["index"]["records"] == 300
    index = ScreeningIndex.open(figures[-1]["index"]["path"])
    record = index.records[0].record
    assert record.id == "syn-5-0" and record.caption
    again = runner.invoke(args=["lists", "generate-synthetic", "--count", "300", "--seed", "5"])
    assert "unchanged since version 1" in again.output           # same count and seed: same records
    bad = runner.invoke(args=["lists", "generate-synthetic", "--count", "0"])
    assert bad.exit_code == 2


def test_databases_sharing_the_index_directory_never_open_each_others_index(app, app_ctx, lists_dir, tmp_path):
    """A second environment (here: a SQLite database without any list) that shares SCREENING_INDEX_DIR must not
    serve the first one's `current` index: each database has its own folder."""
    _save(lists_dir / "ofac")
    ours = index_dir.build_current_index(db.session)
    our_root, shared = _root(), app.config["SCREENING_INDEX_DIR"]
    from app import create_app
    from app.config import TestConfig
    other = create_app({**{k: getattr(TestConfig, k) for k in dir(TestConfig) if k.isupper()},
                        "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'other.db'}",
                        "SCREENING_INDEX_DIR": shared, "REDIS_URL": app.config["REDIS_URL"],
                        # the process-wide sign-in limiter is re-bound by init_app: keep it on the same storage
                        "RATELIMIT_STORAGE_URI": app.config["RATELIMIT_STORAGE_URI"]})
    with other.app_context():
        db.create_all()
        other_root = index_dir.index_root()
        assert other_root != our_root and other_root.parent == our_root.parent == Path(shared)
        holder = index_holder.IndexHolder(check_interval=0.0)
        index = holder.get(db.session)                           # its own (empty) index, built here
        assert index.stats.records == 0 and index.directory.parent == other_root
        db.session.remove()
    assert os.readlink(our_root / "current") == ours.key             # ours untouched
    assert index_holder.holder.get(db.session).stats.records == 5
