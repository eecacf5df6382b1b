#!/usr/bin/env bash
# The test command: every check, against real services and a real browser.
#   1. tools and local services;  2. cargo fmt --check;  3. clippy -D warnings (ssr and hydrate);
#   4. cargo test (unit + integration, real Redis and PostgreSQL);
#   5. release build, server on a free port, Playwright journeys in Debian's Chromium;
#   6. the benchmarks' smoke run (`bench all --quick`: a small rush over HTTP that still checks
#      the invariants, the core and the lock); full benchmarks are scripts/bench.sh.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

"$ROOT/scripts/setup.sh"
eval "$("$ROOT/scripts/services.sh" start)"

log "cargo fmt --check"
cargo fmt --all -- --check
log "clippy (ssr: core, app, server)"
cargo clippy --workspace --exclude frontend --all-targets -- -D warnings
log "clippy (hydrate: app + frontend for wasm32)"
cargo clippy -p frontend --target wasm32-unknown-unknown -- -D warnings

log "cargo test (real Redis at $REDIS_URL, real PostgreSQL)"
cargo test --workspace --exclude frontend

"$ROOT/scripts/build.sh" --release
port=${SECKILL_E2E_PORT:-3917}
export LEPTOS_SITE_ADDR="127.0.0.1:$port" LEPTOS_SITE_ROOT="$ROOT/target/site" LEPTOS_SITE_PKG_DIR=pkg
export SECKILL_DEV_LOGIN=true SECKILL_KEY_PREFIX="e2e-$port:" SECKILL_INSTANCE_ID="e2e-$port"
export SECKILL_ADMIN_PHONES=13800000000 SECKILL_BUYS_PER_SECOND=50 SECKILL_CODE_RESEND_MS=100
log "starting the release server on $LEPTOS_SITE_ADDR for the browser tests"
"$CARGO_TARGET_DIR/release/server" serve > "$ROOT/target/e2e-server.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -fs "http://$LEPTOS_SITE_ADDR/api/health" >/dev/null 2>&1 && break; sleep 0.2; done
curl -fs "http://$LEPTOS_SITE_ADDR/api/health" >/dev/null || { cat "$ROOT/target/e2e-server.log"; die "server did not become healthy"; }
log "Playwright (Debian chromium)"
(cd "$ROOT/end2end" && BASE_URL="http://$LEPTOS_SITE_ADDR" npx playwright test)

log "benchmarks, smoke run (bench all --quick)"
cargo build --release -p bench
"$CARGO_TARGET_DIR/release/bench" all --quick
log "all checks passed"
