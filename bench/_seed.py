"""Bench seeding: one account, 10 programs, N entities and notes, bulk-loaded with COPY (psycopg 3).

The schema comes from the real migrations (`flask db upgrade`); the account and API key from the real CLI
(`flask accounts bootstrap`); programs from the real service. Only the bulk rows are written with COPY, with the
table's secondary indexes dropped for the load and recreated from their exact definitions afterwards.

Seeding is idempotent: a `bench_meta` table in the bench database remembers the sizes, the seed version and a
fingerprint of the migrations; when they all match, seeding is skipped, otherwise the database is recreated.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import psycopg
from psycopg import sql

ROOT = Path(os.path.abspath(__file__)).parent.parent
SEED_VERSION = "4"
PROGRAM_WEIGHTS = (0.25, 0.18, 0.13, 0.10, 0.09, 0.08, 0.06, 0.05, 0.04, 0.02)  # a realistic, skewed split
SPAN_DAYS = 3 * 365

FIRST = ("James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara Richard Susan Joseph "
         "Jessica Thomas Sarah Charles Karen Christopher Lisa Daniel Nancy Matthew Betty Anthony Margaret Mark Sandra "
         "Donald Ashley Steven Kimberly Paul Emily Andrew Donna Joshua Michelle Kenneth Carol Kevin Amanda Brian "
         "Melissa George Deborah Timothy Stephanie Ronald Rebecca Edward Sharon Jason Laura Jeffrey Cynthia Ryan "
         "Kathleen Jacob Amy Gary Angela Nicholas Shirley Eric Anna Jonathan Brenda Stephen Pamela Larry Emma Justin "
         "Nicole Scott Helen Brandon Samantha Benjamin Katherine Samuel Christine Gregory Debra Alexander Rachel "
         "Frank Carolyn Patrick Janet Raymond Catherine Jack Maria Dennis Heather Jerry Diane Tyler Ruth Aaron Julie "
         "Wei Mohammed Olga Sergei Aisha Hiroshi Priya Ahmed Fatima Chen Yuki Ivan Nguyen Mei Raj Ana Lucas Sofia "
         "Mateo Chloe Liam Olivia Noah Ava Oliver Isla Jack Charlotte Leo Amelia Hamish Zara Ngaio Aroha").split()
LAST = ("Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson "
        "Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis "
        "Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall "
        "Rivera Campbell Mitchell Carter Roberts Chen Wang Li Zhang Liu Singh Kumar Patel Khan Ali Ivanov Petrov "
        "Smirnov Kowalski Nowak Muller Schmidt Schneider Fischer Weber Rossi Russo Ferrari Esposito Bianchi "
        "Romano Dubois Laurent Bernard Tanaka Suzuki Takahashi Watanabe Kim Park Choi Tran Pham O'Brien Murphy "
        "Kelly Sullivan Walsh McDonald MacLeod Fraser Kaur Hussain Rahman Cohen Levi Friedman Okafor Mensah").split()
BIZ_A = ("Acme Southern Pacific Harbour Global Blue Red Golden Eastern Northern Coastal Summit Pinnacle Apex Iron "
         "Silver Crown Royal United Allied Federal Metro Urban Rural Outback Coral Reef Eucalypt Wattle Kestrel "
         "Falcon Osprey Heron Granite Quartz Cobalt Meridian Horizon Frontier Liberty Union Sterling Orion Atlas").split()
BIZ_B = ("Holdings Trading Logistics Mining Resources Capital Partners Minerals Freight Imports Exports Consulting "
         "Ventures Energy Agriculture Pastoral Shipping Finance Investments Developments Property Health Foods "
         "Technologies Systems Engineering Construction Motors Marine Labs Pharma Textiles").split()
BIZ_C = ("Pty Ltd", "Pty Ltd", "Pty Ltd", "Limited", "Ltd", "Group", "Trust", "& Co", "LLC", "PLC", "Inc")
VESSEL_A = ("Ocean Sea Star Northern Southern Pacific Golden Silver Arctic Coral Morning Evening Iron Blue Grand "
            "Spirit Pride Queen King Lady").split()
VESSEL_B = ("Voyager Explorer Carrier Trader Dawn Wind Wave Pearl Princess Venture Endeavour Fortune Spirit Runner "
            "Navigator Mariner Horizon Glory Harmony").split()
STREETS = ("George Pitt Collins Bourke Queen King Elizabeth Flinders Swanston Adelaide Murray Hay Victoria "
           "Albert Church High Station Park Main Beach Railway Bridge Mill").split()
STREET_T = ("St", "Rd", "Ave", "Pde", "Hwy", "Ln", "Dr", "Cres", "Tce")
SUBURBS = ("Sydney Parramatta Bondi Chatswood Melbourne Fitzroy Carlton Brunswick Brisbane Fortitude Southport "
           "Perth Fremantle Subiaco Adelaide Glenelg Hobart Launceston Darwin Canberra Geelong Ballarat Bendigo "
           "Newcastle Wollongong Townsville Cairns Toowoomba").split()
AU_STATES = ("NSW", "VIC", "QLD", "WA", "SA", "TAS", "ACT", "NT")
AU_STATE_W = (32, 26, 20, 10, 7, 2, 2, 1)
COUNTRIES = ("AU", "NZ", "GB", "US", "SG", "HK", "IN", "CN", "AE", "RU", None)
COUNTRY_W = (72, 6, 5, 4, 2, 2, 2, 2, 1, 1, 3)
FLAG_W = {"pep": 35, "adverse_media": 22, "sanction": 8, "fraud": 9, "court_actions": 8, "bankruptcy": 5,
          "hardship": 4, "deceased": 4, "deregistered": 3, "external_administration": 2}
NOTE_PHRASES = (
    "Reviewed the screening result; the match is a false positive (different date of birth).",
    "Customer provided a certified copy of their passport.",
    "Escalated to the compliance manager for a second review.",
    "Adverse media article relates to a different person with the same name.",
    "PEP status confirmed: domestic PEP, enhanced due diligence applied.",
    "Source of funds documentation requested by e-mail.",
    "Called the customer to confirm the residential address.",
    "Risk rating raised after the periodic review.",
    "Sanctions hit dismissed: the listed entity is a vessel with a similar name.",
    "Beneficial ownership structure verified against the company register.",
    "Awaiting response from the relationship manager.",
    "Onboarding approved subject to annual review.",
)

ENTITY_COLUMNS = (
    "uuid", "account_id", "program_id", "entity_type", "reference_number", "entity_name", "first_name",
    "middle_name", "last_name", "birth_date", "business_name", "business_number", "business_number_type",
    "vessel_name", "property_name", "address_line1", "address_line2", "address_suburb", "address_state",
    "address_postcode", "address_country", "phone1", "phone2", "phone3", "phone4", "email1", "email2", "email3",
    "email4", "flags", "risk_level", "archived_at", "created_at", "updated_at", "deleted_at")
NOTE_COLUMNS = (
    "uuid", "account_id", "entity_id", "program_id", "event_id", "event_uuid", "note_text", "created_by_type",
    "created_by_user_id", "created_by_api_key_id", "is_immutable", "archived_at", "created_at", "updated_at",
    "deleted_at")


@dataclass
class BenchInfo:
    account_id: int
    account_uuid: str
    api_key: str
    entities: int
    notes: int
    programs: list[dict]  # {id, uuid, name, entities}


def plain_url(url: str) -> str:
    """A libpq URL from an SQLAlchemy one."""
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def db_name(url: str) -> str:
    return plain_url(url).rsplit("/", 1)[1].split("?")[0]


def admin_url(url: str) -> str:
    base, _, _ = plain_url(url).rpartition("/")
    return f"{base}/postgres"


def migrations_fingerprint() -> str:
    digest = hashlib.sha256(SEED_VERSION.encode())
    for path in sorted((ROOT / "migrations" / "versions").glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _log(msg: str) -> None:
    print(f"[seed] {msg}", file=sys.stderr, flush=True)


def read_meta(url: str) -> dict | None:
    try:
        with psycopg.connect(plain_url(url), connect_timeout=5) as conn:
            row = conn.execute("SELECT value FROM bench_meta WHERE key = 'info'").fetchone()
            return json.loads(row[0]) if row else None
    except psycopg.Error:
        return None


def recreate_database(url: str) -> None:
    name = db_name(url)
    with psycopg.connect(admin_url(url), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def _flask(args: list[str], env: dict) -> str:
    out = subprocess.run([str(ROOT / ".venv" / "bin" / "flask"), *args], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True)
    return out.stdout


def app_env(url: str, redis_url: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env.update({"DATABASE_URL": url, "REDIS_URL": redis_url, "FLASK_APP": "wsgi.py"})
    return env


def ensure_seeded(url: str, redis_url: str, n_entities: int, n_notes: int, *, force: bool = False) -> BenchInfo:
    fingerprint = migrations_fingerprint()
    meta = None if force else read_meta(url)
    if meta and meta.get("fingerprint") == fingerprint and meta.get("entities") == n_entities \
            and meta.get("notes") == n_notes:
        _log(f"database {db_name(url)} already seeded with {n_entities:,} entities and {n_notes:,} notes: skipping")
        return BenchInfo(**meta["info"])
    if meta:
        _log("seed size or migrations changed: recreating the bench database")
    started = time.perf_counter()
    recreate_database(url)
    env = app_env(url, redis_url)
    _flask(["db", "upgrade"], env)
    _log(f"schema migrated ({time.perf_counter() - started:.1f}s)")
    boot = json.loads(_flask(["accounts", "bootstrap", "--name", "Bench Pty Ltd", "--email", "bench@example.com",
                              "--password", "Bench-password-1234", "--credit", "1000"], env).strip().splitlines()[-1])
    info = _seed_rows(url, boot, n_entities, n_notes)
    with psycopg.connect(plain_url(url), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS bench_meta (key text PRIMARY KEY, value text NOT NULL)")
        conn.execute("INSERT INTO bench_meta VALUES ('info', %s) ON CONFLICT (key) DO UPDATE SET value = "
                     "excluded.value", (json.dumps({"fingerprint": fingerprint, "entities": n_entities,
                                                    "notes": n_notes, "info": info.__dict__}),))
    _log(f"seeded in {time.perf_counter() - started:.1f}s")
    return info


def _secondary_indexes(conn: psycopg.Connection, table: str) -> list[tuple[str, str]]:
    """(name, CREATE INDEX statement) of the table's indexes that back no constraint."""
    return conn.execute(
        "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
        "JOIN pg_class t ON t.oid = x.indrelid WHERE t.relname = %s AND NOT EXISTS "
        "(SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)", (table,)).fetchall()


