"""The baseline for `bench/api_latency.py`: a bare Flask app that runs, for each scenario, exactly the domain SQL
statements the real endpoint ran (captured from the real app), through psycopg 3, and returns the rows as JSON.
No authentication, no rate limiter, no ORM, no pydantic: what is left is Flask + one connection + the query.

Served by gunicorn with the same settings as the real app:
    BENCH_SCENARIOS=/path/to/scenarios.pickle BENCH_DSN=postgresql://... gunicorn --chdir bench _bare_app:app
"""
from __future__ import annotations

import json
import os
import pickle
import threading
import uuid

import psycopg
from flask import Flask, Response, request

app = Flask(__name__)
_local = threading.local()
with open(os.environ["BENCH_SCENARIOS"], "rb") as fh:
    SCENARIOS: dict[str, dict] = pickle.load(fh)  # name -> {"statements": [(sql, params)], "sample_uuid": str|None}


def _conn() -> psycopg.Connection:
    conn = getattr(_local, "conn", None)
    if conn is None or conn.closed:
        conn = _local.conn = psycopg.connect(os.environ["BENCH_DSN"], autocommit=True)
    return conn


def _bind(params, sample, value):
    if sample is None or value is None or not isinstance(params, dict):
        return params
    return {k: ((value if isinstance(v, uuid.UUID) else str(value)) if str(v) == sample else v)
            for k, v in params.items()}


@app.get("/ping")
def ping():
    return {"ok": True}


@app.get("/bare/<name>")
def bare(name: str):
    scenario = SCENARIOS[name]
    value = request.args.get("u")
    value = uuid.UUID(value) if value else None
    out = []
    with _conn().cursor() as cur:
        for statement, params in scenario["statements"]:
            cur.execute(statement, _bind(params, scenario.get("sample_uuid"), value))
            if cur.description is None:
                continue
            cols = [d.name for d in cur.description]
            out.append([dict(zip(cols, row)) for row in cur.fetchall()])
    return Response(json.dumps({"data": out}, default=str), mimetype="application/json")
