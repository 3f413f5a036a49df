"""The only module that reads environment variables."""
from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return value if value not in (None, "") else default


DEV_SECRET_KEY = "dev-insecure-change-me"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


class Config:
    # production | development. Unset: production when PUBLIC_BASE_URL names a host other than this machine
    # (`is_production`). In production the app refuses to start without a SECRET_KEY of its own.
    APP_ENV = _env("APP_ENV")
    SECRET_KEY = _env("SECRET_KEY", DEV_SECRET_KEY)
    SQLALCHEMY_DATABASE_URI = _env("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'instance' / 'screening.db'}"
    SQLALCHEMY_ENGINE_OPTIONS: dict = {"pool_pre_ping": True}
    REDIS_URL = _env("REDIS_URL")
    # RQ: when no REDIS_URL is configured jobs run in-process (a background thread after commit).
    RQ_QUEUE_PREFIX = _env("RQ_QUEUE_PREFIX", "")
    # fork: RQ's default, a work horse per job; simple: jobs run in the worker process (no fork per job).
    RQ_WORKER_CLASS = _env("RQ_WORKER_CLASS", "fork")
    # Queues whose jobs a fork worker runs in its main process, without a work horse (docs/decisions.md, issue 21)
    RQ_INLINE_QUEUES = _env("RQ_INLINE_QUEUES", "checks,webhooks")
    # Recovery of lost background work (app/recovery.py): how often the sweeper runs, and how long a job may go
    # unseen (between the commit and its enqueue, or since its worker's last heartbeat) before it counts as lost.
    RECOVERY_INTERVAL_SECONDS = int(_env("RECOVERY_INTERVAL_SECONDS", "60"))
    RECOVERY_GRACE_SECONDS = float(_env("RECOVERY_GRACE_SECONDS", "30"))
    # Monitors (app/monitors): scheduled runs start at this local hour (and minute) in the account's time zone; the
    # scheduler's tick (every MONITOR_TICK_SECONDS) starts due runs and resumes runs paused for credit; a run is
    # split into chunks of MONITOR_CHUNK_SIZE entities, one job each.
    MONITOR_LOCAL_HOUR = int(_env("MONITOR_LOCAL_HOUR", "2"))
    MONITOR_LOCAL_MINUTE = int(_env("MONITOR_LOCAL_MINUTE", "0"))
    MONITOR_TICK_SECONDS = int(_env("MONITOR_TICK_SECONDS", "60"))
    MONITOR_CHUNK_SIZE = int(_env("MONITOR_CHUNK_SIZE", "1000"))
    # A background worker screens at most this many entities a second (0: as fast as it can, the default: a full
    # run of 100,000 within 2 minutes), so that a run during working hours leaves the CPU and the database to the
    # web and the check runs (docs/decisions.md, "A monitor run can be paced").
    MONITOR_ENTITIES_PER_SECOND = float(_env("MONITOR_ENTITIES_PER_SECOND", "0"))
    # IDPass (app/idpass): the scheduler expires open IDPasses whose link ran out every IDPASS_EXPIRY_TICK_SECONDS.
    IDPASS_EXPIRY_TICK_SECONDS = int(_env("IDPASS_EXPIRY_TICK_SECONDS", "300"))
    # The hosted flow's uploads: one document photo (10 MB at most, checked again per image) or a liveness burst.
    IDPASS_UPLOAD_MAX_BYTES = int(_env("IDPASS_UPLOAD_MAX_BYTES", str(24 * 1024 * 1024)))
    # Requests per address to the hosted pages (the IDPass flow): a person needs a few dozen; guessing needs millions.
    HOSTED_RATE_LIMIT = _env("HOSTED_RATE_LIMIT", "120 per minute")
    # Months an adhoc IDPass's images and an adhoc ID check's sealed data are kept (a program's own setting governs
    # its records: data_retention_months).
    ADHOC_RETENTION_MONTHS = int(_env("ADHOC_RETENTION_MONTHS", "12"))
    # A list publication that would remove more than this share of a list's records is held until an operator
    # accepts it (`flask lists accept LIST:N`): a truncated download must not delist everyone.
    LIST_HOLD_REMOVED_FRACTION = float(_env("LIST_HOLD_REMOVED_FRACTION", "0.05"))
    LIST_HOLD_MIN_REMOVED = int(_env("LIST_HOLD_MIN_REMOVED", "10"))  # fewer removals are never held

    # Webhooks (app/webhooks, docs/webhooks.md). Networks that may be sent to although not public (comma-separated
    # CIDR, e.g. 127.0.0.0/8 for a receiver on this machine; default none); the delay before each attempt in seconds
    # (Standard Webhooks: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h; jittered ±20%); the
    # request timeout; how long an endpoint may fail without a success before it is disabled; the log's age.
    WEBHOOK_ALLOWED_NETWORKS = _env("WEBHOOK_ALLOWED_NETWORKS", "")
    WEBHOOK_RETRY_SCHEDULE = _env("WEBHOOK_RETRY_SCHEDULE", "0,5,300,1800,7200,18000,36000,50400,72000,86400")
    WEBHOOK_TIMEOUT_SECONDS = float(_env("WEBHOOK_TIMEOUT_SECONDS", "15"))
    WEBHOOK_DNS_TIMEOUT_SECONDS = float(_env("WEBHOOK_DNS_TIMEOUT_SECONDS", "3"))
    WEBHOOK_DISABLE_AFTER_SECONDS = int(_env("WEBHOOK_DISABLE_AFTER_SECONDS", str(5 * 24 * 60 * 60)))
    WEBHOOK_LOG_DAYS = int(_env("WEBHOOK_LOG_DAYS", "30"))

    # Heavy work (app/heavy, docs/heavy-jobs.md): history and check PDFs, bulk imports and CSV exports beyond a
    # small size run as jobs on the `pdf` and `imports` queues, served by HEAVY_SLOTS heavy workers (`make run`)
    # at OS priority HEAVY_WORKER_NICE (the web comes first). Fair shares per account: at most
    # HEAVY_MAX_RUNNING_PER_ACCOUNT of its jobs run at once and HEAVY_MAX_QUEUED_PER_ACCOUNT wait (more: 429);
    # a token bucket of work seconds (HEAVY_BUDGET_SECONDS, refilled by HEAVY_BUDGET_REFILL_PER_MINUTE seconds a
    # minute) is charged each job's measured seconds, and new work waits while it is empty (429 + Retry-After).
    HEAVY_SLOTS = int(_env("HEAVY_SLOTS", "2"))
    HEAVY_WORKER_NICE = int(_env("HEAVY_WORKER_NICE", "10"))
    # Bulk background jobs (a monitor run's chunks: `job(background=True)`) lower their work horse's OS priority
    # by this much, so that a run over 100,000 customers takes the CPU the web and the check runs leave. 0: off.
    BACKGROUND_JOB_NICE = int(_env("BACKGROUND_JOB_NICE", "10"))
    HEAVY_MAX_RUNNING_PER_ACCOUNT = int(_env("HEAVY_MAX_RUNNING_PER_ACCOUNT", "1"))
    HEAVY_MAX_QUEUED_PER_ACCOUNT = int(_env("HEAVY_MAX_QUEUED_PER_ACCOUNT", "50"))
    HEAVY_BUDGET_SECONDS = float(_env("HEAVY_BUDGET_SECONDS", "600"))
    HEAVY_BUDGET_REFILL_PER_MINUTE = float(_env("HEAVY_BUDGET_REFILL_PER_MINUTE", "60"))
    HEAVY_RESULT_TTL_HOURS = float(_env("HEAVY_RESULT_TTL_HOURS", "24"))   # results (and cached PDFs) kept
    HEAVY_TICK_SECONDS = int(_env("HEAVY_TICK_SECONDS", "10"))             # the sweeper of lost heavy jobs
    HEAVY_MAX_ATTEMPTS = int(_env("HEAVY_MAX_ATTEMPTS", "3"))               # runs lost with a worker, then failed
    # What stays synchronous (measured: docs/decisions.md, "Heavy work"): a PDF printing at most this many items
    # (checks, results, events, notes: one check of 25 results renders in ~0.3 s), a CSV file of at most this many
    # rows (~0.06 s), an export of at most this many events.
    HEAVY_PDF_SYNC_ITEMS = int(_env("HEAVY_PDF_SYNC_ITEMS", "30"))
    HEAVY_IMPORT_SYNC_ROWS = int(_env("HEAVY_IMPORT_SYNC_ROWS", "200"))
    HEAVY_EXPORT_SYNC_ROWS = int(_env("HEAVY_EXPORT_SYNC_ROWS", "1000"))
    # Portal requests per signed-in user and per account (Flask-Limiter, Redis), and of the heavy routes (PDFs,
    # imports, exports) on top; beyond them a 429 page that says when to retry.
    PORTAL_RATE_LIMIT_USER = _env("PORTAL_RATE_LIMIT_USER", "300 per minute")
    PORTAL_RATE_LIMIT_ACCOUNT = _env("PORTAL_RATE_LIMIT_ACCOUNT", "1200 per minute")
    PORTAL_HEAVY_RATE_LIMIT_USER = _env("PORTAL_HEAVY_RATE_LIMIT_USER", "30 per minute")
    PORTAL_HEAVY_RATE_LIMIT_ACCOUNT = _env("PORTAL_HEAVY_RATE_LIMIT_ACCOUNT", "120 per minute")

    # Sessions and CSRF
    SESSION_COOKIE_HTTPONLY = True
    SESSION_COOKIE_SAMESITE = "Lax"
    # `Secure` cookies (session and remember-me): always when PUBLIC_BASE_URL is https (`secure_cookies`), or
    # with SESSION_COOKIE_SECURE=1 (behind a proxy that terminates TLS for another public URL).
    SESSION_COOKIE_SECURE = _env("SESSION_COOKIE_SECURE", "0") == "1"
    REMEMBER_COOKIE_HTTPONLY = True
    REMEMBER_COOKIE_SECURE = SESSION_COOKIE_SECURE
    REMEMBER_COOKIE_SAMESITE = "Lax"
    WTF_CSRF_TIME_LIMIT = None
    PERMANENT_SESSION_LIFETIME = 60 * 60 * 12

    # Rate limiting (Flask-Limiter). Storage is Redis when REDIS_URL is set.
    RATELIMIT_ENABLED = _env("RATELIMIT_ENABLED", "1") == "1"
    # The API's budget (app/core/ratelimit.py, on `limits`) writes its own RateLimit-* headers. Flask-Limiter
    # only throttles portal sign-in; both fail open when their storage is unreachable.
    RATELIMIT_HEADERS_ENABLED = False
    RATELIMIT_SWALLOW_ERRORS = True
    RATELIMIT_STORAGE_OPTIONS = {"socket_timeout": 0.25, "socket_connect_timeout": 0.25}
    RATELIMIT_KEY_PREFIX = _env("RATELIMIT_KEY_PREFIX", "screening")
    DEFAULT_API_RATE_LIMIT = int(_env("DEFAULT_API_RATE_LIMIT", "600"))
    LOGIN_RATE_LIMIT = _env("LOGIN_RATE_LIMIT", "10 per minute")
    # Failed sign-ins per account (per e-mail typed, existing or not) before it must wait for the window's end.
    LOGIN_MAX_FAILURES = int(_env("LOGIN_MAX_FAILURES", "10"))
    LOGIN_FAILURE_WINDOW_SECONDS = int(_env("LOGIN_FAILURE_WINDOW_SECONDS", str(15 * 60)))
    # "Keep me signed in" lasts at most this long (and ends at logout, password change or deactivation).
    REMEMBER_COOKIE_DURATION = timedelta(days=int(_env("REMEMBER_COOKIE_DAYS", "30")))

    # Public short numbers (Sqids). Changing the alphabet changes every public number.
    # Without look-alike characters (0/O, 1/I/L, 5/S, 2/Z, 8/B): numbers are read aloud and typed from paper.
    SQIDS_ALPHABET = _env("SQIDS_ALPHABET", "D7FKEVT9CM4G3XHPJ6QWANURY")
    SQIDS_MIN_LENGTH = int(_env("SQIDS_MIN_LENGTH", "7"))

    # `flask lists update`: where each list's official publication is fetched from (docs/lists.md). One environment
    # variable per list; "off" leaves the list out of the update. "{file}" stands for each file of a publication of
    # several files (OFAC: SDN.CSV, ALT.CSV, ADD.CSV). The formats and file names are in app/screening/sources.py.
    SCREENING_LIST_URLS = {
        "us_ofac_sdn": _env("LIST_URL_US_OFAC_SDN",
                            "https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports/{file}"),
        "un_sc_sanctions": _env("LIST_URL_UN_SC_SANCTIONS",
                                "https://scsanctions.un.org/resources/xml/en/consolidated.xml"),
        # The Commission's Financial Sanctions Files: the public token its own download page uses
        "eu_fsf_sanctions": _env("LIST_URL_EU_FSF_SANCTIONS",
                                 "https://webgate.ec.europa.eu/fsd/fsf/public/files/xmlFullSanctionsList_1_1/content"
                                 "?token=dG9rZW4tMjAxNw"),
        "gb_fcdo_sanctions": _env("LIST_URL_GB_FCDO_SANCTIONS",
                                  "https://sanctionslist.fcdo.gov.uk/docs/UK-Sanctions-List.xml"),
        "au_dfat_sanctions": _env("LIST_URL_AU_DFAT_SANCTIONS", "https://www.dfat.gov.au/sites/default/files/"
                                                                "Australian_Sanctions_Consolidated_List.xlsx"),
        "ca_sema_sanctions": _env("LIST_URL_CA_SEMA_SANCTIONS",
                                  "https://www.international.gc.ca/world-monde/assets/office_docs/"
                                  "international_relations-relations_internationales/sanctions/sema-lmes.xml"),
        "os_peps": _env("LIST_URL_OS_PEPS", "https://data.opensanctions.org/datasets/latest/peps/entities.ftm.json"),
        "os_us_congress": _env("LIST_URL_OS_US_CONGRESS",
                               "https://data.opensanctions.org/datasets/latest/us_congress/senzing.json"),
    }
    # A JSON object {list name: {"format": ..., "files": {filename: url}}} that replaces or adds whole entries.
    SCREENING_LIST_SOURCES = json.loads(_env("SCREENING_LIST_SOURCES", "{}"))
    LIST_FETCH_TIMEOUT_SECONDS = float(_env("LIST_FETCH_TIMEOUT_SECONDS", "120"))

    # Upstream providers (app/providers). Sandbox accounts never call them.
    ABR_GUID = _env("ABR_GUID")                                  # ABN Lookup web services GUID (business_check)
    COMPANIES_HOUSE_API_KEY = _env("COMPANIES_HOUSE_API_KEY")    # Companies House REST API key (uk_business_check)
    # {operation: "package.module:Class"}: a vendor's provider for adverse_media, adc_check, court_check, ...
    PROVIDER_CLASSES = json.loads(_env("PROVIDER_CLASSES", "{}"))
    PROVIDER_TIMEOUT = float(_env("PROVIDER_TIMEOUT", "10"))    # seconds for one upstream request
    # ID checks (app/idchecks): the gateways of the issuers' services (live accounts only), and {id_type:
    # "package.module:Class"} to answer an ID type with another vendor's adapter.
    DVS_GATEWAY_URL = _env("DVS_GATEWAY_URL")                   # Document Verification Service gateway (REST)
    DVS_GATEWAY_KEY = _env("DVS_GATEWAY_KEY")
    NZ_GATEWAY_URL = _env("NZ_GATEWAY_URL")                     # NZTA licence and DIA passport verification
    NZ_GATEWAY_KEY = _env("NZ_GATEWAY_KEY")
    PAYROLL_GATEWAY_URL = _env("PAYROLL_GATEWAY_URL")           # payroll and superannuation verification
    PAYROLL_GATEWAY_KEY = _env("PAYROLL_GATEWAY_KEY")
    # Seconds one gateway request may take (an ID check waits for it; beyond it: 503, nothing recorded or charged).
    DVS_GATEWAY_TIMEOUT = float(_env("DVS_GATEWAY_TIMEOUT") or PROVIDER_TIMEOUT)
    NZ_GATEWAY_TIMEOUT = float(_env("NZ_GATEWAY_TIMEOUT") or PROVIDER_TIMEOUT)
    PAYROLL_GATEWAY_TIMEOUT = float(_env("PAYROLL_GATEWAY_TIMEOUT") or PROVIDER_TIMEOUT)
    ID_PROVIDER_CLASSES = json.loads(_env("ID_PROVIDER_CLASSES", "{}"))
    # Keys that encrypt ID document data at rest (Fernet, comma-separated, newest first: the first encrypts, all
    # decrypt, so a key is rotated by putting a new one in front). Unset: one derived from SECRET_KEY (fine for
    # development; set your own in production, since changing SECRET_KEY would then lose the data).
    ID_DATA_KEYS = _env("ID_DATA_KEYS")
    EMAIL_DNS_TIMEOUT = float(_env("EMAIL_DNS_TIMEOUT", "3"))  # seconds for e-mail deliverability look-ups

    # Blob storage of IDPass images (app/core/storage.py), sealed with ID_DATA_KEYS: "filesystem" (STORAGE_PATH,
    # default <instance path>/blobs) or "s3" (any S3-compatible service; credentials default to boto3's own chain).
    STORAGE_BACKEND = _env("STORAGE_BACKEND", "filesystem")
    STORAGE_PATH = _env("STORAGE_PATH")
    S3_BUCKET = _env("S3_BUCKET")
    S3_PREFIX = _env("S3_PREFIX", "")
    S3_ENDPOINT_URL = _env("S3_ENDPOINT_URL")       # e.g. https://minio.internal:9000; unset for AWS
    S3_REGION = _env("S3_REGION")
    S3_ACCESS_KEY_ID = _env("S3_ACCESS_KEY_ID")
    S3_SECRET_ACCESS_KEY = _env("S3_SECRET_ACCESS_KEY")

    # Report e-mails: SMTP when MAIL_SERVER is set, else files in MAIL_OUTBOX_DIR (default instance/outbox).
    MAIL_SERVER = _env("MAIL_SERVER")
    MAIL_PORT = int(_env("MAIL_PORT", "25"))
    MAIL_USE_TLS = _env("MAIL_USE_TLS", "0") == "1"   # STARTTLS
    MAIL_USE_SSL = _env("MAIL_USE_SSL", "0") == "1"   # implicit TLS (port 465)
    MAIL_USERNAME = _env("MAIL_USERNAME")
    MAIL_PASSWORD = _env("MAIL_PASSWORD")
    MAIL_FROM = _env("MAIL_FROM", "screening@localhost")
    MAIL_OUTBOX_DIR = _env("MAIL_OUTBOX_DIR")
    PUBLIC_BASE_URL = _env("PUBLIC_BASE_URL")  # links in e-mails, e.g. https://screening.example.com

    # Text messages (IDPass links by SMS, app/providers/sms.py). Sandbox accounts, or no SMS_PROVIDER: each message
    # is written into SMS_OUTBOX_DIR (default instance/sms-outbox) and nothing is sent. SMS_PROVIDER=messagemedia:
    # the MessageMedia Messages API with its API key and secret, from SMS_SENDER (a number, a short code or an
    # alphanumeric sender ID; unset: the account's default); SMS_BASE_URL defaults to https://api.messagemedia.com.
    SMS_PROVIDER = _env("SMS_PROVIDER")
    SMS_API_KEY = _env("SMS_API_KEY")
    SMS_API_SECRET = _env("SMS_API_SECRET")
    SMS_BASE_URL = _env("SMS_BASE_URL")
    SMS_SENDER = _env("SMS_SENDER")
    SMS_OUTBOX_DIR = _env("SMS_OUTBOX_DIR")

    # Request size limits (issue 7 §4): beyond them 413, decided on Content-Length before the body is read,
    # and enforced while streaming a body sent without one.
    MAX_CONTENT_LENGTH = int(_env("MAX_CONTENT_LENGTH", str(1024 * 1024)))            # API and portal bodies
    CSV_MAX_BYTES = int(_env("CSV_MAX_BYTES", str(10 * 1024 * 1024)))                # CSV uploads
    CSV_MAX_ROWS = int(_env("CSV_MAX_ROWS", "50000"))

    # Built screening indexes (one directory per set of list versions, memory-mapped by every process that
    # screens). Empty: each process builds its index in memory (tests).
    SCREENING_INDEX_DIR = _env("SCREENING_INDEX_DIR", str(BASE_DIR / "instance" / "screening-index"))
    # Approximate bytes of each in-process cache of the index (part matches, postings, decoded records).
    SCREENING_INDEX_CACHE_BYTES = int(_env("SCREENING_INDEX_CACHE_BYTES", str(16 * 1024 * 1024)))

    SOFT_DELETE_RECOVERY_DAYS = 30
    IDEMPOTENCY_TTL_HOURS = 24
    JSON_SORT_KEYS = False


class TestConfig(Config):
    TESTING = True
    WTF_CSRF_ENABLED = True
    SECRET_KEY = "test-secret"
    SCREENING_INDEX_DIR = ""  # in memory per process; tests/screening point it at a temporary folder


def is_production(config) -> bool:
    """APP_ENV=production, or (APP_ENV unset) a PUBLIC_BASE_URL whose host is not this machine."""
    env = (config.get("APP_ENV") or "").strip().lower()
    if env:
        return env in ("production", "prod")
    from urllib.parse import urlsplit
    host = urlsplit(config.get("PUBLIC_BASE_URL") or "").hostname
    return bool(host) and host not in LOCAL_HOSTS and not host.endswith(".localhost")


def secure_cookies(config) -> bool:
    return bool(config.get("SESSION_COOKIE_SECURE")) or (config.get("PUBLIC_BASE_URL") or "").lower().startswith(
        "https://")


def weak_secret_key(config) -> bool:
    return (config.get("SECRET_KEY") or "") in ("", DEV_SECRET_KEY)


def ratelimit_storage_uri(redis_url: str | None) -> str:
    return redis_url if redis_url else "memory://"
