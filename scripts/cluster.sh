#!/usr/bin/env bash
# Several instances on a Redis Cluster, on loopback: a 3-master Redis Cluster, PostgreSQL,
# three server instances and HAProxy in front of them on one port.
#
#   scripts/cluster.sh start [--replicas]   build, start everything, print the URL
#   scripts/cluster.sh stop                 stop what start started (instances, HAProxy, cluster)
#   scripts/cluster.sh status               what is running, HAProxy's view of the instances
#   scripts/cluster.sh redis-start [--replicas]
#                                           only the Redis Cluster (tests, benchmarks); prints
#                                           `export SECKILL_CLUSTER_URL=…`
#   scripts/cluster.sh redis-stop           only the Redis Cluster
#   scripts/cluster.sh redis-node-start PORT [DIR]
#                                           start one node of the cluster again (after a kill -9:
#                                           it rejoins, as a replica if it was failed over)
#   scripts/cluster.sh kill-instance N      kill -9 instance N (1..3), for drills
#   scripts/cluster.sh start-instance N     start instance N again
#   scripts/cluster.sh lb-check             HAProxy's per-source connection limit, tried for real
#
# --replicas adds one replica per master (six nodes) for failover drills and
# SECKILL_DURABILITY=replicated. The masters keep min-replicas-to-write at 0: with `replicated`
# no admission is answered and no order written before a replica holds it (WAIT), and a master
# refusing every write without a replica would also refuse sign-ins, locks and revocations on
# its slots (design.md decision 32). A node is failed after 2 s (cluster-node-timeout): a drill's
# failover takes about that. Ports: Redis
# 17101-17106 (cluster bus +10000), instances 3101-3103 (their /metrics on 4101-4103), HAProxy
# 3100 (stats on 3199).
# Data and logs under .local/cluster/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

DATA=${SECKILL_DATA_DIR:-$ROOT/.local}/cluster
REDIS_BASE=${SECKILL_CLUSTER_REDIS_BASE:-17100}
APP_BASE=${SECKILL_CLUSTER_APP_BASE:-3100}
LB_PORT=$APP_BASE
STATS_PORT=$((APP_BASE + 99))
LB_CONNS_PER_SOURCE=${SECKILL_LB_CONNS_PER_SOURCE:-200}
MASTERS=3

redis_ports() {
  local n=$MASTERS
  [ -f "$DATA/replicas" ] && n=$((MASTERS * 2))
  seq $((REDIS_BASE + 1)) $((REDIS_BASE + n))
}

cluster_url() {
  local urls=() p
  for p in $(seq $((REDIS_BASE + 1)) $((REDIS_BASE + MASTERS))); do urls+=("redis://127.0.0.1:$p"); done
  (IFS=,; echo "${urls[*]}")
}

# Replicas the running cluster lists (0 when none answers).
live_replicas() {
  redis-cli -p $((REDIS_BASE + 1)) cluster nodes 2>/dev/null | grep -cE ' (myself,)?slave ' || true
}

cluster_ok() {
  local p
  for p in $(redis_ports); do
    redis-cli -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok' || return 1
  done
}

