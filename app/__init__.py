"""Application factory: extensions, blueprints and CLI are wired here and nothing connects at import time."""
from __future__ import annotations

import logging
import uuid
from pathlib import Path

from flask import Flask, g, request
from werkzeug.exceptions import HTTPException

from app.config import Config, is_production, ratelimit_storage_uri, secure_cookies, weak_secret_key


def create_app(config: type[Config] | dict | None = None) -> Flask:
    app = Flask(__name__, instance_relative_config=False,
                template_folder=str(Path(__file__).resolve().parent.parent / "templates"),
                static_folder=str(Path(__file__).resolve().parent.parent / "static"))
    app.config.from_object(Config)
    if isinstance(config, dict):
        app.config.update(config)
    elif config is not None:
        app.config.from_object(config)
    app.config.setdefault("RATELIMIT_STORAGE_URI", ratelimit_storage_uri(app.config.get("REDIS_URL")))
    app.json.sort_keys = False
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("postgresql"):  # a dead database answers in seconds
        options = app.config["SQLALCHEMY_ENGINE_OPTIONS"] = dict(app.config["SQLALCHEMY_ENGINE_OPTIONS"])
        options["connect_args"] = {"connect_timeout": 3, **options.get("connect_args", {})}
    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite:///"):
        Path(app.config["SQLALCHEMY_DATABASE_URI"][len("sqlite:///"):]).parent.mkdir(parents=True, exist_ok=True)
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    from app.core import redact
    redact.install()  # IDPass link tokens never reach an access log
    logging.basicConfig(level=logging.WARNING if app.config.get("TESTING") else logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")

    _check_secrets(app)
    _register_request_hooks(app)  # first: every later hook (rate limits included) sees the request id
    _init_extensions(app)
    _connect_domains()
    _register_blueprints(app)
    _register_error_handlers(app)
    _register_cli(app)
    _register_health(app)
    return app


class InsecureConfiguration(RuntimeError):
    """The app would run in production with a secret anyone can read in its source."""


def _check_secrets(app: Flask) -> None:
    """`Secure` cookies whenever the public URL is https. A development SECRET_KEY (unset, or the built-in
    value) stops the app in production (`is_production`) and is warned about loudly
    everywhere else but debug and tests: sessions, CSRF tokens and (unless ID_DATA_KEYS is set) the keys of ID
    document data would be derived from a value published in the source."""
    if secure_cookies(app.config):
        app.config["SESSION_COOKIE_SECURE"] = app.config["REMEMBER_COOKIE_SECURE"] = True
    if not weak_secret_key(app.config):
        return
    if is_production(app.config):
        raise InsecureConfiguration(
            "Refusing to start in production (APP_ENV=production, or PUBLIC_BASE_URL names a public host) without "
            "a SECRET_KEY of its own: set SECRET_KEY to a long random value (e.g. `python -c 'import secrets; "
            "print(secrets.token_urlsafe(48))'`), the same on every web host and worker.")
    if not (app.debug or app.testing):
        logging.getLogger("app.config").warning(
            "\n" + "!" * 100 + "\n!! SECRET_KEY is the development value: sessions and CSRF tokens can be forged by "
            "anyone who reads the source.\n!! Set SECRET_KEY (and APP_ENV=production) before this serves anyone but "
            "you.\n" + "!" * 100)


def _register_health(app: Flask) -> None:
    from app.health import health

    @app.get("/healthz")
    def healthz():
        """For load balancers: 200 while the database answers (Redis may be down: the app degrades), else 503."""
        body, status = health()
        return body, status, {"Cache-Control": "no-store"}


def _connect_domains() -> None:
    """Job modules register their jobs by name (`app.jobs`), services their receivers of other domains'
    signals (`app.signals`): both are imported here, once, so that every process (web, worker, CLI) has them."""
    from app.checks import jobs as _check_jobs, services as _checks  # noqa: F401
    from app.entities import jobs as _entity_jobs, services as _entities  # noqa: F401
    from app.events import exports as _event_exports  # noqa: F401  (the events' CSV export as a heavy job)
    from app.heavy import jobs as _heavy_jobs  # noqa: F401  (heavy work: the runners, the sweeper, the purge)
    from app.events import services as _events  # noqa: F401
    from app.idchecks import services as _idchecks  # noqa: F401
    from app.idpass import jobs as _idpass_jobs, services as _idpass  # noqa: F401
    from app.lists import jobs as _lists_jobs  # noqa: F401
    from app.maintenance import jobs as _maintenance_jobs  # noqa: F401
    from app.monitors import jobs as _monitor_jobs, receivers as _monitors  # noqa: F401
    from app.notes import services as _notes  # noqa: F401
    from app.notify import jobs as _notify_jobs, services as _notify  # noqa: F401
    from app.screening import jobs as _screening_jobs  # noqa: F401
    from app.webhooks import jobs as _webhook_jobs, services as _webhooks  # noqa: F401  (the outbox, deliveries)
    from app import recovery as _recovery  # noqa: F401  (the sweeper of lost work)
    from app import reports as _reports  # noqa: F401  (an ended IDPass's certificate, issued in the background)


def _init_extensions(app: Flask) -> None:
    from app.extensions import csrf, db, limiter, login_manager, migrate
    from app import models as _models  # noqa: F401  (every model registered on the metadata)

    db.init_app(app)
    migrate.init_app(app, db, directory=str(Path(__file__).resolve().parent.parent / "migrations"),
                     render_as_batch=True, compare_type=True)
    csrf.init_app(app)
    limiter.init_app(app)  # portal sign-in throttling; fails open (RATELIMIT_SWALLOW_ERRORS) when Redis is down
    from app.core.ratelimit import FailureThrottle, OncePerMinuteFilter, RateLimiter
    limiter_log = logging.getLogger("flask-limiter")
    if not any(isinstance(f, OncePerMinuteFilter) for f in limiter_log.filters):
        limiter_log.addFilter(OncePerMinuteFilter())
    app.extensions["api_rate_limiter"] = RateLimiter(app.config["RATELIMIT_STORAGE_URI"],
                                                     prefix=app.config["RATELIMIT_KEY_PREFIX"] + ":api")
    app.extensions["login_throttle"] = FailureThrottle(
        app.config["RATELIMIT_STORAGE_URI"], prefix=app.config["RATELIMIT_KEY_PREFIX"] + ":login",
        amount=app.config["LOGIN_MAX_FAILURES"], seconds=app.config["LOGIN_FAILURE_WINDOW_SECONDS"])
    login_manager.init_app(app)
    login_manager.login_view = "portal.login"
    login_manager.login_message_category = "info"
    login_manager.session_protection = "strong"

    if app.config["SQLALCHEMY_DATABASE_URI"].startswith("sqlite"):
        from sqlalchemy import event

        with app.app_context():
            @event.listens_for(db.engine, "connect")
            def _sqlite_pragmas(dbapi_conn, _record):  # foreign keys and concurrent readers on SQLite
                cur = dbapi_conn.cursor()
                cur.execute("PRAGMA foreign_keys=ON")
                cur.execute("PRAGMA journal_mode=WAL")
                cur.execute("PRAGMA busy_timeout=5000")
                cur.close()


# Portal pages load only our own scripts and styles (templates carry no inline scripts).
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "frame-ancestors 'none'; base-uri 'self'; form-action 'self'")