def _seed_rows(url: str, boot: dict, n_entities: int, n_notes: int) -> BenchInfo:
    rng = random.Random(20261122)
    with psycopg.connect(plain_url(url)) as conn:
        account_id = conn.execute("SELECT id FROM accounts WHERE uuid = %s", (boot["account_uuid"],)).fetchone()[0]
        user_id = conn.execute("SELECT id FROM users WHERE uuid = %s", (boot["user_uuid"],)).fetchone()[0]
        key_id = conn.execute("SELECT id FROM api_keys WHERE uuid = %s", (boot["api_key_uuid"],)).fetchone()[0]
        # The bench must measure latency, not the limiter's threshold: raise this account's limit.
        conn.execute("UPDATE accounts SET rate_limit_per_minute = 10000000 WHERE id = %s", (account_id,))
        conn.commit()
    programs = _create_programs(url, boot["account_uuid"])
    now = datetime.now(timezone.utc).replace(microsecond=0)
    start = now - timedelta(days=SPAN_DAYS)
    with psycopg.connect(plain_url(url)) as conn:
        conn.execute("SET maintenance_work_mem = '256MB'")
        t0 = time.perf_counter()
        dropped = _secondary_indexes(conn, "entities")
        for name, _ in dropped:
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
        counts = _copy_entities(conn, rng, account_id, programs, n_entities, start)
        conn.commit()
        _log(f"{n_entities:,} entities copied ({time.perf_counter() - t0:.1f}s)")
        t0 = time.perf_counter()
        for _, ddl in dropped:
            conn.execute(ddl)
        conn.commit()
        _log(f"entity indexes rebuilt ({time.perf_counter() - t0:.1f}s)")
        t0 = time.perf_counter()
        dropped = _secondary_indexes(conn, "notes")
        for name, _ in dropped:
            conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(name)))
        _copy_notes(conn, rng, account_id, user_id, key_id, n_notes, now)
        for _, ddl in dropped:
            conn.execute(ddl)
        conn.commit()
        _log(f"{n_notes:,} notes copied and indexed ({time.perf_counter() - t0:.1f}s)")
        for p in programs:
            p["entities"] = counts[p["id"]]
    # Production runs autovacuum; this server has it off, so set the visibility map and statistics now.
    t0 = time.perf_counter()
    with psycopg.connect(plain_url(url), autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE) entities")
        conn.execute("VACUUM (ANALYZE) notes")
        conn.execute("VACUUM (ANALYZE) programs")
        conn.execute("VACUUM (ANALYZE) api_keys")
        conn.execute("VACUUM (ANALYZE) accounts")
        for counters in ("entity_counts", "entity_flag_counts", "note_counts"):  # filled by the triggers
            conn.execute(f"VACUUM (ANALYZE) {counters}")
    _log(f"vacuum analyze ({time.perf_counter() - t0:.1f}s)")
    return BenchInfo(account_id=account_id, account_uuid=boot["account_uuid"], api_key=boot["api_key"],
                     entities=n_entities, notes=n_notes, programs=programs)


