"""The changes `bench/api_latency.py --proposed` measures, before they are applied to the code.

Two parts, both applied only to the bench database / the bench's own server process:
- DDL (PostgreSQL): exact counters kept by statement-level triggers (`entity_counts`, `note_counts`) and index
  changes. `apply_ddl` is idempotent; `revert_ddl` restores the migrations' definitions.
- Query changes: `patch()` replaces `app.entities.queries.list_entities` and `app.notes.queries.list_notes` in the
  running process with the proposed versions (totals from the counters when the filters allow it; pages found
  with an index-only scan of ids, then only those rows loaded: a "deferred join").
`_proposed_wsgi.py` is the gunicorn entry point that calls `patch()` before serving `wsgi:app`.
"""
from __future__ import annotations

import psycopg

# ------------------------------------------------------------------ DDL

ROWS = {  # the changed rows of one statement, each with its sign
    "INSERT": "SELECT *, 1 AS d FROM new_rows",
    "DELETE": "SELECT *, -1 AS d FROM old_rows",
    "UPDATE": "SELECT *, 1 AS d FROM new_rows UNION ALL SELECT *, -1 AS d FROM old_rows",
}


def _upsert(table: str, pk: str, columns: str, keys: str, source: str, rows: str) -> str:
    """Add the signed count of live changed rows to each touched bucket (in key order: no deadlocks between
    statements touching the same buckets; zero deltas, e.g. an edit of a name, write nothing)."""
    width = columns.count(",") + 1
    group = ", ".join(str(i) for i in range(1, width + 1))
    return (f"INSERT INTO {table} AS c ({columns}, n) SELECT {keys}, sum(x.d) FROM ({rows}) x {source} "
            f"WHERE x.deleted_at IS NULL GROUP BY {group} HAVING sum(x.d) <> 0 ORDER BY {group} "
            f"ON CONFLICT ON CONSTRAINT {pk} DO UPDATE SET n = c.n + excluded.n;")


ENTITY_KEYS = "x.program_id, x.entity_type, coalesce(x.risk_level, ''), x.archived_at IS NOT NULL"
FLAG_SOURCE = ("CROSS JOIN LATERAL jsonb_array_elements_text(CASE WHEN jsonb_typeof(x.flags) = 'array' "
               "THEN x.flags ELSE '[]'::jsonb END) AS f(flag)")
NOTE_KEYS = ("x.account_id, x.program_id, coalesce(x.created_by_type, ''), "
             "coalesce(x.created_by_user_id, x.created_by_api_key_id, 0), x.archived_at IS NOT NULL")


def _sync_function(name: str, statements) -> str:
    branches = []
    for op in ("INSERT", "DELETE", "UPDATE"):
        body = "\n        ".join(stmt(ROWS[op]) for stmt in statements)
        branches.append(f"IF TG_OP = '{op}' THEN\n        {body}")
    return (f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$\nBEGIN\n    "
            + "\n    ELS".join(branches) + "\n    END IF;\n    RETURN NULL;\nEND $$;")


def _triggers(table: str, prefix: str, function: str, truncate: str) -> str:
    return "\n".join([
        *(f"DROP TRIGGER IF EXISTS {prefix}_{op} ON {table};" for op in ("ins", "upd", "del", "trunc")),
        f"CREATE TRIGGER {prefix}_ins AFTER INSERT ON {table} REFERENCING NEW TABLE AS new_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {function}();",
        f"CREATE TRIGGER {prefix}_upd AFTER UPDATE ON {table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS "
        f"new_rows FOR EACH STATEMENT EXECUTE FUNCTION {function}();",
        f"CREATE TRIGGER {prefix}_del AFTER DELETE ON {table} REFERENCING OLD TABLE AS old_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {function}();",
        f"CREATE TRIGGER {prefix}_trunc AFTER TRUNCATE ON {table} FOR EACH STATEMENT EXECUTE FUNCTION {truncate}();",
    ])


