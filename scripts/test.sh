#!/usr/bin/env bash
# The test command: every check, against real services and a real browser.
#   0. the set-up's probes in a dry run against an empty tools directory (a broken probe fails
#      here, not on a new machine);
#   1. tools (setup.sh --tests) and local services;  2. cargo fmt --check;  3. clippy -D warnings (ssr and hydrate);
#   4. cargo test (unit + integration, real Redis and PostgreSQL), then the integration tests
#      of the sale flow, order IDs, lock, sweeper, console and HTTP (several instances included)
#      again on a local 3-master Redis Cluster (scripts/cluster.sh redis-start); HAProxy's
#      per-source connection limit tried for real (scripts/cluster.sh lb-check);
#   5. the REST API against its OpenAPI document (schemathesis, scripts/conformance.sh: admin,
#      shopper and visitor, seed 1, 10 examples an operation, on a database of its own), the
#      browser bundles built as released beside it; then the debug server on a free port and
#      the Playwright journeys in Debian's Chromium;
#   6. the benchmarks' smoke run (`bench all --quick`: a small rush over HTTP that still checks
#      the invariants, the core, the lock, the pages (no request may fail) and 300 open sale
#      pages (every stream opens, and the server forgets each once it closes)); full benchmarks
#      are scripts/bench.sh.
#   7. the scale-out smoke run (`bench scaleout --quick`): 3 instances behind HAProxy on the
#      cluster beside one instance on one node, and a kill -9 of one instance mid-rush; I1–I4;
#      the draw's smoke run (bench draw --quick: bots win nothing more in a draw than their share);
#      the payments' smoke run (bench payments --quick: a misbehaving Stripe, I1-I4 and M1-M3);
#      the reminders' smoke run (bench reminders --quick: 2,000 reminders, a relay failing 1 in
#      50, two instances, the busier one killed with kill -9 mid-send: every shopper once);
#   8. the fault drills (`bench drill --quick`): the server killed with kill -9 three times,
#      PostgreSQL stopped for 30 s, Redis killed and restarted from its AOF, each during a rush;
#      every returned order final within 10 s of recovery, I1–I4 checked;
#   9. the failover drill (`bench failover --quick`): the cluster with a replica per master,
#      3 instances behind HAProxy, SECKILL_DURABILITY=replicated, kill -9 of the master holding
#      a sale mid-rush, its replica promoted, the old master started again; I1–I4 per sale.
# It ends with a table of its phases and their wall times.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
bundles_pid=""
trap 'status=$?; [ -z "$bundles_pid" ] || kill "$bundles_pid" 2>/dev/null || true; phases_report $status' EXIT

phase "set-up's probes, dry run against an empty tools directory"
# Every "is it installed?" probe of the set-up runs where nothing is installed yet, as on a new
# machine: a probe that errs (a file read that may not exist, under pipefail) fails here.
probe_dir=$(mktemp -d)
SECKILL_TOOLS_DIR=$probe_dir "$ROOT/scripts/setup.sh" --tests --dry-run
rm -rf "$probe_dir"

phase "set-up (tools) and local services"
"$ROOT/scripts/setup.sh" --tests
prune_target
start_services

phase "cargo fmt --check"
cargo fmt --all -- --check
phase "clippy -D warnings (ssr: core, app, server)"
cargo clippy "${NATIVE[@]}" --all-targets -- -D warnings
phase "clippy -D warnings (hydrate: app + frontend for wasm32)"
cargo clippy -p frontend --target wasm32-unknown-unknown -- -D warnings

phase "cargo test (real Redis, real PostgreSQL)"
log "Redis at $REDIS_URL"
cargo test "${NATIVE[@]}"

phase "cargo test again on a 3-master Redis Cluster with replicas"
eval "$("$ROOT/scripts/cluster.sh" redis-start --replicas | grep '^export SECKILL_CLUSTER_URL=')"
log "the cluster: $SECKILL_CLUSTER_URL"
# The same selection as above, so nothing is compiled again: the core's sale flow, order IDs,
# lifecycle, lock, sweeper, console, catalog-cache (its pub/sub on a cluster) and draw modules and
# the server's API, lifecycle, payments, draw, scale-out, hostile-input and abuse (sign-in keys and per-client
# counters in their slots) modules. RedLock starts its own five independent masters: nothing to
# learn from a second pass.
REDIS_URL=$SECKILL_CLUSTER_URL cargo test "${NATIVE[@]}" --test it -- --skip redlock \
  sale_flow:: order_ids:: lifecycle:: lock:: sweeper:: console:: api:: scaleout:: hostile:: abuse:: \
  catalog_cache:: payments:: draw:: editing:: finding::
phase "HAProxy's per-source connection limit (cluster.sh lb-check)"
"$ROOT/scripts/cluster.sh" lb-check

# The journeys and the smoke runs use the debug server and bench of the build above, and the
# browser bundle as released (build.sh --for-tests): the native tree is compiled once. The
# benchmarks' figures come from scripts/bench.sh, on release builds.
# The conformance run waits on the server most of its time (the sale stream's held answers):
# the bundles build beside it, into target/site, which its server does not read.
phase "REST API conformance (schemathesis), the bundles built beside it"
mkdir -p "$ROOT/target"
bundles_log="$ROOT/target/bundles-build.log"
"$ROOT/scripts/build.sh" --for-tests > "$bundles_log" 2>&1 &
bundles_pid=$!
"$ROOT/scripts/conformance.sh"
bundles_status=0
wait "$bundles_pid" || bundles_status=$?
bundles_pid=""
if [ "$bundles_status" -ne 0 ]; then
  tail -n 60 "$bundles_log" >&2
  die "the browser bundles did not build (exit status $bundles_status; the whole log: $bundles_log)"
fi
grep -E "precompressed|site in" "$bundles_log" >&2 || true
phase "the Playwright journeys (Chromium)"
SECKILL_E2E_BUILD=built "$ROOT/scripts/e2e.sh"

export SECKILL_SERVER_BIN="$CARGO_TARGET_DIR/debug/server"
phase "benchmarks' smoke run (bench all --quick)"
"$CARGO_TARGET_DIR/debug/bench" all --quick
phase "draw smoke run (bench draw --quick)"
"$CARGO_TARGET_DIR/debug/bench" draw --quick
phase "payments smoke run (bench payments --quick)"
"$CARGO_TARGET_DIR/debug/bench" payments --quick
phase "reminders smoke run (bench reminders --quick: two instances, one killed with kill -9)"
"$CARGO_TARGET_DIR/debug/bench" reminders --quick
phase "scale-out smoke run (bench scaleout --quick)"
"$CARGO_TARGET_DIR/debug/bench" scaleout --quick
phase "fault drills (bench drill --quick)"
"$CARGO_TARGET_DIR/debug/bench" drill --quick
phase "failover drill (bench failover --quick)"
"$CARGO_TARGET_DIR/debug/bench" failover --quick
phase_end
log "all checks passed"
