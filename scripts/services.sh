#!/usr/bin/env bash
# Project-local Redis and PostgreSQL on loopback, non-default ports, data under .local/.
#
#   scripts/services.sh start   install if missing, start (or reuse) both, print the URLs
#   scripts/services.sh env     print `export REDIS_URL=… DATABASE_URL=…` for eval
#   scripts/services.sh stop    stop both
#   scripts/services.sh redis-kill | redis-start | pg-stop | pg-start
#                               fault drills: kill -9 Redis (it restarts from its AOF), stop
#                               PostgreSQL (fast shutdown), start either again
#
# When REDIS_URL or DATABASE_URL is already set, that service is used as given and not started.
# Works as root (PostgreSQL then runs as the `postgres` user) and as a normal user.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

DATA=${SECKILL_DATA_DIR:-$ROOT/.local}
REDIS_PORT=${SECKILL_REDIS_PORT:-16379}
PG_PORT=${SECKILL_PG_PORT:-15432}
LOCAL_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/"
LOCAL_DATABASE_URL="postgres://seckill:seckill@127.0.0.1:$PG_PORT/seckill"

# The newest installed PostgreSQL's bin directory; empty (and success) when there is none.
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true; }

# PostgreSQL refuses to run as root: as root, its commands run as `postgres`.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_dir() {
  local dir="$DATA/pg"
  if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$DATA" 2>/dev/null; then
    # The postgres user cannot reach the clone (e.g. under /root): keep its data beside it instead.
    dir="/var/tmp/seckill-pg-$(printf '%s' "$ROOT" | md5sum | cut -c1-12)"
  fi
  printf '%s' "$dir"
}

start_redis() {
  if [ -n "${REDIS_URL:-}" ]; then log "using REDIS_URL from the environment"; return; fi
  command -v redis-server >/dev/null || apt_install redis-server
  if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then log "redis already running on $REDIS_PORT"; return; fi
  mkdir -p "$DATA/redis"
  # AOF: the order queue survives a restart of Redis too. SECKILL_DURABILITY=fsync makes Redis
  # fsync before each reply (README, "Durability"); the default fsyncs every second.
  local fsync=everysec
  [ "${SECKILL_DURABILITY:-everysec}" = fsync ] && fsync=always
  redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --dir "$DATA/redis" \
    --appendonly yes --appendfsync "$fsync" --save "" \
    --pidfile "$DATA/redis/redis.pid" --logfile "$DATA/redis/redis.log" --maxclients 20000
  for _ in $(seq 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -p "$REDIS_PORT" ping >/dev/null || die "redis did not start; see $DATA/redis/redis.log"
  log "redis started on 127.0.0.1:$REDIS_PORT (appendfsync $fsync)"
}

start_postgres() {
  if [ -n "${DATABASE_URL:-}" ]; then log "using DATABASE_URL from the environment"; return; fi
  [ -n "$(pg_bin)" ] || apt_install postgresql
  local bin dir
  bin=$(pg_bin); dir=$(pg_dir)
  if "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; then log "postgres already running on $PG_PORT"; return; fi
  mkdir -p "$dir"
  [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$dir" && chmod 700 "$dir"
  if [ ! -f "$dir/PG_VERSION" ]; then
    local pw; pw=$(mktemp); echo postgres > "$pw"; chmod 644 "$pw"
    as_pg "$bin/initdb" -D "$dir" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      --pwfile="$pw" -E UTF8 --locale=C.UTF-8 >/dev/null
    rm -f "$pw"
  fi
  as_pg "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 30 \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $dir -c max_connections=300" start >/dev/null \
    || die "postgres did not start; see $dir/server.log"
  as_pg "$bin/psql" -q -h "$dir" -p "$PG_PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 <<'SQL' >/dev/null
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'seckill') THEN
    CREATE ROLE seckill LOGIN CREATEDB PASSWORD 'seckill';
  END IF;
END $$;
SELECT 'CREATE DATABASE seckill OWNER seckill' WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'seckill')\gexec
SQL
  log "postgres started on 127.0.0.1:$PG_PORT (data in $dir)"
}

stop_all() {
  if redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1; then redis-cli -p "$REDIS_PORT" shutdown >/dev/null 2>&1 || true; log "redis stopped"; fi
  local bin dir; bin=$(pg_bin); dir=$(pg_dir)
  if [ -n "$bin" ] && [ -f "$dir/postmaster.pid" ]; then as_pg "$bin/pg_ctl" -D "$dir" -m fast stop >/dev/null; log "postgres stopped"; fi
}

redis_kill() {
  local pid; pid=$(cat "$DATA/redis/redis.pid" 2>/dev/null || true)
  [ -n "$pid" ] || die "no Redis pid file in $DATA/redis"
  kill -9 "$pid"
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$DATA/redis/redis.pid"
  log "redis killed (pid $pid)"
}

pg_stop() {
  local bin dir; bin=$(pg_bin); dir=$(pg_dir)
  [ -n "$bin" ] || die "PostgreSQL is not installed"
  as_pg "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null
  log "postgres stopped"
}

print_env() {
  echo "export REDIS_URL=${REDIS_URL:-$LOCAL_REDIS_URL}"
  echo "export DATABASE_URL=${DATABASE_URL:-$LOCAL_DATABASE_URL}"
}

case "${1:-start}" in
  start) start_redis; start_postgres; print_env ;;
  env) print_env ;;
  stop) stop_all ;;
  redis-kill) redis_kill ;;
  redis-start) start_redis ;;
  pg-stop) pg_stop ;;
  pg-start) start_postgres ;;
  *) die "usage: $0 start|env|stop|redis-kill|redis-start|pg-stop|pg-start" ;;
esac
