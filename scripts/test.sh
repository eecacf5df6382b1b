#!/usr/bin/env bash
# The test command: every check, against real services and a real browser.
#   0. the set-up's probes in a dry run against an empty tools directory (a broken probe fails
#      here, not on a new machine);
#   1. tools (setup.sh --tests) and local services; from here on, the browser bundles build as
#      released (build.sh --site-for-tests) in the background at the lowest CPU priority, taking
#      the CPU the phases below leave idle (waiting on Redis, PostgreSQL, a browser);
#   2. cargo fmt --check;
#   3. the native tree (core, app, server, bench) built once for its tests with clippy's lints
#      on our crates, -D warnings (lint_while_building in lib.sh: no separate `cargo clippy`
#      pass over the same tree);
#   4. cargo test (unit + integration, real Redis and PostgreSQL), then the integration tests
#      of the sale flow, order IDs, lock, sweeper, console and HTTP (several instances included)
#      again on a local 3-master Redis Cluster (scripts/cluster.sh redis-start); HAProxy's
#      per-source connection limit tried for real (scripts/cluster.sh lb-check);
#   5. the REST API against its OpenAPI document (schemathesis, scripts/conformance.sh: admin,
#      shopper and visitor, seed 1, 10 examples an operation, on a database of its own);
#   6. while the bundles finish, the smoke runs that load none: the scale-out smoke run
#      (`bench scaleout --quick`: 3 instances behind HAProxy on the cluster beside one instance
#      on one node, and a kill -9 of one instance mid-rush; I1–I4), the draw's (bench draw
#      --quick: bots win nothing more in a draw than their share), the payments' (bench payments
#      --quick: a misbehaving Stripe, I1-I4 and M1-M3), the reminders' (bench reminders --quick:
#      2,000 reminders, a relay failing 1 in 50, two instances, the busier one killed with kill -9
#      mid-send: every shopper once); the fault drills (`bench drill --quick`): the server killed
#      with kill -9 three times, PostgreSQL stopped for 30 s, Redis killed and restarted from its
#      AOF, each during a rush, every returned order final within 10 s of recovery, I1–I4
#      checked; the failover drill (`bench failover --quick`): the cluster with a replica per
#      master, 3 instances behind HAProxy, SECKILL_DURABILITY=replicated, kill -9 of the master
#      holding a sale mid-rush, its replica promoted, the old master started again; I1–I4 per sale;
#   7. the bundles built: the debug server on a free port and the Playwright journeys in Debian's
#      Chromium, clippy's browser build (hydrate, wasm32) checked in the background;
#   8. the benchmarks' smoke run (`bench all --quick`: a small rush over HTTP that still checks
#      the invariants, the core, the lock, the pages (no request may fail) and 300 open sale
#      pages (every stream opens, and the server forgets each once it closes)); full benchmarks
#      are scripts/bench.sh;
#   9. the wait for clippy's browser build, if it is still going.
# It ends with a table of its phases, their wall times and how busy the CPUs were meanwhile.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
background=()
# Each background job leads a session and process group of its own (setsid): stopping it stops
# its cargo too.
trap 'status=$?; for p in "${background[@]}"; do kill -- "-$p" 2>/dev/null || true; done; phases_report $status' EXIT

# Starts a job in the background at the lowest CPU priority (nice 19: it gets what the
# foreground leaves idle, so the foreground's timings are not its), its output in a log; its
# PID in $last_background. A new session is a new scheduling group where the kernel groups by
# session (autogroup, on by default in Debian's kernels), and groups share the CPUs equally
# whatever their processes' nice: the group is made nice 19 too (measured: without it, the
# bundles took half the CPUs from the native build of a new machine: 11 min 12 s, and 7 min 23 s
# with it).
in_background() { # log, command...
  local out=$1
  shift
  setsid bash -c '[ ! -w /proc/self/autogroup ] || echo 19 > /proc/self/autogroup; exec nice -n 19 "$@"' \
    background "$@" > "$out" 2>&1 < /dev/null &
  last_background=$!
  background+=("$last_background")
}
# Waits for one, and fails with its log's end when it failed.
wait_for() { # pid, log, what it is
  local status=0
  wait "$1" || status=$?
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$2" >&2
    die "$3 failed (exit status $status; the whole log: $2)"
  fi
}

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

# The browser bundles as released, for the journeys: five wasm builds at opt-level z with LTO,
# mostly on one core each, wasm-opt and terser; about 10 minutes of a new machine's run, which
# had the phases wait for them. Here they take the CPU the phases leave idle, into target/site
# (the conformance run's server reads an empty site of its own).
mkdir -p "$ROOT/target"
bundles_log="$ROOT/target/bundles-build.log" bundles_start=$(date +%s)
in_background "$bundles_log" "$ROOT/scripts/build.sh" --site-for-tests
bundles_pid=$last_background

phase "cargo fmt --check"
cargo fmt --all -- --check
phase "the native tree built for its tests, clippy -D warnings on our crates (ssr)"
lint_while_building
cargo build "${NATIVE[@]}" --lib --bins --tests

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

phase "REST API conformance (schemathesis)"
"$ROOT/scripts/conformance.sh"

# The smoke runs and the drills use the debug server and bench of the build above (the
# benchmarks' figures come from scripts/bench.sh, on release builds). These need no browser
# bundle, so they run while the bundles finish: their servers read whatever site is in place
# (build.sh puts a new one in place whole). The smoke run that loads the bundles
# (`bench all`, its pages) and the journeys come after.
export SECKILL_SERVER_BIN="$CARGO_TARGET_DIR/debug/server"
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

phase "the browser bundles (building since the set-up): what is left of them"
wait_for "$bundles_pid" "$bundles_log" "the browser bundles' build"
grep -E "precompressed|site in" "$bundles_log" >&2 || true
log "the browser bundles took $(($(date +%s) - bundles_start)) s from the set-up's end"
# Clippy's browser build (app and frontend for wasm32, the hydrate features) beside the journeys
# and the last smoke run, at the lowest priority: a check of its own, in check mode. Not before:
# its host half shares target/debug's lock with the native builds and tests above.
hydrate_log="$ROOT/target/clippy-hydrate.log"
in_background "$hydrate_log" env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS \
  cargo clippy -p frontend --target wasm32-unknown-unknown -- -D warnings
hydrate_pid=$last_background

phase "the Playwright journeys (Chromium)"
SECKILL_E2E_BUILD=built "$ROOT/scripts/e2e.sh"
phase "benchmarks' smoke run (bench all --quick)"
"$CARGO_TARGET_DIR/debug/bench" all --quick
phase "clippy -D warnings (hydrate: app + frontend for wasm32; since the journeys): what is left"
wait_for "$hydrate_pid" "$hydrate_log" "clippy's browser build (hydrate)"
grep -E "^(warning|error)" "$hydrate_log" >&2 || true
phase_end
log "all checks passed"