def _create_programs(url: str, account_uuid: str) -> list[dict]:
    """Ten programs through the real service (validation, audit), in an in-process app."""
    sys.path.insert(0, str(ROOT))
    from app import create_app
    from app.accounts import services as accounts
    from app.core.transactions import transaction
    from app.programs import services as programs

    app = create_app({"SQLALCHEMY_DATABASE_URI": url, "REDIS_URL": None})
    names = ("Retail onboarding", "Business banking", "Wealth clients", "Payments merchants", "Insurance",
             "Correspondent banks", "Trade finance", "Maritime", "Property settlements", "Legacy migration")
    out = []
    with app.app_context():
        account = accounts.get_account(uuid.UUID(account_uuid))
        actor = accounts.cli_actor(account)
        with transaction():
            for i, name in enumerate(names):
                program = programs.create_program(actor, {
                    "program_name": name, "default_risk_level": (None, "low", "medium")[i % 3],
                    "report_emails": [f"compliance{i}@example.com"]})
                out.append({"id": program.id, "uuid": str(program.uuid), "name": name,
                            "weight": PROGRAM_WEIGHTS[i]})
    return out


def _abn(rng: random.Random) -> str:
    from stdnum.au import abn
    body = f"{rng.randrange(10**8, 10**9)}"
    return abn.calc_check_digits(body) + body


