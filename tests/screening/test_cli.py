from __future__ import annotations

import csv
import json

from sqlalchemy import func, select

from app.extensions import db
from app.screening.models import ScreeningList, ScreeningRecord


def _import(runner, fmt, path):
    return runner.invoke(args=["lists", "import", "--format", fmt, str(path)])


def _load_all(runner, lists_dir):
    for fmt, rel in (("ofac-csv", "ofac"), ("un-xml", "un/consolidated.xml"), ("ftm", "ftm/entities.ftm.json"),
                     ("senzing", "senzing/pep.json")):
        result = _import(runner, fmt, lists_dir / rel)
        assert result.exit_code == 0, result.output


def test_import_and_status(app, runner, lists_dir):
    result = _import(runner, "ofac-csv", lists_dir / "ofac")
    assert result.exit_code == 0
    assert "us_ofac_sdn: version 1 stored, 5 records (+5 added, ~0 changed, -0 removed)" in result.output
    result = _import(runner, "ofac-csv", lists_dir / "ofac_v2")
    assert "version 2 stored, 5 records (+1 added, ~1 changed, -1 removed)" in result.output
    status = runner.invoke(args=["lists", "status", "--json"])
    row = json.loads(status.output.strip())
    assert row["list"] == "us_ofac_sdn" and row["version"] == 2 and row["last_diff"] == {"added": 1, "changed": 1, "removed": 1}
    assert "us_ofac_sdn" in runner.invoke(args=["lists", "status"]).output


def test_bad_file_fails_clearly_and_changes_nothing(app, runner, lists_dir):
    assert _import(runner, "ofac-csv", lists_dir / "ofac").exit_code == 0
    result = _import(runner, "ofac-csv", lists_dir / "ofac_bad")
    assert result.exit_code == 2
    assert "expected 12 columns" in result.output and "Nothing was imported" in result.output
    result = _import(runner, "un-xml", lists_dir / "un" / "broken.xml")
    assert result.exit_code == 2 and "not well-formed XML" in result.output
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(ScreeningList)) == 1
        assert db.session.scalar(select(ScreeningList.current_version)) == 1
        assert db.session.scalar(select(func.count()).select_from(ScreeningRecord)) == 5


def test_update_fails_clearly_offline(app, runner):
    app.config["SCREENING_LIST_SOURCES"] = {"un_sc_sanctions": {
        "format": "un-xml", "files": {"consolidated.xml": "http://127.0.0.1:9/consolidated.xml"}}}
    try:
        result = runner.invoke(args=["lists", "update", "--list", "un_sc_sanctions"])
    finally:
        app.config.pop("SCREENING_LIST_SOURCES")
    assert result.exit_code == 2
    assert "could not download http://127.0.0.1:9/consolidated.xml" in result.output
    assert "Nothing was changed" in result.output
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(ScreeningList)) == 0
    unknown = runner.invoke(args=["lists", "update", "--list", "nope"])
    assert unknown.exit_code == 2 and "no source configured for nope" in unknown.output


def test_screen_batch(app, runner, lists_dir, tmp_path):
    _load_all(runner, lists_dir)
    queries = tmp_path / "q.csv"
    with queries.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["full_name", "first_name", "middle_name", "last_name", "gender", "date_of_birth",
                         "place_of_birth", "nationality"])
        writer.writerow(["HAMID QASIM NOORZAD", "", "", "", "", "1963", "Kandahar", "af"])
        writer.writerow(["Nobody Atall", "", "", "", "female", "1990-01-01", "", "Norway"])
        writer.writerow(["", "Carla", "", "Mendez Ortiz", "female", "1980-02-02", "", "Mexico"])
        writer.writerow(["Hamid Qasem Noorzad", "", "", "", "", "1980", "", ""])
    out = tmp_path / "r.jsonl"
    result = runner.invoke(args=["screening", "screen-batch", "--input", str(queries), "--output", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["row"] for line in lines] == [0, 1, 2, 3]
    assert [r["record"]["id"] for r in lines[0]["results"]] == ["un-900001"]
    assert lines[1]["results"] == []
    assert [r["record"]["id"] for r in lines[2]["results"]] == ["ofac-1005"]
    assert lines[3]["results"] == []                                       # DOB conflict at 80
    low = runner.invoke(args=["screening", "screen-batch", "--input", str(queries), "--output", str(out),
                              "--threshold", "60", "--search-type", "broad_search"])
    assert low.exit_code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["record"]["id"] for r in lines[3]["results"]] == ["un-900001"]
    bad = runner.invoke(args=["screening", "screen-batch", "--input", str(queries), "--output", str(out),
                              "--threshold", "85"])
    assert bad.exit_code == 2 and "similarity_threshold" in bad.output


def test_screen_batch_without_lists(app, runner, tmp_path):
    queries = tmp_path / "q.csv"
    queries.write_text("full_name,date_of_birth\nJohn Smith,1970\n")
    result = runner.invoke(args=["screening", "screen-batch", "--input", str(queries), "--output",
                                 str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2 and "no lists loaded" in result.output


def test_compare_pairs(app, runner, tmp_path):
    pairs = tmp_path / "p.csv"
    pairs.write_text("name1,name2,schema\n"
                     "John Smith,\"SMITH, John\",Person\n"
                     "Acme Trading Ltd,ACME TRADING LIMITED,Company\n"
                     "Jon Smyth,John Smith,Person\n"
                     "Alice Jones,Robert Brown,Person\n")
    out = tmp_path / "s.csv"
    result = runner.invoke(args=["screening", "compare-pairs", "--input", str(pairs), "--output", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(out.open()))
    assert [r["name1"] for r in rows] == ["John Smith", "Acme Trading Ltd", "Jon Smyth", "Alice Jones"]
    scores = [float(r["score"]) for r in rows]
    assert scores[0] == 1.0 and scores[1] == 1.0 and 0.5 < scores[2] < 1.0 and 0.0 < scores[3] < 0.5
    assert rows[1]["schema"] == "Company"


def test_screen_one(app, runner, lists_dir):
    _load_all(runner, lists_dir)
    result = runner.invoke(args=["screening", "screen", "Northwind Metals", "--schema", "Company"])
    assert result.exit_code == 0
    out = json.loads(result.output)
    assert out["results"][0]["record"]["id"] == "os-company-1" and out["engine_version"]
    assert set(out["list_versions"]) == {"us_ofac_sdn", "un_sc_sanctions", "os_test_peps", "test_peps"}
