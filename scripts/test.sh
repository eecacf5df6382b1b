#!/usr/bin/env bash
# The test command: every check, against real services and a real browser.
#   1. tools and local services;  2. cargo fmt --check;  3. clippy -D warnings (ssr and hydrate);
#   4. cargo test (unit + integration, real Redis and PostgreSQL), then the integration tests
#      of the sale flow, order IDs, lock, sweeper, console and HTTP (several instances included)
#      again on a local 3-master Redis Cluster (scripts/cluster.sh redis-start); HAProxy's
#      per-source connection limit tried for real (scripts/cluster.sh lb-check);
#   5. the browser bundle as released, the debug server on a free port, Playwright journeys
#      in Debian's Chromium; then the REST API against its OpenAPI document (schemathesis,
#      scripts/conformance.sh: admin, shopper and visitor, seed 1, 10 examples an operation);
#   6. the benchmarks' smoke run (`bench all --quick`: a small rush over HTTP that still checks
#      the invariants, the core, the lock, the pages (no request may fail) and 300 open sale
#      pages (every stream opens, and the server forgets each once it closes)); full benchmarks
#      are scripts/bench.sh.
#   7. the scale-out smoke run (`bench scaleout --quick`): 3 instances behind HAProxy on the
#      cluster beside one instance on one node, and a kill -9 of one instance mid-rush; I1–I4;
#      the draw's smoke run (bench draw --quick: bots win nothing more in a draw than their share);
#      the payments' smoke run (bench payments --quick: a misbehaving Stripe, I1-I4 and M1-M3);
#   8. the fault drills (`bench drill --quick`): the server killed with kill -9 three times,
#      PostgreSQL stopped for 30 s, Redis killed and restarted from its AOF, each during a rush;
#      every returned order final within 10 s of recovery, I1–I4 checked;
#   9. the failover drill (`bench failover --quick`): the cluster with a replica per master,
#      3 instances behind HAProxy, SECKILL_DURABILITY=replicated, kill -9 of the master holding
#      a sale mid-rush, its replica promoted, the old master started again; I1–I4 per sale.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

"$ROOT/scripts/setup.sh"
prune_target
start_services

log "cargo fmt --check"
cargo fmt --all -- --check
log "clippy (ssr: core, app, server)"
cargo clippy "${NATIVE[@]}" --all-targets -- -D warnings
log "clippy (hydrate: app + frontend for wasm32)"
cargo clippy -p frontend --target wasm32-unknown-unknown -- -D warnings

log "cargo test (real Redis at $REDIS_URL, real PostgreSQL)"
cargo test "${NATIVE[@]}"

eval "$("$ROOT/scripts/cluster.sh" redis-start --replicas | grep '^export SECKILL_CLUSTER_URL=')"
log "integration tests again on a 3-master Redis Cluster with replicas ($SECKILL_CLUSTER_URL)"
# The same selection as above, so nothing is compiled again: the core's sale flow, order IDs,
# lifecycle, lock, sweeper, console, catalog-cache (its pub/sub on a cluster) and draw modules and
# the server's API, lifecycle, payments, draw, scale-out, hostile-input and abuse (sign-in keys and per-client
# counters in their slots) modules. RedLock starts its own five independent masters: nothing to
# learn from a second pass.
REDIS_URL=$SECKILL_CLUSTER_URL cargo test "${NATIVE[@]}" --test it -- --skip redlock \
  sale_flow:: order_ids:: lifecycle:: lock:: sweeper:: console:: api:: scaleout:: hostile:: abuse:: \
  catalog_cache:: payments:: draw::
log "HAProxy's per-source connection limit (scripts/cluster.sh lb-check)"
"$ROOT/scripts/cluster.sh" lb-check

# The journeys and the smoke runs use the debug server and bench of the build above, and the
# browser bundle as released (build.sh --for-tests): the native tree is compiled once. The
# benchmarks' figures come from scripts/bench.sh, on release builds.
SECKILL_E2E_BUILD=--for-tests "$ROOT/scripts/e2e.sh"
log "REST API conformance (schemathesis against /api/openapi.json, fixed seed)"
"$ROOT/scripts/conformance.sh"

export SECKILL_SERVER_BIN="$CARGO_TARGET_DIR/debug/server"
log "benchmarks, smoke run (bench all --quick, debug build)"
"$CARGO_TARGET_DIR/debug/bench" all --quick
log "draw smoke run (bench draw --quick): first come against a draw, bots at the opening"
"$CARGO_TARGET_DIR/debug/bench" draw --quick
log "payments smoke run (bench payments --quick): Stripe failing, losing and repeating webhooks, down at the deadlines"
"$CARGO_TARGET_DIR/debug/bench" payments --quick
log "scale-out smoke run (bench scaleout --quick): 3 instances, HAProxy, the cluster, a kill -9"
"$CARGO_TARGET_DIR/debug/bench" scaleout --quick
log "fault drills (bench drill --quick): kill -9 of the server, PostgreSQL down 30 s, Redis killed"
"$CARGO_TARGET_DIR/debug/bench" drill --quick
log "failover drill (bench failover --quick): kill -9 of a Redis master mid-rush, SECKILL_DURABILITY=replicated"
"$CARGO_TARGET_DIR/debug/bench" failover --quick
log "all checks passed"