UPLOAD_ENDPOINTS = {"api.bulk_import_entities", "portal.entities_import"}


# The hosted pages' uploads: a document photo of up to 10 MB, a liveness burst of frames, a certificate to verify
# (each checked again for its own limit).
IMAGE_UPLOAD_ENDPOINTS = {"hosted.document_photo", "hosted.selfie", "hosted.id_photo", "hosted.verify_upload"}


def body_limit() -> int:
    """The most this request's body may hold: CSV uploads and the hosted flow's images have their own limits."""
    from flask import current_app
    if request.endpoint in IMAGE_UPLOAD_ENDPOINTS:
        return int(current_app.config["IDPASS_UPLOAD_MAX_BYTES"])
    key = "CSV_MAX_BYTES" if request.endpoint in UPLOAD_ENDPOINTS else "MAX_CONTENT_LENGTH"
    return int(current_app.config[key])


def _megabytes(n: int) -> str:
    return f"{n / (1024 * 1024):g} MiB" if n >= 1024 * 1024 else f"{n / 1024:g} KiB"


def too_large_message() -> str:
    limit = body_limit()
    what = "file" if request.endpoint in UPLOAD_ENDPOINTS else "request body"
    return f"The {what} is too large: at most {_megabytes(limit)} ({limit:,} bytes) is accepted."