def _copy_entities(conn, rng: random.Random, account_id: int, programs: list[dict], n: int,
                   start: datetime) -> dict[int, int]:
    choices = rng.choices
    program_ids = [p["id"] for p in programs]
    weights = [p["weight"] for p in programs]
    seq = {pid: 0 for pid in program_ids}
    flag_names, flag_w = list(FLAG_W), list(FLAG_W.values())
    step = SPAN_DAYS * 86400 / max(n, 1)
    end = start + timedelta(days=SPAN_DAYS)
    cols = sql.SQL(", ").join(sql.Identifier(c) for c in ENTITY_COLUMNS)
    with conn.cursor().copy(sql.SQL("COPY entities ({}) FROM STDIN").format(cols)) as copy:
        for i in range(n):
            pid = choices(program_ids, weights)[0]
            seq[pid] += 1
            created = start + timedelta(seconds=i * step + rng.uniform(0, step))
            r = rng.random()
            etype = "individual" if r < 0.70 else "business" if r < 0.92 else "vessel" if r < 0.96 else "property"
            first = middle = last = birth = bname = bnum = btype = vname = pname = None
            if etype == "individual":
                first, last = rng.choice(FIRST), rng.choice(LAST)
                middle = rng.choice(FIRST) if rng.random() < 0.35 else None
                name = f"{first} {middle} {last}" if middle else f"{first} {last}"
                birth = date(1935, 1, 1) + timedelta(days=rng.randrange(0, 70 * 365)) if rng.random() < 0.85 else None
            elif etype == "business":
                bname = f"{rng.choice(BIZ_A)} {rng.choice(BIZ_B)} {rng.choice(BIZ_C)}"
                name = bname
                t = rng.random()
                if t < 0.6:
                    btype, bnum = "au_abn", _abn(rng)
                elif t < 0.75:
                    btype, bnum = "au_acn", f"{rng.randrange(10**8, 10**9)}"
                elif t < 0.85:
                    btype, bnum = "uk_crn", f"{rng.randrange(10**7, 10**8)}"
            elif etype == "vessel":
                vname = f"{rng.choice(VESSEL_A)} {rng.choice(VESSEL_B)}" + (f" {rng.randrange(2, 9)}" if rng.random() < 0.3 else "")
                name = vname
            else:
                pname = f"{rng.randrange(1, 400)} {rng.choice(STREETS)} {rng.choice(STREET_T)}, {rng.choice(SUBURBS)}"
                name = pname
            country = choices(COUNTRIES, COUNTRY_W)[0]
            state = choices(AU_STATES, AU_STATE_W)[0] if country == "AU" else None
            has_addr = country is not None and rng.random() < 0.8
            phone = f"+61 4{rng.randrange(10, 99)} {rng.randrange(100, 999)} {rng.randrange(100, 999)}" \
                if rng.random() < 0.55 else None
            email = f"{(first or 'info').lower()}.{rng.randrange(1, 99999)}@example.com" if rng.random() < 0.45 else None
            f = rng.random()
            flags = "[]" if f >= 0.05 else json.dumps(sorted(set(choices(flag_names, flag_w, k=1 if f > 0.01 else 2))))
            rl = rng.random()
            risk = "low" if rl < 0.55 else "medium" if rl < 0.73 else "high" if rl < 0.80 else None
            updated = min(end, created + timedelta(days=rng.uniform(0, 90))) if rng.random() < 0.3 else created
            archived = min(end, created + timedelta(days=rng.uniform(1, 400))) if rng.random() < 0.08 else None
            deleted = min(end, created + timedelta(days=rng.uniform(1, 400))) if rng.random() < 0.003 else None
            ref = f"C{pid:02d}-{seq[pid]:07d}" if rng.random() < 0.9 else None
            copy.write_row((
                uuid.UUID(int=rng.getrandbits(128), version=4), account_id, pid, etype, ref, name, first, middle,
                last, birth, bname, bnum, btype, vname, pname,
                f"{rng.randrange(1, 300)} {rng.choice(STREETS)} {rng.choice(STREET_T)}" if has_addr else None,
                f"Unit {rng.randrange(1, 40)}" if has_addr and rng.random() < 0.15 else None,
                rng.choice(SUBURBS) if has_addr else None, state,
                f"{rng.randrange(800, 7999):04d}" if has_addr else None, country,
                phone, None, None, None, email, None, None, None, flags, risk,
                archived, created, updated, deleted))
    return seq


