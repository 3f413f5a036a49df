"""`flask lists update` against a real HTTP server on this machine serving the invented fixtures in each official
format: every list imports from its configured URL; a server error, a truncated download or a changed format fails
with a clear message and leaves the stored list as it was."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from sqlalchemy import select

from app.extensions import db
from app.screening.models import ScreeningList
from app.screening.sources import LISTS, USER_AGENT, sources

FILES = {"/eu.xml": "eu/eu_fsf.xml", "/uk.xml": "uk/UK-Sanctions-List.xml", "/au.xlsx": "dfat/consolidated.xlsx",
         "/ca.xml": "ca/sema-lmes.xml", "/peps.json": "ftm/peps.ftm.json"}
URLS = {"eu_fsf_sanctions": "/eu.xml", "gb_fcdo_sanctions": "/uk.xml", "au_dfat_sanctions": "/au.xlsx",
        "ca_sema_sanctions": "/ca.xml", "os_peps": "/peps.json"}


class Publisher:
    """What the server answers: {path: (status, body, announced length or None)}; the requests it saw."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, bytes, int | None]] = {}
        self.agents: list[str] = []


@pytest.fixture()
def publisher(lists_dir):
    pub = Publisher()
    for path, rel in FILES.items():
        pub.routes[path] = (200, (lists_dir / rel).read_bytes(), None)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - the http.server API
            pub.agents.append(self.headers.get("User-Agent", ""))
            status, body, announced = pub.routes.get(self.path, (404, b"not found", None))
            self.send_response(status)
            self.send_header("Content-Length", str(announced if announced is not None else len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    pub.base = f"http://127.0.0.1:{server.server_address[1]}"
    yield pub
    server.shutdown()
    server.server_close()


@pytest.fixture()
def configured(app, publisher):
    saved = app.config["SCREENING_LIST_URLS"]
    app.config["SCREENING_LIST_URLS"] = {name: publisher.base + path for name, path in URLS.items()}
    yield publisher
    app.config["SCREENING_LIST_URLS"] = saved


def _update(runner, *names):
    args = ["lists", "update", "--no-index"]
    for name in names:
        args += ["--list", name]
    return runner.invoke(args=args)


def _versions(app) -> dict[str, int]:
    with app.app_context():
        return dict(db.session.execute(select(ScreeningList.name, ScreeningList.current_version)).all())


def test_update_fetches_every_configured_list(app, runner, configured):
    result = _update(runner)
    assert result.exit_code == 0, result.output
    for line in ("au_dfat_sanctions: version 1 stored, 4 records", "ca_sema_sanctions: version 1 stored, 4 records",
                 "eu_fsf_sanctions: version 1 stored, 2 records", "gb_fcdo_sanctions: version 1 stored, 3 records",
                 "os_peps: version 1 stored, 4 records"):
        assert line in result.output
    assert _versions(app) == {name: 1 for name in URLS}
    assert set(configured.agents) == {USER_AGENT}
    with app.app_context():
        kinds = dict(db.session.execute(select(ScreeningList.name, ScreeningList.kind)).all())
    assert kinds["os_peps"] == "pep" and kinds["eu_fsf_sanctions"] == "sanction"
    again = _update(runner, "gb_fcdo_sanctions")
    assert again.exit_code == 0 and "gb_fcdo_sanctions: unchanged since version 1" in again.output


def test_http_error_truncation_and_format_change_leave_the_list_as_it_was(app, runner, configured, lists_dir):
    assert _update(runner).exit_code == 0
    uk = (lists_dir / "uk" / "UK-Sanctions-List.xml").read_bytes()
    # 1. the server fails
    configured.routes["/uk.xml"] = (503, b"<html>Service Unavailable</html>", None)
    result = _update(runner, "gb_fcdo_sanctions")
    assert result.exit_code == 2
    assert f"could not download {configured.base}/uk.xml: the server answered HTTP 503" in result.output
    assert "Nothing was changed for this list" in result.output
    # 2. the transfer stops before the announced length
    configured.routes["/uk.xml"] = (200, uk[:len(uk) // 2], len(uk))
    result = _update(runner, "gb_fcdo_sanctions")
    assert result.exit_code == 2 and "a truncated download" in result.output
    # 3. the same file cut short, its length announced as sent: the XML parser finds the cut
    configured.routes["/uk.xml"] = (200, uk[:len(uk) // 2], None)
    result = _update(runner, "gb_fcdo_sanctions")
    assert result.exit_code == 2 and "not well-formed XML" in result.output and "Nothing was imported" in result.output
    # 4. the publisher renamed the elements
    configured.routes["/uk.xml"] = (200, uk.replace(b"<Names>", b"<Aliases>").replace(b"</Names>", b"</Aliases>")
                                    .replace(b"<Name>", b"<Alias>").replace(b"</Name>", b"</Alias>")
                                    .replace(b"NameNonLatinScript", b"NonLatin"), None)
    result = _update(runner, "gb_fcdo_sanctions")
    assert result.exit_code == 2 and "has no name (has the format changed?)" in result.output
    # 5. an HTML page instead of the file
    configured.routes["/uk.xml"] = (200, b"<html><body>Please log in</body></html>", None)
    result = _update(runner, "gb_fcdo_sanctions")
    assert result.exit_code == 2 and "root element is <html>, expected <Designations>" in result.output
    # 6. a truncated workbook
    xlsx = (lists_dir / "dfat" / "consolidated.xlsx").read_bytes()
    configured.routes["/au.xlsx"] = (200, xlsx[:-300], None)
    result = _update(runner, "au_dfat_sanctions")
    assert result.exit_code == 2 and "not a readable Excel workbook" in result.output
    assert _versions(app) == {name: 1 for name in URLS}          # every list as it was
    with app.app_context():
        uk_list = db.session.scalar(select(ScreeningList).where(ScreeningList.name == "gb_fcdo_sanctions"))
        assert uk_list.current_version == 1


def test_one_failed_list_does_not_stop_the_others(app, runner, configured):
    configured.routes["/eu.xml"] = (404, b"gone", None)
    result = _update(runner, "eu_fsf_sanctions", "ca_sema_sanctions")
    assert result.exit_code == 2
    assert "eu_fsf_sanctions: could not download" in result.output and "HTTP 404" in result.output
    assert "ca_sema_sanctions: version 1 stored" in result.output
    assert _versions(app) == {"ca_sema_sanctions": 1}


def test_a_list_switched_off_is_not_updated(app, runner, configured):
    app.config["SCREENING_LIST_URLS"] = {**app.config["SCREENING_LIST_URLS"], "os_peps": "off"}
    result = _update(runner, "os_peps")
    assert result.exit_code == 2 and "no source configured for os_peps" in result.output


def test_sources_from_configured_urls():
    configured = sources(None, {"us_ofac_sdn": "https://example.test/exports/{file}", "eu_fsf_sanctions": "OFF",
                                "ca_sema_sanctions": "https://example.test/sema-lmes.xml", "not_a_list": "x"})
    assert configured == {
        "us_ofac_sdn": {"format": "ofac-csv", "files": {"sdn.csv": "https://example.test/exports/SDN.CSV",
                                                        "alt.csv": "https://example.test/exports/ALT.CSV",
                                                        "add.csv": "https://example.test/exports/ADD.CSV"}},
        "ca_sema_sanctions": {"format": "ca-xml", "files": {"sema-lmes.xml": "https://example.test/sema-lmes.xml"}}}
    assert sources({"mine": {"format": "ftm", "files": {"a.json": "u"}}}, {})["mine"]["format"] == "ftm"


def test_every_default_url_is_configured(app):
    urls = app.config["SCREENING_LIST_URLS"]
    assert set(urls) == set(LISTS)
    assert all(url.startswith("https://") for url in urls.values())