def _register_request_hooks(app: Flask) -> None:
    @app.before_request
    def assign_api_reference() -> None:
        g.api_reference = str(uuid.uuid4())

    @app.before_request
    def limit_body_size() -> None:
        """413 from the Content-Length header alone; a body sent without one is cut off while it streams."""
        from werkzeug.exceptions import RequestEntityTooLarge
        limit = body_limit()
        request.max_content_length = limit
        if request.content_length is not None:
            if request.content_length > limit:
                raise RequestEntityTooLarge()
            return
        environ = request.environ
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and environ.get("wsgi.input_terminated"):  # gunicorn de-chunks it: read at most limit + 1
            import io
            raw = environ["wsgi.input"].read(limit + 1)
            if len(raw) > limit:
                raise RequestEntityTooLarge()
            environ["wsgi.input"] = io.BytesIO(raw)
            environ["CONTENT_LENGTH"] = str(len(raw))
            environ.pop("HTTP_TRANSFER_ENCODING", None)
            request.__dict__.pop("content_length", None)  # werkzeug caches it

    @app.after_request
    def add_api_reference_header(response):
        if g.get("api_reference"):
            response.headers["X-Request-Id"] = g.api_reference
        if request.path.startswith("/api/v1/"):
            response.headers.update(g.get("rate_limit_headers") or {})
            response.headers.setdefault("X-Content-Type-Options", "nosniff")
            response.headers.setdefault("Cache-Control", "no-store")
        else:
            response.headers.setdefault("Content-Security-Policy", CSP)
            response.headers.setdefault("X-Frame-Options", "DENY")
            response.headers.setdefault("X-Content-Type-Options", "nosniff")
            response.headers.setdefault("Referrer-Policy", "same-origin")
        return response


def _register_blueprints(app: Flask) -> None:
    from app.api import bp as api_bp
    from app.extensions import csrf
    from app.hosted import bp as hosted_bp
    from app.portal import bp as portal_bp

    csrf.exempt(api_bp)  # the API authenticates with bearer keys, never with cookies
    app.register_blueprint(api_bp)
    app.register_blueprint(portal_bp)
    app.register_blueprint(hosted_bp)


def _register_error_handlers(app: Flask) -> None:
    from flask import render_template

    from app.core.errors import DomainError
    from app.core.transactions import rollback

    def wants_json() -> bool:
        return request.path.startswith("/api/v1/")

    def json_error(message: str, status: int, errors: dict | None = None):
        from app.api.base import error_body
        return error_body(message, errors), status

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        rollback()
        if wants_json():
            messages = {404: "Not found.", 405: "Method not allowed.", 400: "Bad request.",
                        413: too_large_message(), 415: "Unsupported media type."}
            body, status = json_error(messages.get(exc.code, exc.description or exc.name), exc.code or 500)
            headers = {}
            if exc.code == 405 and getattr(exc, "valid_methods", None):
                headers["Allow"] = ", ".join(sorted(set(exc.valid_methods) - {"OPTIONS"} | {"OPTIONS"}))
            return body, status, headers
        if exc.code == 413:
            return render_template("errors/error.html", code=413, name="Too large",
                                   description=too_large_message() + " Split the file into smaller ones."), 413
        if exc.code == 429:
            return _portal_rate_limited(render_template)
        if exc.code in (404, 403, 405, 400):
            return render_template("errors/error.html", code=exc.code, name=exc.name,
                                   description=exc.description), exc.code
        return exc

    @app.errorhandler(DomainError)
    def domain_error(exc: DomainError):
        rollback()
        if wants_json():
            from app.api.base import domain_error_response
            return domain_error_response(exc)
        return render_template("errors/error.html", code=exc.status, name="Error",
                               description=exc.message), exc.status, exc.headers

    @app.errorhandler(Exception)
    def unexpected(exc: Exception):
        rollback()
        app.logger.exception("unhandled error (api_reference=%s)", g.get("api_reference"))
        if wants_json():
            return json_error("Internal server error. Quote the api_reference when reporting it.", 500)
        return render_template("errors/error.html", code=500, name="Internal server error",
                               description="Something went wrong on our side. Reference: "
                                           + str(g.get("api_reference"))), 500


def _portal_rate_limited(render_template):
    """A portal budget is spent (app/portal/limits.py): say which, and when to retry (also in Retry-After)."""
    import math
    import time as time_mod

    from app.extensions import limiter
    limit = limiter.current_limit
    # the storage rounds its reset time up to the next whole second: never say more than the window itself
    wait = max(1, min(limit.limit.get_expiry(), math.ceil(limit.reset_at - time_mod.time()))) \
        if limit is not None else 60
    key = limit.key if limit is not None else ""  # names the scope (portal-heavy-account, ...) and the key
    whose = "your account's" if "account" in key else "your"
    what = " for reports, imports and exports" if "heavy" in key else ""
    amount = f"{limit.limit.amount} a {limit.limit.GRANULARITY.name}" if limit is not None else "requests"
    description = (f"You have reached {whose} limit of requests{what} ({amount}). Nothing was lost: try again in "
                   f"{wait} seconds. The limit keeps the service fast for everyone.")
    response = render_template("errors/error.html", code=429, name="Too many requests", description=description)
    return response, 429, {"Retry-After": str(wait)}


def _register_cli(app: Flask) -> None:
    from app.cli import register
    register(app)