COUNTERS = "\n\n".join([
    """CREATE TABLE IF NOT EXISTS entity_counts (
    program_id integer NOT NULL,
    entity_type varchar(16) NOT NULL,
    risk_level varchar(8) NOT NULL,          -- '' = no risk assigned
    archived boolean NOT NULL,
    n bigint NOT NULL,
    CONSTRAINT pk_entity_counts PRIMARY KEY (program_id, entity_type, risk_level, archived)
);
CREATE TABLE IF NOT EXISTS entity_flag_counts (
    program_id integer NOT NULL,
    flag varchar(32) NOT NULL,
    entity_type varchar(16) NOT NULL,
    risk_level varchar(8) NOT NULL,
    archived boolean NOT NULL,
    n bigint NOT NULL,
    CONSTRAINT pk_entity_flag_counts PRIMARY KEY (program_id, flag, entity_type, risk_level, archived)
);
CREATE TABLE IF NOT EXISTS note_counts (
    account_id integer NOT NULL,
    program_id integer NOT NULL,
    created_by_type varchar(16) NOT NULL,    -- '' = legacy (no author)
    created_by_id integer NOT NULL,          -- the user's or the API key's id; 0 = none
    archived boolean NOT NULL,
    n bigint NOT NULL,
    CONSTRAINT pk_note_counts PRIMARY KEY (account_id, program_id, created_by_type, created_by_id, archived)
);""",
    _sync_function("entity_counts_sync", [
        lambda rows: _upsert("entity_counts", "pk_entity_counts", "program_id, entity_type, risk_level, archived",
                             ENTITY_KEYS, "", rows),
        lambda rows: _upsert("entity_flag_counts", "pk_entity_flag_counts",
                             "program_id, flag, entity_type, risk_level, archived",
                             ENTITY_KEYS.replace("x.program_id,", "x.program_id, f.flag,"), FLAG_SOURCE, rows),
    ]),
    """CREATE OR REPLACE FUNCTION entity_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM entity_counts;
    DELETE FROM entity_flag_counts;
    RETURN NULL;
END $$;""",
    _triggers("entities", "entity_counts", "entity_counts_sync", "entity_counts_truncate"),
    _sync_function("note_counts_sync", [
        lambda rows: _upsert("note_counts", "pk_note_counts",
                             "account_id, program_id, created_by_type, created_by_id, archived", NOTE_KEYS, "", rows),
    ]),
    """CREATE OR REPLACE FUNCTION note_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM note_counts;
    RETURN NULL;
END $$;""",
    _triggers("notes", "note_counts", "note_counts_sync", "note_counts_truncate"),
    """-- Backfill (in the migration: once, right after creating the triggers, in the same transaction).
DELETE FROM entity_counts;
INSERT INTO entity_counts (program_id, entity_type, risk_level, archived, n)
SELECT program_id, entity_type, coalesce(risk_level, ''), archived_at IS NOT NULL, count(*)
FROM entities WHERE deleted_at IS NULL GROUP BY 1, 2, 3, 4;
DELETE FROM entity_flag_counts;
INSERT INTO entity_flag_counts (program_id, flag, entity_type, risk_level, archived, n)
SELECT program_id, f.flag, entity_type, coalesce(risk_level, ''), archived_at IS NOT NULL, count(*)
FROM entities CROSS JOIN LATERAL jsonb_array_elements_text(flags) AS f(flag)
WHERE deleted_at IS NULL AND jsonb_typeof(flags) = 'array' GROUP BY 1, 2, 3, 4, 5;
DELETE FROM note_counts;
INSERT INTO note_counts (account_id, program_id, created_by_type, created_by_id, archived, n)
SELECT account_id, program_id, coalesce(created_by_type, ''), coalesce(created_by_user_id, created_by_api_key_id, 0),
       archived_at IS NOT NULL, count(*)
FROM notes WHERE deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5;""",
])

