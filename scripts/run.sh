#!/usr/bin/env bash
# `make run`: the web server, and with REDIS_URL RQ workers (RQ_WORKERS, default 2, on every queue but the heavy
# and background ones), heavy workers (HEAVY_SLOTS, default 2, on the pdf and imports queues, niced by
# HEAVY_WORKER_NICE), background workers (BACKGROUND_WORKERS, default 2, on the monitors queue) and the scheduler.
# The worker and the scheduler are supervised: one that exits (e.g. the scheduler when Redis is down) is started
# again after 2 seconds, then 4, up to 8 while it keeps failing, while the web server keeps serving; so both are
# back within seconds of Redis returning. Ctrl-C (or the end of the web server) stops everything.
set -uo pipefail
PORT="${1:-5000}"
BIN=.venv/bin
pids=()
stopping=0
cleanup() {
  stopping=1
  trap - INT TERM EXIT
  # $! too: a signal that comes just after a `setsid ... &` forked, before its pid was added to pids, must still
  # stop that process (it is in a session of its own, out of reach of a signal to this script's group).
  for p in "${pids[@]}" ${!:-}; do kill -TERM -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null; done
  wait
}
# INT and TERM end the script after the cleanup: a signal that came while it was still starting things must not
# let it go on to start the web server after everything was stopped.
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap cleanup EXIT

supervise() {  # supervise NAME COMMAND...: restart the command whenever it exits
  local name="$1"; shift
  local pause=2 started
  while true; do
    started=$SECONDS
    "$@"
    code=$?
    [ "$stopping" = 1 ] && break
    if [ $((SECONDS - started)) -ge 60 ]; then pause=2; fi  # it had run a while: a fresh failure
    echo "[make run] $name exited with status $code; restarting it in $pause seconds." >&2
    sleep "$pause"
    pause=$((pause < 8 ? pause * 2 : 8))
  done
}

if [ -z "${SECRET_KEY:-}" ] || [ "${SECRET_KEY}" = "dev-insecure-change-me" ]; then
  bar='!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!'
  {
    echo "$bar"
    echo "!! SECRET_KEY is not set: the app signs sessions and CSRF tokens with the development value, which"
    echo "!! anyone can read in the source. Fine on your own machine; never serve anyone else this way."
    echo "!! Set SECRET_KEY to a long random value (the same for the web server and the workers), and"
    echo "!! APP_ENV=production in production: the app then refuses to start without one."
    echo "$bar"
  } >&2
fi

if [ -n "${REDIS_URL:-}" ]; then
  WORKERS="${RQ_WORKERS:-2}"  # RQ workers: each runs one job at a time (docs/performance.md, issue 21)
  HEAVY="${HEAVY_SLOTS:-2}"   # heavy workers (pdf, imports queues), at a lower CPU priority (docs/heavy-jobs.md)
  BACKGROUND="${BACKGROUND_WORKERS:-2}"  # background workers (monitors queue: a monitor run's chunks)
  echo "REDIS_URL is set: starting $WORKERS RQ workers, $HEAVY heavy workers, $BACKGROUND background workers and the" \
       "scheduler (restarted if they stop)."
  for i in $(seq 1 "$WORKERS"); do
    setsid bash -c "$(declare -f supervise); stopping=0; supervise worker-$i $BIN/flask jobs worker --light" & pids+=($!)
  done
  for i in $(seq 1 "$HEAVY"); do
    setsid bash -c "$(declare -f supervise); stopping=0; supervise heavy-$i $BIN/flask jobs worker --heavy" & pids+=($!)
  done
  for i in $(seq 1 "$BACKGROUND"); do
    setsid bash -c "$(declare -f supervise); stopping=0; supervise background-$i $BIN/flask jobs worker --background" &
    pids+=($!)
  done
  setsid bash -c "$(declare -f supervise); stopping=0; supervise scheduler $BIN/flask jobs scheduler" & pids+=($!)
else
  echo "No REDIS_URL: background jobs run in-process (development mode)."
fi
if [ -z "${DATABASE_URL:-}" ]; then echo "No DATABASE_URL: using SQLite at instance/screening.db."; fi
setsid $BIN/gunicorn --bind "127.0.0.1:${PORT}" --workers 2 --threads 4 --graceful-timeout 5 --access-logfile - wsgi:app &
web=$!
pids+=($web)
wait "$web"
