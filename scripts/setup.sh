#!/usr/bin/env bash
# Installs everything the project needs on Debian 12, skipping what is already there:
# apt packages (Redis, PostgreSQL, Chromium), the wasm target, wasm-bindgen-cli pinned to
# Cargo.lock, wasm-opt (npm binaryen), the end-to-end npm packages. cargo-leptos (a ~45 min
# build here) is installed only with --cargo-leptos; without it the build script uses plain
# cargo + wasm-bindgen and says so.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

want_cargo_leptos=false
for arg in "$@"; do
  case "$arg" in
    --cargo-leptos) want_cargo_leptos=true ;;
    *) die "unknown option $arg" ;;
  esac
done

# gcc: the linker rustc calls, and the C parts of some crates (mimalloc). fonts-wqy-microhei:
# CJK glyphs for Debian's chromium (the 秒杀 brand in the journeys' screenshots).
# python3-venv: schemathesis (PyPI), the REST API's conformance run (scripts/conformance.sh).
apt_install redis-server postgresql chromium fonts-wqy-microhei curl gcc libc6-dev haproxy brotli \
  python3-venv
# Node.js: Debian's packages only when there is none (a Node.js that ships its own npm conflicts).
command -v npm >/dev/null || apt_install nodejs npm
command -v cargo >/dev/null || die "cargo is missing: install Rust with rustup first"
rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || log "warning: could not add the wasm32 target"
# The release bundles build their own standard library (scripts/build.sh).
rustup component add rust-src >/dev/null 2>&1 || log "warning: could not add rust-src (release bundles need it)"

want=$(wasm_bindgen_version)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  log "installing wasm-bindgen-cli $want (about 8 minutes on 2 cores)"
  (cd / && cargo install --quiet "wasm-bindgen-cli@$want")
fi

mkdir -p "$TOOLS_DIR"
# wasm-opt (binaryen), and Redoc, the REST API's docs page (/api/docs), vendored into the site's
# static files by build.sh: one npm install, as a second --no-save install would remove the first.
redoc_installed=$(sed -n 's/.*"version": "\(.*\)".*/\1/p' "$TOOLS_DIR/node_modules/redoc/package.json" 2>/dev/null | head -1)
if ! "$TOOLS_DIR/node_modules/.bin/wasm-opt" --version 2>/dev/null | grep -q "${BINARYEN_VERSION%%.*}" ||
  [ "$redoc_installed" != "$REDOC_VERSION" ]; then
  log "installing wasm-opt (binaryen $BINARYEN_VERSION) and Redoc $REDOC_VERSION from npm"
  (cd "$TOOLS_DIR" && npm install --silent --no-save "binaryen@$BINARYEN_VERSION" "redoc@$REDOC_VERSION" >/dev/null)
fi

if [ ! -d "$ROOT/end2end/node_modules/@playwright/test" ] || [ ! -d "$ROOT/end2end/node_modules/@axe-core/playwright" ]; then
  log "installing the end-to-end test packages (npm ci; no browser download)"
  (cd "$ROOT/end2end" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --silent >/dev/null)
fi

if $want_cargo_leptos && ! have_cargo_leptos; then
  log "installing cargo-leptos $CARGO_LEPTOS_VERSION (needs rustc >= 1.96; about 45 minutes)"
  # Its locked dependencies need rustc >= 1.96 while the project pins 1.95: a nightly from
  # rustup when there is one, else Debian's cargo-web (1.96), installed into ~/.cargo/bin.
  cargo_cmd=(cargo)
  if rustup run nightly rustc --version >/dev/null 2>&1; then
    cargo_cmd=(cargo +nightly)
  elif ! (cd / && rustc --version | awk '{split($2, v, "."); exit !(v[1] > 1 || v[2] >= 96)}'); then
    apt_install rustc-web cargo-web
    cargo_cmd=(env PATH="/usr/bin:$PATH" /usr/bin/cargo)
  fi
  (cd / && CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    "${cargo_cmd[@]}" install --quiet --locked --root "$HOME/.cargo" "cargo-leptos@$CARGO_LEPTOS_VERSION")
fi
# The REST API checked against its own OpenAPI document (scripts/conformance.sh), pinned.
SCHEMATHESIS_VERSION=4.32.5
if ! "$TOOLS_DIR/schemathesis/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION"; then
  log "installing schemathesis $SCHEMATHESIS_VERSION (PyPI) for the API conformance run"
  python3 -m venv "$TOOLS_DIR/schemathesis"
  "$TOOLS_DIR/schemathesis/bin/pip" install --quiet --disable-pip-version-check \
    "schemathesis==$SCHEMATHESIS_VERSION"
fi

log "tools ready"