DROP_COUNTERS = """
DROP TRIGGER IF EXISTS entity_counts_ins ON entities; DROP TRIGGER IF EXISTS entity_counts_upd ON entities;
DROP TRIGGER IF EXISTS entity_counts_del ON entities; DROP TRIGGER IF EXISTS entity_counts_trunc ON entities;
DROP TRIGGER IF EXISTS note_counts_ins ON notes; DROP TRIGGER IF EXISTS note_counts_upd ON notes;
DROP TRIGGER IF EXISTS note_counts_del ON notes; DROP TRIGGER IF EXISTS note_counts_trunc ON notes;
DROP FUNCTION IF EXISTS entity_counts_sync(); DROP FUNCTION IF EXISTS entity_counts_truncate();
DROP FUNCTION IF EXISTS note_counts_sync(); DROP FUNCTION IF EXISTS note_counts_truncate();
DROP TABLE IF EXISTS entity_counts; DROP TABLE IF EXISTS entity_flag_counts; DROP TABLE IF EXISTS note_counts;
"""

# Index definitions that replace the migrations' ones of the same name (name -> CREATE INDEX).
INDEXES = {
    # lists sorted by created_at with archived or flags filters: the filter is checked in the index (index-only
    # scans for the page's ids, no heap visit per skipped row).
    "ix_entities_program_created":
        "CREATE INDEX ix_entities_program_created ON entities (program_id, created_at, id) "
        "INCLUDE (archived_at, flags) WHERE deleted_at IS NULL",
    # name-sorted lists with any filter of the API (type, risk, archived, flags) stay index-only.
    "ix_entities_program_name":
        "CREATE INDEX ix_entities_program_name ON entities (program_id, entity_name, id) "
        "INCLUDE (entity_type, risk_level, archived_at, flags) WHERE deleted_at IS NULL",
    "ix_entities_program_type_created":
        "CREATE INDEX ix_entities_program_type_created ON entities (program_id, entity_type, created_at, id) "
        "INCLUDE (archived_at) WHERE deleted_at IS NULL",
    "ix_entities_program_risk_created":
        "CREATE INDEX ix_entities_program_risk_created ON entities (program_id, risk_level, created_at, id) "
        "INCLUDE (archived_at) WHERE deleted_at IS NULL",
    # the notes list orders by (created_at, id) and (updated_at, id): id in the key makes the page's ids an
    # index-only scan with no sort.
    "ix_notes_account_created":
        "CREATE INDEX ix_notes_account_created ON notes (account_id, created_at, id) INCLUDE (archived_at) "
        "WHERE deleted_at IS NULL",
    "ix_notes_account_updated":
        "CREATE INDEX ix_notes_account_updated ON notes (account_id, updated_at, id) INCLUDE (archived_at) "
        "WHERE deleted_at IS NULL",
    "ix_notes_entity_created":
        "CREATE INDEX ix_notes_entity_created ON notes (entity_id, created_at, id) WHERE deleted_at IS NULL",
}


def _indexdefs(conn: psycopg.Connection, names) -> dict[str, str]:
    rows = conn.execute("SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)", (list(names),))
    return dict(rows.fetchall())


def _version() -> str:
    import hashlib
    return hashlib.sha256((COUNTERS + repr(sorted(INDEXES.items()))).encode()).hexdigest()[:12]