redis_start() {
  command -v redis-server >/dev/null || apt_install redis-server
  local replicas=0
  [ "${1:-}" = --replicas ] && replicas=1
  if cluster_ok 2>/dev/null; then
    # A cluster on these ports, maybe started from another checkout: used as it is when it has
    # what is asked for (its replicas counted live, not from this checkout's files).
    if [ $replicas -eq 0 ] || [ "$(live_replicas)" -ge $MASTERS ]; then
      [ $replicas -eq 1 ] && { mkdir -p "$DATA"; touch "$DATA/replicas"; }
      log "redis cluster already running"; return
    fi
  fi
  redis_stop quiet
  rm -rf "$DATA/redis"; rm -f "$DATA/replicas"
  [ $replicas -eq 1 ] && { mkdir -p "$DATA"; touch "$DATA/replicas"; }
  local fsync=everysec p nodes=()
  [ "${SECKILL_DURABILITY:-everysec}" = fsync ] && fsync=always
  for p in $(redis_ports); do
    mkdir -p "$DATA/redis/$p"
    start_node "$p" "$fsync"
    nodes+=("127.0.0.1:$p")
  done
  for p in $(redis_ports); do
    for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
    redis-cli -p "$p" ping >/dev/null || die "redis $p did not start; see $DATA/redis/$p/redis.log"
  done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas "$replicas" --cluster-yes >/dev/null 2>&1 \
    || die "redis-cli --cluster create failed"
  for _ in $(seq 100); do cluster_ok && break; sleep 0.1; done
  cluster_ok || die "the redis cluster did not reach cluster_state:ok"
  log "redis cluster on $(cluster_url) ($((replicas + 1)) node(s) per slot range, appendfsync $fsync)"
}

# One node, in its own directory (its nodes.conf makes a restarted node rejoin the cluster).
start_node() {
  local p=$1 fsync=$2 dir=${3:-$DATA/redis/$1}
  redis-server --daemonize yes --bind 127.0.0.1 --port "$p" --dir "$dir" \
    --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 2000 \
    --appendonly yes --appendfsync "$fsync" --save "" --maxclients 20000 \
    --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
}

# Starts node PORT again in DIR (its own directory, as `CONFIG GET dir` named it before it died:
# the cluster may have been started from another checkout).
redis_node_start() {
  local p=$1 dir=${2:-$DATA/redis/$1} fsync=everysec
  [ -f "$dir/nodes.conf" ] || die "no cluster node's files in $dir"
  [ "${SECKILL_DURABILITY:-everysec}" = fsync ] && fsync=always
  start_node "$p" "$fsync" "$dir"
  for _ in $(seq 50); do redis-cli -p "$p" ping >/dev/null 2>&1 && return; sleep 0.1; done
  die "redis $p did not start again; see $DATA/redis/$p/redis.log"
}

redis_stop() {
  local p pid
  for p in $(seq $((REDIS_BASE + 1)) $((REDIS_BASE + MASTERS * 2))); do
    pid=$(cat "$DATA/redis/$p/redis.pid" 2>/dev/null || true)
    [ -n "$pid" ] || continue
    redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$DATA/redis/$p/redis.pid"
  done
  [ "${1:-}" = quiet ] || log "redis cluster stopped"
}

instance_port() { echo $((APP_BASE + $1)); }

