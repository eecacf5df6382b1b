#!/usr/bin/env bash
# Builds the site (wasm bundle + CSS into target/site) and the server binary.
#   scripts/build.sh [--release]
# Uses cargo-leptos when version $CARGO_LEPTOS_VERSION is installed; otherwise the same steps
# by hand (cargo → wasm-bindgen → wasm-opt → CSS → server), and says so.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

release=false
[ "${1:-}" = "--release" ] && release=true
SITE="$ROOT/target/site"

if have_cargo_leptos && command -v wasm-opt >/dev/null; then
  log "building with cargo-leptos ($($release && echo release || echo debug))"
  if $release; then cargo leptos build --release; else cargo leptos build; fi
  exit 0
fi

log "cargo-leptos $CARGO_LEPTOS_VERSION is not installed: building with plain cargo + wasm-bindgen"
log "(install it with: scripts/setup.sh --cargo-leptos)"
if $release; then wasm_profile=wasm-release; server_flags=(--release); else wasm_profile=dev; server_flags=(); fi
cargo build -p frontend --lib --target wasm32-unknown-unknown --profile "$wasm_profile"
profile_dir=$([ "$wasm_profile" = dev ] && echo debug || echo "$wasm_profile")
mkdir -p "$SITE/pkg"
wasm-bindgen --target web --no-typescript --out-dir "$SITE/pkg" --out-name seckill \
  "$CARGO_TARGET_DIR/wasm32-unknown-unknown/$profile_dir/frontend.wasm"
# HydrationScripts asks for <name>.wasm when LEPTOS_OUTPUT_NAME is set.
mv -f "$SITE/pkg/seckill_bg.wasm" "$SITE/pkg/seckill.wasm"
if $release && command -v wasm-opt >/dev/null; then
  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
    -o "$SITE/pkg/seckill.wasm" "$SITE/pkg/seckill.wasm"
fi
cp style/main.css "$SITE/pkg/seckill.css"
cargo build -p server "${server_flags[@]}"
log "site in $SITE, server in $CARGO_TARGET_DIR/$($release && echo release || echo debug)/server"
