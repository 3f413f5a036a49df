#!/usr/bin/env bash
# `make run`: the web server, and with REDIS_URL an RQ worker and the scheduler beside it.
# The worker and the scheduler are supervised: one that exits is started again after 2 seconds, while the web
# server keeps serving. Ctrl-C (or the end of the web server) stops everything.
set -uo pipefail
PORT="${1:-5000}"
BIN=.venv/bin
pids=()
stopping=0
cleanup() {
  stopping=1
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null; done
  wait
}
trap cleanup INT TERM EXIT

supervise() {  # supervise NAME COMMAND...: restart the command whenever it exits
  local name="$1"; shift
  while true; do
    "$@"
    code=$?
    [ "$stopping" = 1 ] && break
    echo "[make run] $name exited with status $code; restarting it in 2 seconds." >&2
    sleep 2
  done
}

if [ -n "${REDIS_URL:-}" ]; then
  echo "REDIS_URL is set: starting an RQ worker and the scheduler (restarted if they stop)."
  setsid bash -c "$(declare -f supervise); stopping=0; supervise worker $BIN/flask jobs worker" & pids+=($!)
  setsid bash -c "$(declare -f supervise); stopping=0; supervise scheduler $BIN/flask jobs scheduler" & pids+=($!)
else
  echo "No REDIS_URL: background jobs run in-process (development mode)."
fi
if [ -z "${DATABASE_URL:-}" ]; then echo "No DATABASE_URL: using SQLite at instance/screening.db."; fi
setsid $BIN/gunicorn --bind "127.0.0.1:${PORT}" --workers 2 --threads 4 --graceful-timeout 5 --access-logfile - wsgi:app &
web=$!
pids+=($web)
wait "$web"
