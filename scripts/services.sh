#!/usr/bin/env bash
# Make sure PostgreSQL and Redis answer on 127.0.0.1; start them if they do not.
# A cluster that is running but not ready yet (starting, shutting down, recovering after a crash) is waited for,
# not started a second time: pg_ctlcluster exits 2 on "already running".
set -euo pipefail

pg_ready() { pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; }
wait_for() { for _ in $(seq 1 "$2"); do "$1" && return 0; sleep 1; done; return 1; }

if ! pg_ready; then
  version="$(ls /etc/postgresql | sort -V | tail -1)"
  if pg_lsclusters --no-header 2>/dev/null | awk -v v="$version" '$1 == v && $2 == "main" {print $4}' | grep -q online; then
    echo "PostgreSQL is running but not ready; waiting"
  else
    echo "starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || echo "pg_ctlcluster exited $?; waiting for the server"
  fi
  wait_for pg_ready 90 || true
fi

redis_ready() { redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; }
if ! redis_ready; then
  echo "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || echo "redis-server exited $?; waiting for the server"
  wait_for redis_ready 30 || true
fi

pg_isready -h 127.0.0.1 -p 5432
redis-cli -h 127.0.0.1 -p 6379 ping
