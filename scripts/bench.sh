#!/usr/bin/env bash
# The benchmark command (kept apart from the tests):
#   scripts/bench.sh rush [--quick] [--shoppers N] [--stock N] [--conns N] [--profile] [--rounds N]
#                                       (--rounds: sales in a row on one server, each rush then its
#                                       GET /api/live, the ratio read as their median; 5 unless quick)
#   scripts/bench.sh core [--quick]     scripts/bench.sh lock [--quick]     scripts/bench.sh all
#   scripts/bench.sh scaleout [--quick] 3 instances behind HAProxy on a local 3-master Redis
#                                       Cluster (started here) beside one instance on one node
#   scripts/bench.sh failover [--quick] kill -9 of a Redis master mid-rush, on a local cluster with
#                                       a replica per master (started here): replicated, everysec
#   scripts/bench.sh watchers [--quick] 10,000 open sale pages: push stream against polling
#   scripts/bench.sh pages [--quick]    pages, the JSON API and static files over HTTP
#   scripts/bench.sh draw [--quick]     the same crowd (a tenth bots at the opening millisecond)
#                                       meets a first-come opening, then a draw
#   scripts/bench.sh payments [--quick] a rush's orders paid through a Stripe stand-in that fails
#                                       calls, loses, repeats and delays webhooks, and goes down
#                                       as deadlines pass: I1-I4 and M1-M3, payment to "paid"
#   scripts/bench.sh phone [--quick]    a cold visit of the home page and a sale page in Chromium
#                                       on an emulated phone network (150 ms RTT, 1.6 Mbit/s,
#                                       CPU 4x slower): time until interactive, bytes moved
# Installs what is missing, starts the local services, builds the release server and the bench,
# then runs it. Full runs append to BENCHMARKS.md; every run writes target/bench/<name>.json.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

"$ROOT/scripts/setup.sh" --tests
start_services
case "${1:-}" in
  rush | all | drill | watchers | pages | sales | reminders | draw | payments) "$ROOT/scripts/build.sh" --release ;;
  scaleout)
    "$ROOT/scripts/build.sh" --release
    eval "$("$ROOT/scripts/cluster.sh" redis-start | grep '^export SECKILL_CLUSTER_URL=')"
    ;;
  failover)
    "$ROOT/scripts/build.sh" --release
    eval "$("$ROOT/scripts/cluster.sh" redis-start --replicas | grep '^export SECKILL_CLUSTER_URL=')"
    ;;
esac
if [ "${1:-}" = phone ]; then
  "$ROOT/scripts/build.sh" --release
  runs=5
  [ "${2:-}" = --quick ] && runs=1
  port=3931 prefix="phone-$(date +%s):"
  log "release server on 127.0.0.1:$port; $runs cold visits per page on an emulated phone"
  LEPTOS_SITE_ADDR="127.0.0.1:$port" LEPTOS_SITE_ROOT="$ROOT/target/site" LEPTOS_SITE_PKG_DIR=pkg \
    SECKILL_DEV_LOGIN=true SECKILL_DEV_PAYMENTS=true SECKILL_KEY_PREFIX="$prefix" SECKILL_INSTANCE_ID="$prefix" \
    SECKILL_METRICS_ADDR=off "$CARGO_TARGET_DIR/release/server" serve > "$ROOT/target/bench-phone-server.log" 2>&1 &
  server=$!
  trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/api/health" >/dev/null 2>&1 && break; sleep 0.2; done
  mkdir -p "$ROOT/target/bench"
  (cd "$ROOT/end2end" && BASE_URL="http://127.0.0.1:$port" PHONE_RUNS=$runs PHONE_OUT="$ROOT/target/bench/phone.json" \
    npx playwright test -c playwright.bench.config.ts)
  if [ "${2:-}" != --quick ]; then
    node -e '
      const r = require(process.argv[1]);
      const kb = (b) => (b / 1000).toFixed(0) + " KB";
      const row = (n, x) => `| ${n} | ${x.interactive_ms_median} ms (${x.interactive_ms_min}–${x.interactive_ms_max}) | ${x.load_ms_median} ms | ${kb(x.bytes_median)} | ${kb(x.static_bytes_median)} | ${x.html_end_ms_median} / ${x.wasm_end_ms_median} / ${x.hydrated_ms_median} ms |`;
      console.log(`\n### Phone: a cold visit on an emulated phone network (${new Date().toISOString().slice(0, 10)}, ${process.argv[2]})\n`);
      console.log("`scripts/bench.sh phone`: Chromium with 150 ms RTT, 1.6 Mbit/s down, 750 kbit/s up, CPU 4x slower, cache off, " + r.sale.runs + " cold visits per page (median, min–max).\n");
      console.log("| page | interactive (hydrated) | load event | bytes moved | of which static files | in the page: HTML / wasm last byte / hydrated |");
      console.log("| --- | --- | --- | --- | --- | --- |");
      console.log(row("`/`", r.home));
      console.log(row("a sale page", r.sale));
    ' "$ROOT/target/bench/phone.json" "$(git -C "$ROOT" rev-parse --short HEAD)" >> "$ROOT/BENCHMARKS.md"
    log "appended to BENCHMARKS.md"
  fi
  exit 0
fi
log "building the bench (release)"
cargo build --release "${NATIVE[@]}"
export LEPTOS_SITE_ROOT="$ROOT/target/site" LEPTOS_SITE_PKG_DIR=pkg
exec "$CARGO_TARGET_DIR/release/bench" "$@"