def apply_ddl(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_meta (key text PRIMARY KEY, value text NOT NULL)")
        row = conn.execute("SELECT value FROM bench_meta WHERE key = 'proposed'").fetchone()
        if row and row[0] == _version():
            return
    if row:
        revert_ddl(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        import json
        original = _indexdefs(conn, INDEXES)
        conn.execute("INSERT INTO bench_meta VALUES ('original_indexes', %s) ON CONFLICT (key) DO NOTHING",
                     (json.dumps(original),))
        with conn.transaction():
            conn.execute(COUNTERS)
        conn.execute("SET maintenance_work_mem = '256MB'")
        for name, ddl in INDEXES.items():
            conn.execute(f"DROP INDEX IF EXISTS {name}")
            conn.execute(ddl)
        for table in ("entities", "notes", "entity_counts", "entity_flag_counts", "note_counts"):
            conn.execute(f"VACUUM (ANALYZE) {table}")
        conn.execute("INSERT INTO bench_meta VALUES ('proposed', %s)", (_version(),))


def revert_ddl(dsn: str) -> None:
    import json
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_meta (key text PRIMARY KEY, value text NOT NULL)")
        if not conn.execute("SELECT 1 FROM bench_meta WHERE key = 'proposed'").fetchone():
            return
        original = json.loads(conn.execute("SELECT value FROM bench_meta WHERE key = 'original_indexes'")
                              .fetchone()[0])
        conn.execute(DROP_COUNTERS)
        for name, ddl in original.items():
            conn.execute(f"DROP INDEX IF EXISTS {name}")
            conn.execute(ddl)
        for table in ("entities", "notes"):
            conn.execute(f"VACUUM (ANALYZE) {table}")
        conn.execute("DELETE FROM bench_meta WHERE key IN ('proposed', 'original_indexes')")


# ------------------------------------------------------------------ query changes

def patch() -> None:
    """Swap the proposed list functions into the app's query modules (this process only)."""
    from app.entities import queries as entity_queries
    from app.notes import queries as note_queries

    entity_queries.list_entities = list_entities
    note_queries.list_notes = list_notes
    _cache_public_numbers()


def _cache_public_numbers() -> None:
    """app.core.numbers.encode, memoised: a Sqids encode costs ~30 us (alphabet shuffles), 30 per list page,
    and an id's public number never changes for a given alphabet."""
    from functools import lru_cache

    from app.core import numbers

    if getattr(numbers.encode, "cache_info", None):
        return

    @lru_cache(maxsize=65536)
    def _encode(alphabet: str, min_length: int, kind: str, id_: int) -> str:
        return numbers._sqids(alphabet, min_length).encode([numbers.KINDS[kind], id_])

    def encode(kind: str, id_: int) -> str:
        coder_cfg = numbers.current_app.config if numbers.has_app_context() else None
        if coder_cfg is None:
            return _encode(numbers.Config.SQIDS_ALPHABET, numbers.Config.SQIDS_MIN_LENGTH, kind, id_)
        return _encode(coder_cfg["SQIDS_ALPHABET"], coder_cfg["SQIDS_MIN_LENGTH"], kind, id_)

    encode.cache_info = _encode.cache_info
    numbers.encode = encode


def paginate_ids(stmt, key, order, params, total: int):
    """One page of `stmt` (filtered and ordered by `order`): the page's keys first (LIMIT/OFFSET over an
    index-only scan), then only those rows, with their eager joins."""
    from sqlalchemy import select

    from app.core.listing import Page
    from app.extensions import db

    items: list = []
    offset = (params.page - 1) * params.per_page
    if offset < total:
        ids = stmt.with_only_columns(key).limit(params.per_page).offset(offset).subquery()
        entity = stmt.column_descriptions[0]["entity"]
        page = select(entity).where(key.in_(ids.select())).order_by(*order)
        items = list(db.session.scalars(page).unique())
    return Page(items=items, page=params.page, per_page=params.per_page, total=total)


def list_entities(actor, program_uuid, params):
    """As app.entities.queries.list_entities, with the total from entity_counts / entity_flag_counts when the
    filters are only entity_type, risk_level, flags and archived (PostgreSQL), and the page found by id first."""
    from sqlalchemy import func, or_, select

    from app.core import numbers
    from app.entities.models import Entity
    from app.entities.queries import _has_flag
    from app.extensions import db
    from app.programs.queries import get_program

    program = get_program(actor, program_uuid)
    conditions = [Entity.program_id == program.id, Entity.deleted_at.is_(None)]
    filters = params.filters
    if "entity_type" in filters:
        conditions.append(Entity.entity_type == filters["entity_type"])
    if "risk_level" in filters:
        risk = filters["risk_level"]
        conditions.append(Entity.risk_level.is_(None) if risk == "none" else Entity.risk_level == risk)
    if "flags" in filters:
        conditions.append(_has_flag(filters["flags"]))
    if "reference_number" in filters:
        conditions.append(Entity.reference_number == filters["reference_number"])
    if filters.get("entity_number"):
        conditions.append(Entity.id == (numbers.decode("entity", filters["entity_number"]) or 0))
    if params.archived is True:
        conditions.append(Entity.archived_at.is_not(None))
    elif params.archived is False:
        conditions.append(Entity.archived_at.is_(None))
    if params.search:
        term = params.search
        matches = [Entity.entity_name.icontains(term, autoescape=True),
                   Entity.reference_number.icontains(term, autoescape=True)]
        entity_id = numbers.decode("entity", term)
        if entity_id is not None:
            matches.append(Entity.id == entity_id)
        conditions.append(or_(*matches))
    column = Entity.entity_name if params.sort_key == "entity_name" else Entity.created_at
    order = (column.desc(), Entity.id.desc()) if params.descending else (column.asc(), Entity.id.asc())
    stmt = select(Entity).where(*conditions).order_by(*order)

    countable = set(filters) <= {"entity_type", "risk_level", "flags"} and not params.search
    if countable and db.session.get_bind().dialect.name == "postgresql":
        total = db.session.scalar(entity_total_stmt(program.id, filters, params.archived))
    else:
        total = db.session.scalar(select(func.count(Entity.id)).where(*conditions))
    return paginate_ids(stmt, Entity.id, order, params, int(total or 0))  # sum() is numeric: an int for meta


def entity_total_stmt(program_id: int, filters: dict, archived: bool | None):
    from sqlalchemy import column, func, select, table

    flag = filters.get("flags")
    t = table("entity_flag_counts" if flag else "entity_counts", column("program_id"), column("flag"),
              column("entity_type"), column("risk_level"), column("archived"), column("n"))
    cond = [t.c.program_id == program_id]
    if flag:
        cond.append(t.c.flag == flag)
    if "entity_type" in filters:
        cond.append(t.c.entity_type == filters["entity_type"])
    if "risk_level" in filters:
        cond.append(t.c.risk_level == ("" if filters["risk_level"] == "none" else filters["risk_level"]))
    if archived is not None:
        cond.append(t.c.archived.is_(archived))
    return select(func.coalesce(func.sum(t.c.n), 0)).where(*cond)


COUNTABLE_NOTE_FILTERS = {"program_uuid", "created_by", "created_by_user_uuid", "created_by_api_key_uuid"}


def list_notes(actor, params):
    """As app.notes.queries.list_notes, with the total from note_counts when the filters allow it
    (PostgreSQL), and the page's ids found on the notes table alone (index-only) before the rows are joined."""
    from datetime import timedelta

    from sqlalchemy import column, func, select, table

    from app.accounts.models import ApiKey, User
    from app.entities.models import Entity
    from app.extensions import db
    from app.notes.models import Note
    from app.notes.queries import _escape_like, _live
    from app.programs.models import Program

    f = params.filters
    cond = [Note.account_id == actor.account_id, Note.deleted_at.is_(None)]
    if "entity_uuid" in f:
        cond.append(Note.entity_id.in_(select(Entity.id).where(
            Entity.uuid == f["entity_uuid"], Entity.account_id == actor.account_id, Entity.deleted_at.is_(None))))
    if "event_uuid" in f:
        cond.append(Note.event_uuid == f["event_uuid"])
    program_ids = user_ids = key_ids = None
    if "program_uuid" in f:
        program_ids = select(Program.id).where(Program.uuid == f["program_uuid"],
                                               Program.account_id == actor.account_id)
        cond.append(Note.program_id.in_(program_ids))
    if "created_by" in f:
        cond.append(Note.created_by_type == f["created_by"])
    if "created_by_user_uuid" in f:
        user_ids = select(User.id).where(User.uuid == f["created_by_user_uuid"], User.account_id == actor.account_id)
        cond += [Note.created_by_type == "user", Note.created_by_user_id.in_(user_ids)]
    if "created_by_api_key_uuid" in f:
        key_ids = select(ApiKey.id).where(ApiKey.uuid == f["created_by_api_key_uuid"],
                                          ApiKey.account_id == actor.account_id)
        cond += [Note.created_by_type == "api_key", Note.created_by_api_key_id.in_(key_ids)]
    if "created_at_from" in f:
        cond.append(Note.created_at >= f["created_at_from"])
    if "created_at_to" in f:
        upper, whole_day = f["created_at_to"]
        cond.append(Note.created_at < upper + timedelta(days=1) if whole_day else Note.created_at <= upper)
    if params.archived is True:
        cond.append(Note.archived_at.is_not(None))
    elif params.archived is False:
        cond.append(Note.archived_at.is_(None))
    if params.search:
        cond.append(Note.note_text.ilike(f"%{_escape_like(params.search)}%", escape="\\"))
    col = getattr(Note, params.sort_key)
    order = (col.desc(), Note.id.desc()) if params.descending else (col.asc(), Note.id.asc())

    if set(f) <= COUNTABLE_NOTE_FILTERS and not params.search and db.session.get_bind().dialect.name == "postgresql":
        t = table("note_counts", column("account_id"), column("program_id"), column("created_by_type"),
                  column("created_by_id"), column("archived"), column("n"))
        tc = [t.c.account_id == actor.account_id]
        if program_ids is not None:
            tc.append(t.c.program_id.in_(program_ids))
        if "created_by" in f:
            tc.append(t.c.created_by_type == f["created_by"])
        if user_ids is not None:
            tc += [t.c.created_by_type == "user", t.c.created_by_id.in_(user_ids)]
        if key_ids is not None:
            tc += [t.c.created_by_type == "api_key", t.c.created_by_id.in_(key_ids)]
        if params.archived is not None:
            tc.append(t.c.archived.is_(params.archived))
        total = int(db.session.scalar(select(func.coalesce(func.sum(t.c.n), 0)).where(*tc)) or 0)
    else:
        total = db.session.scalar(select(func.count()).select_from(Note).where(*cond)) or 0

    from app.core.listing import Page
    items: list = []
    offset = (params.page - 1) * params.per_page
    if offset < total:
        ids = select(Note.id).where(*cond).order_by(*order).limit(params.per_page).offset(offset).subquery()
        stmt = _live(actor).where(Note.id.in_(ids.select())).order_by(*order)
        items = list(db.session.scalars(stmt).unique())
    return Page(items=items, page=params.page, per_page=params.per_page, total=total)


# ------------------------------------------------------------------ exactness check

CHECKS = {
    "entity_counts": """
        SELECT program_id, entity_type, coalesce(risk_level, ''), archived_at IS NOT NULL, count(*)
        FROM entities WHERE deleted_at IS NULL GROUP BY 1, 2, 3, 4""",
    "entity_flag_counts": """
        SELECT program_id, f.flag, entity_type, coalesce(risk_level, ''), archived_at IS NOT NULL, count(*)
        FROM entities CROSS JOIN LATERAL jsonb_array_elements_text(flags) AS f(flag)
        WHERE deleted_at IS NULL AND jsonb_typeof(flags) = 'array' GROUP BY 1, 2, 3, 4, 5""",
    "note_counts": """
        SELECT account_id, program_id, coalesce(created_by_type, ''),
               coalesce(created_by_user_id, created_by_api_key_id, 0), archived_at IS NOT NULL, count(*)
        FROM notes WHERE deleted_at IS NULL GROUP BY 1, 2, 3, 4, 5""",
}


def verify_counters(dsn: str) -> list[str]:
    """Every counter bucket against a full GROUP BY of the table: the list of differences (empty when exact)."""
    problems = []
    with psycopg.connect(dsn) as conn:
        for table, query in CHECKS.items():
            truth = {tuple(r[:-1]): r[-1] for r in conn.execute(query)}
            kept = {tuple(r[:-1]): r[-1] for r in conn.execute(f"SELECT * FROM {table} WHERE n <> 0")}
            for key in truth.keys() | kept.keys():
                if truth.get(key, 0) != kept.get(key, 0):
                    problems.append(f"{table} {key}: counter {kept.get(key, 0)}, rows {truth.get(key, 0)}")
    return problems
