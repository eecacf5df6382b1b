#!/usr/bin/env bash
# The REST API against its own OpenAPI document (design.md decision 45): schemathesis, a
# property-based client no one here wrote, reads /api/openapi.json from the debug server and
# sends every operation generated requests, signed in as an admin, as a shopper and as nobody
# (the sign-outs only then: they end the session the other passes use). It fails on a 5xx, a
# status code or content type the document does not declare, a body or header that breaks its
# schema. A fixed seed and size in the test command; SEED=… EXAMPLES=… for a wider run, and
# SECKILL_CONFORMANCE_BASE=http://… to point it at a running shop (the release server).
# Expects the tools, the services and the debug server (scripts/setup.sh, services.sh, cargo test).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
start_services

seed=${SEED:-1}
examples=${EXAMPLES:-10}
st="$TOOLS_DIR/schemathesis/bin/schemathesis"
[ -x "$st" ] || die "schemathesis is missing: run scripts/setup.sh"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; [ -z "${site:-}" ] || rm -rf "$site"' EXIT

base=${SECKILL_CONFORMANCE_BASE:-}
if [ -z "$base" ]; then
  port=${SECKILL_CONFORMANCE_PORT:-3930}
  base="http://127.0.0.1:$port"
  # The API needs no static files: an empty site, so the test command can build the browser
  # bundles into target/site while this runs (scripts/test.sh).
  site=$(mktemp -d)
  export LEPTOS_SITE_ADDR="127.0.0.1:$port" LEPTOS_SITE_ROOT="$site" LEPTOS_SITE_PKG_DIR=pkg
  # A database and key prefix of its own, new each run: the vouchers and orders it makes up are
  # nobody else's (the journeys' shop lists its database's sales).
  db="seckill_api_$port"
  psql "$DATABASE_URL" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  export DATABASE_URL="${DATABASE_URL%/*}/$db"
  redis-cli -u "$REDIS_URL" --scan --pattern "api-$port:*" | xargs -r -n 500 redis-cli -u "$REDIS_URL" DEL >/dev/null
  export SECKILL_DEV_LOGIN=true SECKILL_DEV_PAYMENTS=true SECKILL_KEY_PREFIX="api-$port:"
  export SECKILL_INSTANCE_ID="api-$port" SECKILL_ADMIN_PHONES=13800000000 SECKILL_METRICS_ADDR=off
  # Every pass signs in from loopback; the limits have their own tests.
  export SECKILL_CODE_REQUESTS_PER_CLIENT=100000 SECKILL_SIGN_INS_PER_CLIENT=100000
  log "starting the debug server on $LEPTOS_SITE_ADDR for the API conformance run"
  "$CARGO_TARGET_DIR/debug/server" serve > "$ROOT/target/conformance-server.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do curl -fs "$base/api/live" >/dev/null 2>&1 && break; sleep 0.2; done
  curl -fs "$base/api/live" >/dev/null || { cat "$ROOT/target/conformance-server.log"; die "the server did not start"; }
fi

# A session cookie for `phone` (dev login answers the code itself).
session() {
  local code
  code=$(curl -fs -X POST "$base/api/login/code" -H 'content-type: application/json' \
    -H "origin: $base" -d "{\"phone\":\"$1\"}" | sed -n 's/.*"code":"\([0-9]*\)".*/\1/p')
  [ -n "$code" ] || die "no dev code for $1 (is dev login on?)"
  curl -fs -D - -o /dev/null -X POST "$base/api/login" -H 'content-type: application/json' \
    -H "origin: $base" -d "{\"phone\":\"$1\",\"code\":\"$code\"}" |
    sed -n 's/^[Ss]et-[Cc]ookie: \(seckill_session=[^;]*\).*/\1/p' | tr -d '\r'
}

checks=not_a_server_error,status_code_conformance,content_type_conformance
checks+=,response_schema_conformance,response_headers_conformance
run() { # name, extra arguments
  local name=$1
  shift
  log "schemathesis as $name: seed $seed, $examples examples per operation"
  "$st" --no-color run "$base/api/openapi.json" --checks "$checks" --seed "$seed" \
    --max-examples "$examples" \
    -H "Origin: $base" "$@" > "$ROOT/target/conformance-$name.log" 2>&1 ||
    { tail -80 "$ROOT/target/conformance-$name.log"; die "the API broke its document (as $name)"; }
  grep -E "Test cases:|generated" "$ROOT/target/conformance-$name.log" | tail -1
}
run admin --exclude-path-regex logout -H "Cookie: $(session 13800000000)"
run shopper --exclude-path-regex logout -H "Cookie: $(session 13900000099)"
run visitor
log "the REST API answers as its document says"
