#!/usr/bin/env bash
# The benchmark command (kept apart from the tests):
#   scripts/bench.sh rush [--quick] [--shoppers N] [--stock N] [--conns N] [--profile]
#   scripts/bench.sh core [--quick]     scripts/bench.sh lock [--quick]     scripts/bench.sh all
#   scripts/bench.sh scaleout [--quick] 3 instances behind HAProxy on a local 3-master Redis
#                                       Cluster (started here) beside one instance on one node
#   scripts/bench.sh failover [--quick] kill -9 of a Redis master mid-rush, on a local cluster with
#                                       a replica per master (started here): replicated, everysec
#   scripts/bench.sh watchers [--quick] 10,000 open sale pages: push stream against polling
#   scripts/bench.sh pages [--quick]    pages, the JSON API and static files over HTTP
# Installs what is missing, starts the local services, builds the release server and the bench,
# then runs it. Full runs append to BENCHMARKS.md; every run writes target/bench/<name>.json.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

"$ROOT/scripts/setup.sh"
start_services
case "${1:-}" in
  rush | all | drill | watchers | pages) "$ROOT/scripts/build.sh" --release ;;
  scaleout)
    "$ROOT/scripts/build.sh" --release
    eval "$("$ROOT/scripts/cluster.sh" redis-start | grep '^export SECKILL_CLUSTER_URL=')"
    ;;
  failover)
    "$ROOT/scripts/build.sh" --release
    eval "$("$ROOT/scripts/cluster.sh" redis-start --replicas | grep '^export SECKILL_CLUSTER_URL=')"
    ;;
esac
log "building the bench (release)"
cargo build --release "${NATIVE[@]}"
export LEPTOS_SITE_ROOT="$ROOT/target/site" LEPTOS_SITE_PKG_DIR=pkg
exec "$CARGO_TARGET_DIR/release/bench" "$@"