start_instance() {
  local i=$1 port; port=$(instance_port "$i")
  mkdir -p "$DATA/app"
  (
    export LEPTOS_SITE_ADDR="127.0.0.1:$port" LEPTOS_SITE_ROOT="$ROOT/target/site" LEPTOS_SITE_PKG_DIR=pkg
    export REDIS_URL DATABASE_URL
    # Browsers reach the instances through HAProxy: its address is the shop's origin (and the
    # instance's own, for a look at one instance by hand).
    export SECKILL_PUBLIC_ORIGIN=${SECKILL_PUBLIC_ORIGIN:-http://127.0.0.1:$APP_BASE,http://localhost:$APP_BASE,http://127.0.0.1:$port}
    export SECKILL_DEV_LOGIN=${SECKILL_DEV_LOGIN:-true} SECKILL_DEV_PAYMENTS=${SECKILL_DEV_PAYMENTS:-true}
    # HAProxy names each client in X-Forwarded-For; the per-client limits count by it.
    export SECKILL_TRUSTED_PROXIES=${SECKILL_TRUSTED_PROXIES:-127.0.0.1}
    # Each instance's /metrics on a loopback port of its own (instance port + 1000).
    export SECKILL_METRICS_ADDR="127.0.0.1:$((port + 1000))"
    exec "$CARGO_TARGET_DIR/release/server" serve >>"$DATA/app/instance-$i.log" 2>&1
  ) &
  echo $! >"$DATA/app/instance-$i.pid"
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/api/live" >/dev/null 2>&1 && break; sleep 0.1; done
  curl -fs "http://127.0.0.1:$port/api/live" >/dev/null \
    || { tail -n 20 "$DATA/app/instance-$i.log" >&2; die "instance $i did not start on $port"; }
  log "instance $i serving on 127.0.0.1:$port (log $DATA/app/instance-$i.log)"
}

kill_instance() {
  local i=$1 pid; pid=$(cat "$DATA/app/instance-$i.pid" 2>/dev/null || true)
  [ -n "$pid" ] || die "instance $i is not running"
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$DATA/app/instance-$i.pid"
  log "instance $i killed (pid $pid)"
}

stop_instance() {
  local i=$1 pid; pid=$(cat "$DATA/app/instance-$i.pid" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$DATA/app/instance-$i.pid"
}

haproxy_config() {
  local i
  cat <<CFG
global
  maxconn 8000
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
  timeout http-keep-alive 30s
  option http-keep-alive
  # Only a request that never reached an instance (connection refused) goes to another one: a
  # POST that reached an instance is never sent twice.
  retries 2
  option redispatch
frontend shop
  bind 127.0.0.1:$LB_PORT
  # One client address holds at most $LB_CONNS_PER_SOURCE connections: one client cannot take
  # every connection the instances have (a load test from one machine raises it).
  stick-table type ip size 200k expire 60s store conn_cur
  tcp-request connection track-sc0 src
  tcp-request connection reject if { sc_conn_cur(0) gt $LB_CONNS_PER_SOURCE }
  # The instances count sign-ins and streams per client by this header (they trust only us).
  option forwardfor
  default_backend instances
backend instances
  balance roundrobin
  # Liveness, not readiness: a shared store that is down must not take every instance out.
  option httpchk GET /api/live
  http-check expect status 200
  default-server inter 1s fall 2 rise 2
CFG
  for i in 1 2 3; do echo "  server app$i 127.0.0.1:$(instance_port "$i") check"; done
  cat <<CFG
listen stats
  bind 127.0.0.1:$STATS_PORT
  stats enable
  stats uri /stats
CFG
}

start_haproxy() {
  command -v haproxy >/dev/null || apt_install haproxy
  mkdir -p "$DATA/haproxy"
  haproxy_config >"$DATA/haproxy/haproxy.cfg"
  haproxy -c -q -f "$DATA/haproxy/haproxy.cfg" || die "haproxy rejected $DATA/haproxy/haproxy.cfg"
  haproxy -D -f "$DATA/haproxy/haproxy.cfg" -p "$DATA/haproxy/haproxy.pid"
  for _ in $(seq 50); do curl -fs "http://127.0.0.1:$LB_PORT/api/live" >/dev/null 2>&1 && break; sleep 0.1; done
  log "haproxy on 127.0.0.1:$LB_PORT (stats: http://127.0.0.1:$STATS_PORT/stats)"
}

stop_haproxy() {
  local pid; pid=$(cat "$DATA/haproxy/haproxy.pid" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || true
  rm -f "$DATA/haproxy/haproxy.pid"
  log "haproxy stopped"
}

start_all() {
  "$ROOT/scripts/setup.sh" --tests
  redis_start "${1:-}"
  # PostgreSQL as for one instance (scripts/services.sh), without its single Redis.
  eval "$(REDIS_URL=unused "$ROOT/scripts/services.sh" start | grep DATABASE_URL)"
  [ -n "${DATABASE_URL:-}" ] || die "PostgreSQL did not start"
  export REDIS_URL DATABASE_URL
  REDIS_URL=$(cluster_url)
  "$ROOT/scripts/build.sh" --release
  "$CARGO_TARGET_DIR/release/server" migrate
  local i
  for i in 1 2 3; do start_instance "$i"; done
  start_haproxy
  log "the shop: http://127.0.0.1:$LB_PORT (3 instances on a 3-master Redis Cluster)"
  echo "http://127.0.0.1:$LB_PORT"
}

stop_all() {
  stop_haproxy
  local i
  for i in 1 2 3; do stop_instance "$i"; done
  redis_stop
}

status() {
  local p i
  for p in $(redis_ports); do
    printf 'redis %s: %s\n' "$p" "$(redis-cli -p "$p" cluster info 2>/dev/null | grep cluster_state | tr -d '\r' || echo down)"
  done
  for i in 1 2 3; do
    printf 'instance %s (%s): %s\n' "$i" "$(instance_port "$i")" \
      "$(curl -fs "http://127.0.0.1:$(instance_port "$i")/api/health" 2>/dev/null || echo down)"
  done
  curl -fs "http://127.0.0.1:$STATS_PORT/stats;csv" 2>/dev/null | awk -F, '$1=="instances" {print "haproxy", $2, $18, "requests:", $8}' || echo "haproxy: down"
}

# HAProxy's per-source limit, checked for real: this script's own configuration, with a limit
# of 3 on spare ports and no instance behind it; one source opens 6 connections, a moment apart:
# the first 3 stay open, the other 3 are refused. The test command runs it.
lb_check() {
  command -v haproxy >/dev/null || apt_install haproxy
  local dir port=$((APP_BASE + 60)); dir=$(mktemp -d)
  APP_BASE=$port LB_PORT=$port STATS_PORT=$((port + 1)) LB_CONNS_PER_SOURCE=3 \
    haproxy_config >"$dir/haproxy.cfg"
  haproxy -c -q -f "$dir/haproxy.cfg" || die "haproxy rejected $dir/haproxy.cfg"
  haproxy -D -f "$dir/haproxy.cfg" -p "$dir/haproxy.pid"
  local verdict=0
  python3 - "$port" <<'PY' || verdict=1
import socket, sys, time
port = int(sys.argv[1])
for _ in range(50):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        break
    except OSError:
        time.sleep(0.1)
time.sleep(0.5)  # the probe's own connection leaves the table
socks = []
for _ in range(6):
    try:
        socks.append(socket.create_connection(("127.0.0.1", port), timeout=2))
    except OSError:  # refused before the handshake was over
        socks.append(None)
    time.sleep(0.2)
time.sleep(0.3)
states = []
for s in socks:
    if s is None:
        states.append("refused")
        continue
    s.settimeout(0.3)
    try:
        states.append("closed" if s.recv(1) == b"" else "open")
    except socket.timeout:
        states.append("open")
    except OSError:
        states.append("refused")
print("haproxy per-source limit 3, six connections:", " ".join(states))
sys.exit(0 if states[:3] == ["open"] * 3 and all(s != "open" for s in states[3:]) else 1)
PY
  kill "$(cat "$dir/haproxy.pid")" 2>/dev/null || true
  rm -rf "$dir"
  [ "$verdict" = 0 ] || die "HAProxy's per-source limit did not hold"
  log "HAProxy's per-source limit holds"
}

with_cluster_env() {
  export REDIS_URL DATABASE_URL
  REDIS_URL=$(cluster_url)
  eval "$(REDIS_URL=unused "$ROOT/scripts/services.sh" env | grep DATABASE_URL)"
}

case "${1:-}" in
  start) start_all "${2:-}" ;;
  stop) stop_all ;;
  status) status ;;
  redis-start) redis_start "${2:-}"; echo "export SECKILL_CLUSTER_URL=$(cluster_url)" ;;
  redis-stop) redis_stop ;;
  redis-node-start) redis_node_start "${2:?port}" "${3:-}" ;;
  kill-instance) kill_instance "${2:?instance number}" ;;
  start-instance) with_cluster_env; start_instance "${2:?instance number}" ;;
  lb-check) lb_check ;;
  *) die "usage: $0 start [--replicas]|stop|status|redis-start [--replicas]|redis-stop|redis-node-start PORT [DIR]|kill-instance N|start-instance N|lb-check" ;;
esac
