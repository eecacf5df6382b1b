#!/usr/bin/env bash
# Builds the site (wasm bundle + CSS into target/site) and the server binary.
#   scripts/build.sh [--release | --for-tests]
# --for-tests (the test command): the browser bundle exactly as --release makes it (wasm-opt,
# precompressed, hashed names: the journeys weigh and check it), and the server and the bench
# from the debug profile the Rust tests have just built, so the test command compiles the
# native tree once (design.md §8, decision 23). Benchmarks and the run command use --release.
# Uses cargo-leptos when version $CARGO_LEPTOS_VERSION is installed; otherwise the same steps
# by hand (cargo → wasm-bindgen → wasm-opt → CSS → server), and says so. A release build then
# writes each static file's brotli (-q 11) and gzip (-9) copy beside it, which the server sends
# to browsers that accept them (tower-http's ServeDir, precompressed), and a copy of each under a
# hashed name (seckill.<16 hex of its SHA-256>.<ext>) listed in hash.txt beside the server
# binary: pages then name those, sent as immutable (server/src/static_files.rs).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

release=false
native_release=false
case "${1:-}" in
  --release) release=true native_release=true ;;
  --for-tests) release=true ;;
  "") ;;
  *) die "unknown option $1 (use --release or --for-tests)" ;;
esac
SITE="$ROOT/target/site"

# Hashed names (release builds): the JS, the wasm and the CSS, and their compressed copies, also
# under seckill.<16 hex of the SHA-256 of the three together>.<ext> (hard links, after
# precompress); the hash goes to hash.txt beside the server binary, in Leptos's format. One hash
# for the three: Leptos names the JS, the wasm and the stylesheet from one output name.
hash_names() {
  find "$SITE/pkg" -regextype posix-extended \
    -regex '.*/seckill\.[0-9a-f]{16}\.(js|wasm|css)(\.br|\.gz)?' -delete
  rm -f "$SITE/pkg/.hashes"
  $release || return 0
  h=$(cat "$SITE/pkg/seckill.js" "$SITE/pkg/seckill.wasm" "$SITE/pkg/seckill.css" | sha256sum | cut -c1-16)
  for ext in js wasm css; do
    for suffix in "" .br .gz; do
      if [ -f "$SITE/pkg/seckill.$ext$suffix" ]; then
        ln -f "$SITE/pkg/seckill.$ext$suffix" "$SITE/pkg/seckill.$h.$ext$suffix"
      fi
    done
    echo "$ext: $h" >> "$SITE/pkg/.hashes"
  done
}

# Precompressed copies of the static files (release builds): brotli and gzip beside each.
precompress() {
  if ! $release; then
    # A debug build must not be shadowed by a release build's compressed copies.
    rm -f "$SITE"/pkg/*.br "$SITE"/pkg/*.gz
    return 0
  fi
  for f in "$SITE"/pkg/*.js "$SITE"/pkg/*.wasm "$SITE"/pkg/*.css; do
    [ -f "$f" ] || continue
    gzip -9 -k -f "$f"
    if command -v brotli >/dev/null; then brotli -q 11 -k -f "$f"; fi
  done
  log "precompressed: $(cd "$SITE/pkg" && du -bc *.wasm *.js *.css | tail -1 | cut -f1) bytes raw, $(cd "$SITE/pkg" && du -bc *.br 2>/dev/null | tail -1 | cut -f1) brotli"
}

if $native_release && have_cargo_leptos && command -v wasm-opt >/dev/null; then
  log "building with cargo-leptos ($($release && echo release || echo debug))"
  if $release; then cargo leptos build --release; else cargo leptos build; fi
  precompress
  exit 0
fi

log "cargo-leptos $CARGO_LEPTOS_VERSION is not installed: building with plain cargo + wasm-bindgen"
log "(install it with: scripts/setup.sh --cargo-leptos)"
if $release; then wasm_profile=wasm-release; else wasm_profile=dev; fi
if $native_release; then server_flags=(--release); native_dir=release; else server_flags=(); native_dir=debug; fi
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
precompress
hash_names
# The server and the bench in one selection (see NATIVE in lib.sh): one compile of each dependency.
cargo build "${NATIVE[@]}" "${server_flags[@]}"
# Leptos reads the hashes beside the server binary (the server checks the files exist).
if $release; then mv -f "$SITE/pkg/.hashes" "$CARGO_TARGET_DIR/$native_dir/hash.txt"; else rm -f "$CARGO_TARGET_DIR/debug/hash.txt"; fi
log "site in $SITE, server in $CARGO_TARGET_DIR/$native_dir/server"