def _copy_notes(conn, rng: random.Random, account_id: int, user_id: int, key_id: int, n: int,
                now: datetime) -> None:
    """Notes on a fraction of the entities: most have a handful, a few have hundreds (long-running cases)."""
    if n == 0:
        return
    rows = conn.execute("SELECT id, program_id, created_at, archived_at, deleted_at FROM entities ORDER BY id"
                        ).fetchall()
    heavy = max(1, n // 2000)  # a few entities with long case histories
    plan: list[tuple[int, int]] = []  # (row index, notes)
    remaining = n
    picks = rng.sample(range(len(rows)), min(len(rows), n))
    for idx in picks[:heavy]:
        k = min(remaining, rng.randrange(200, 600))
        plan.append((idx, k))
        remaining -= k
    for idx in picks[heavy:]:
        if remaining <= 0:
            break
        k = min(remaining, 1 + int(rng.expovariate(1 / 3.0)))
        plan.append((idx, k))
        remaining -= k
    cols = sql.SQL(", ").join(sql.Identifier(c) for c in NOTE_COLUMNS)
    with conn.cursor().copy(sql.SQL("COPY notes ({}) FROM STDIN").format(cols)) as copy:
        for idx, k in plan:
            entity_id, program_id, entity_created, entity_archived, entity_deleted = rows[idx]
            # Notes are written while the entity is open; archiving and deleting the entity cascade to its
            # notes with the entity's own timestamp (as the entity services do).
            until = min(t for t in (now, entity_archived, entity_deleted) if t is not None)
            span = max(60.0, (until - entity_created).total_seconds())
            for _ in range(k):
                created = entity_created + timedelta(seconds=rng.uniform(0, span))
                w = rng.random()
                by_type, by_user, by_key = ("api_key", None, key_id) if w < 0.55 else \
                    ("user", user_id, None) if w < 0.95 else (None, None, None)
                immutable = by_type is None or rng.random() < 0.05
                text = " ".join(rng.sample(NOTE_PHRASES, rng.randrange(1, 4)))
                event = uuid.UUID(int=rng.getrandbits(128), version=4) if rng.random() < 0.05 else None
                updated = min(now, created + timedelta(hours=rng.uniform(0, 48))) if rng.random() < 0.15 else created
                archived = min(until, created + timedelta(days=30)) if rng.random() < 0.03 else entity_archived
                deleted = min(until, created + timedelta(days=2)) if rng.random() < 0.01 else entity_deleted
                copy.write_row((
                    uuid.UUID(int=rng.getrandbits(128), version=4), account_id, entity_id, program_id, None, event,
                    text, by_type, by_user, by_key, immutable, archived, created, min(updated, until), deleted))
