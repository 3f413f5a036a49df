#!/usr/bin/env bash
# `make run`: the web server, and with REDIS_URL an RQ worker and the scheduler beside it.
set -uo pipefail
PORT="${1:-5000}"
BIN=.venv/bin
pids=()
cleanup() { trap - INT TERM EXIT; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait; }
trap cleanup INT TERM EXIT
if [ -n "${REDIS_URL:-}" ]; then
  echo "REDIS_URL is set: starting an RQ worker and the scheduler."
  $BIN/flask jobs worker & pids+=($!)
  $BIN/flask jobs scheduler & pids+=($!)
else
  echo "No REDIS_URL: background jobs run in-process (development mode)."
fi
if [ -z "${DATABASE_URL:-}" ]; then echo "No DATABASE_URL: using SQLite at instance/screening.db."; fi
$BIN/gunicorn --bind "127.0.0.1:${PORT}" --workers 2 --threads 4 --graceful-timeout 5 --access-logfile - wsgi:app & pids+=($!)
wait -n "${pids[@]}"
