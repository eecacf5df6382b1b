#!/usr/bin/env bash
# The browser journeys alone: release build (the test command: see build.sh --for-tests), the
# server on its own port and key prefix, then
# Playwright in Debian's Chromium. Arguments go to Playwright, e.g.
#   scripts/e2e.sh tests/countdown.spec.ts
# Expects the tools and services to be there (scripts/setup.sh, scripts/services.sh start).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
start_services

# The test command passes `built` (it built the site with --site-for-tests in the background,
# and the debug server with its tests); --for-tests builds them so; alone, the release.
build=${SECKILL_E2E_BUILD:---release}
case "$build" in
  built) [ -d "$ROOT/target/site/pkg" ] || die "SECKILL_E2E_BUILD=built, but there is no target/site/pkg: run scripts/build.sh --for-tests" ;;
  *) "$ROOT/scripts/build.sh" "$build" ;;
esac
server_dir=$([ "$build" = --release ] && echo release || echo debug)
port=${SECKILL_E2E_PORT:-3917}
export LEPTOS_SITE_ADDR="127.0.0.1:$port" LEPTOS_SITE_ROOT="$ROOT/target/site" LEPTOS_SITE_PKG_DIR=pkg
export SECKILL_DEV_LOGIN=true SECKILL_KEY_PREFIX="e2e-$port:" SECKILL_INSTANCE_ID="e2e-$port"
export SECKILL_ADMIN_PHONES=13800000000 SECKILL_BUYS_PER_SECOND=50 SECKILL_CODE_RESEND_MS=100
# The journeys read no metrics (and a shop started by scripts/run.sh may hold the default port).
export SECKILL_METRICS_ADDR=off
# Every journey signs in from loopback, several a minute.
export SECKILL_CODE_REQUESTS_PER_CLIENT=10000 SECKILL_SIGN_INS_PER_CLIENT=10000
# Payments approved at once; unpaid orders cancelled after 20 s, swept every second (the
# deadline journey waits for it; the other journeys finish well within it).
export SECKILL_DEV_PAYMENTS=true SECKILL_PAY_WITHIN_MS=20000 SECKILL_SWEEP_MS=1000
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done' EXIT
healthy() { # address, log
  for _ in $(seq 100); do curl -fs "http://$1/api/health" >/dev/null 2>&1 && return 0; sleep 0.2; done
  cat "$2"; die "the server on $1 did not become healthy"
}
log "starting the $server_dir server on $LEPTOS_SITE_ADDR for the browser tests"
"$CARGO_TARGET_DIR/$server_dir/server" serve > "$ROOT/target/e2e-server.log" 2>&1 &
pids+=($!)
healthy "$LEPTOS_SITE_ADDR" "$ROOT/target/e2e-server.log"

# A second shop as one is deployed: dev login and dev payments off, codes through the SMS
# relay's webhook (end2end/sms-relay.mjs checks the signature and hands the code to the
# journey, as the shopper's phone would), payments through Stripe Checkout, here the Stripe
# stand-in (fakes/: its API, its hosted page, its signed webhooks to the shop).
# Its own database and key prefix: a deployment of its own, whose sweeper leaves the first's
# orders alone.
relay_port=$((port + 2)) prod_addr="127.0.0.1:$((port + 1))" secret="e2e-relay-secret-$port"
prod_db="seckill_e2e_$((port + 1))"
psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS $prod_db" -c "CREATE DATABASE $prod_db" >/dev/null
# And its Redis keys: a new database numbers vouchers and users from 1 again, so a last run's
# keys under the same prefix would give its sales' buyers and stock to this run's.
redis-cli -u "$REDIS_URL" --scan --pattern "e2e-$((port + 1)):*" | xargs -r -n 500 redis-cli -u "$REDIS_URL" DEL >/dev/null
node "$ROOT/end2end/sms-relay.mjs" "$relay_port" "$secret" > "$ROOT/target/e2e-relay.log" 2>&1 &
pids+=($!)
stripe_port=$((port + 3)) whsec="whsec_e2e_$port"
"$CARGO_TARGET_DIR/$server_dir/fake-stripe" "$stripe_port" "http://$prod_addr/api/payments/stripe/webhook" "$whsec" \
  > "$ROOT/target/e2e-stripe.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$stripe_port/v1/refunds")" != 000 ] && break
  sleep 0.1
done
drand_port=$((port + 4))
"$CARGO_TARGET_DIR/$server_dir/fake-drand" "$drand_port" > "$ROOT/target/e2e-drand.env" 2> "$ROOT/target/e2e-drand.log" &
pids+=($!)
for _ in $(seq 100); do
  [ "$(grep -c '^SECKILL_DRAND_' "$ROOT/target/e2e-drand.env" 2>/dev/null)" = 3 ] && break
  sleep 0.1
done
tsa_port=$((port + 5))
"$CARGO_TARGET_DIR/$server_dir/fake-tsa" "$tsa_port" > "$ROOT/target/e2e-tsa.env" 2> "$ROOT/target/e2e-tsa.log" &
pids+=($!)
for _ in $(seq 100); do
  [ "$(grep -c '^SECKILL_DRAW_TSA_URL=' "$ROOT/target/e2e-tsa.env" 2>/dev/null)" = 1 ] && break
  sleep 0.1
done
log "starting a production-mode server on $prod_addr (codes through the webhook, payments through the Stripe stand-in on $stripe_port, draws on the drand stand-in on $drand_port, witnessed by the timestamping stand-in on $tsa_port)"
# shellcheck disable=SC2046 # the stand-in prints three VAR=value lines of hex and a URL
env DATABASE_URL="${DATABASE_URL%/*}/$prod_db" LEPTOS_SITE_ADDR=$prod_addr SECKILL_KEY_PREFIX="e2e-$((port + 1)):" SECKILL_INSTANCE_ID="e2e-$((port + 1))" \
  SECKILL_DEV_LOGIN=false SECKILL_DEV_PAYMENTS=false \
  SECKILL_DRAW_SIGNING_KEY="$(printf 'e2e draw key %s' "$port" | sha256sum | cut -c1-64)" \
  $(cat "$ROOT/target/e2e-drand.env") $(grep '^SECKILL_DRAW_TSA_URL=' "$ROOT/target/e2e-tsa.env") \
  SECKILL_SMS_WEBHOOK_URL="http://127.0.0.1:$relay_port/sms" SECKILL_SMS_WEBHOOK_SECRET=$secret \
  SECKILL_STRIPE_SECRET_KEY=sk_test_e2e SECKILL_STRIPE_WEBHOOK_SECRET=$whsec \
  SECKILL_STRIPE_API_BASE="http://127.0.0.1:$stripe_port" SECKILL_PUBLIC_ORIGIN="http://$prod_addr" \
  "$CARGO_TARGET_DIR/$server_dir/server" serve > "$ROOT/target/e2e-prod-server.log" 2>&1 &
pids+=($!)
healthy "$prod_addr" "$ROOT/target/e2e-prod-server.log"

log "Playwright (Debian chromium); screenshots in end2end/test-results/"
(cd "$ROOT/end2end" && BASE_URL="http://$LEPTOS_SITE_ADDR" PROD_BASE_URL="http://$prod_addr" \
  RELAY_URL="http://127.0.0.1:$relay_port" STRIPE_URL="http://127.0.0.1:$stripe_port" npx playwright test "$@")
