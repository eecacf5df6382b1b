#!/usr/bin/env bash
# The run command: installs what is missing, starts Redis and PostgreSQL, builds (release),
# migrates and serves on http://127.0.0.1:3000 (or $LEPTOS_SITE_ADDR) until Ctrl-C.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

addr=${LEPTOS_SITE_ADDR:-127.0.0.1:3000}
# Another program on the shop's address would only show up after the build, as a bind error.
if (exec 3<>"/dev/tcp/${addr%:*}/${addr##*:}") 2>/dev/null; then
  die "something already listens on $addr: stop it, or choose another address (LEPTOS_SITE_ADDR=127.0.0.1:3001 scripts/run.sh)"
fi
# What running needs only; the test tools (Chromium, Playwright, schemathesis) come with
# scripts/test.sh.
"$ROOT/scripts/setup.sh"
start_services
"$ROOT/scripts/build.sh" --release
export LEPTOS_SITE_ROOT="$ROOT/target/site" LEPTOS_SITE_PKG_DIR=pkg
export SECKILL_DEV_LOGIN=${SECKILL_DEV_LOGIN:-true}
# The dev payment provider approves every payment at once (there is no real one).
export SECKILL_DEV_PAYMENTS=${SECKILL_DEV_PAYMENTS:-true}
"$CARGO_TARGET_DIR/release/server" migrate
log "admin phone: ${SECKILL_ADMIN_PHONES:-13800000000}; sign-in codes are shown on the page (dev login)"
exec "$CARGO_TARGET_DIR/release/server" serve
