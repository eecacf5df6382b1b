#!/usr/bin/env bash
# Builds the site (five wasm bundles + CSS into target/site) and the server binary. The pages
# are server components with islands (design.md decisions 35, 38 and 54): `seckill-home` carries
# the home page's islands (frontend's `bundle-home` feature), `seckill-sale` a first-come sale
# page's (`bundle-sale`), `seckill-draw` a draw sale page's, with the draw panel (`bundle-draw`),
# `seckill` every shopper's island (the other pages), `seckill-admin` (`bundle-admin`) those and the
# admin pages' (console, create form), so a cold visit downloads its own page's islands and a
# shopper never downloads the console.
#   scripts/build.sh [--release | --for-tests | --site-for-tests]
# --for-tests: the browser bundle exactly as --release makes it (wasm-opt, precompressed, hashed
# names: the journeys weigh and check it), and the server and the bench from the debug profile
# the test command built, linted as it builds them (lint_while_building in lib.sh), so nothing
# is compiled again (design.md §8, decision 23). --site-for-tests: that site alone (the test
# command builds it in the background while it builds and tests the native tree). Benchmarks
# and the run command use --release.
# The steps by hand (cargo → wasm-bindgen → wasm-opt, per bundle → CSS → server): cargo-leptos
# builds one bundle per site, so the build no longer goes through it. A release build then
# writes each static file's brotli (-q 11) and gzip (-9) copy beside it, which the server sends
# to browsers that accept them (the server reads them into memory at start), and a copy of each under a
# hashed name (seckill.<16 hex of its SHA-256>.<ext>) listed in hash.txt beside the server
# binary: pages then name those, sent as immutable (server/src/static_files.rs).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

release=false
native_release=false
for_tests=false
native=true
case "${1:-}" in
  --release) release=true native_release=true ;;
  --for-tests) release=true for_tests=true ;;
  --site-for-tests) release=true for_tests=true native=false ;;
  "") ;;
  *) die "unknown option $1 (use --release, --for-tests or --site-for-tests)" ;;
esac
# The site is built in a directory of its own and put in place whole at the end: a server that
# starts meanwhile (the test command's smoke runs, while the bundles build in the background)
# reads the site before or after, never a file renamed or deleted under it.
SITE_LIVE="$ROOT/target/site" SITE="$ROOT/target/site.next"
rm -rf "$SITE"
# The bundles and a release server are built by rustc itself, never through clippy-driver (the
# test command's lints: lint_while_building in lib.sh), whose MIR is left unoptimised.
unset RUSTC_WORKSPACE_WRAPPER CLIPPY_ARGS
# The browser bundles and the feature that builds each, from app/bundles.txt (which also says
# the pages that load each and the islands each carries).
BUNDLES=() BUNDLE_FEATURES=() BUNDLE_ISLANDS=()
while read -r name feature _pages islands; do
  case "$name" in ''|'#'*) continue ;; esac
  BUNDLES+=("$name")
  BUNDLE_FEATURES+=("$([ "$feature" = - ] || echo "$feature")")
  BUNDLE_ISLANDS+=("$(wc -w <<<"$islands")")
done < "$ROOT/app/bundles.txt"


# Hashed names (release builds): the JS, the wasm and the CSS, and their compressed copies, also
# under seckill.<16 hex of the SHA-256 of them all>.<ext> (and each page's bundle under
# seckill-<page>.<the same hash>.<ext>; hard links, after precompress); the hash goes to hash.txt
# beside the server binary, in Leptos's format. One hash for all: Leptos names the JS, the wasm
# and the stylesheet from one output name.
hash_names() {
  find "$SITE/pkg" -regextype posix-extended \
    -regex '.*/seckill(-[a-z]+)?\.[0-9a-f]{16}\.(js|wasm|css)(\.br|\.gz)?' -delete
  rm -f "$SITE/pkg/.hashes"
  $release || return 0
  h=$(for name in "${BUNDLES[@]}"; do cat "$SITE/pkg/$name".{js,wasm}; done | cat - "$SITE/pkg/seckill.css" | sha256sum | cut -c1-16)
  for ext in js wasm css; do
    for name in "${BUNDLES[@]}"; do
      for suffix in "" .br .gz; do
        if [ -f "$SITE/pkg/$name.$ext$suffix" ]; then
          ln -f "$SITE/pkg/$name.$ext$suffix" "$SITE/pkg/$name.$h.$ext$suffix"
        fi
      done
    done
    echo "$ext: $h" >> "$SITE/pkg/.hashes"
  done
}

# Precompressed copies (release builds): brotli and gzip beside each file named.
compress() { # file...
  local f
  for f in "$@"; do
    gzip -9 -k -f "$f"
    if command -v brotli >/dev/null; then brotli -q 11 -k -f "$f"; fi
  done
}
# The static files at the top of pkg/ not compressed yet (the bundles were, as each finished).
precompress() {
  if ! $release; then
    # A debug build must not be shadowed by a release build's compressed copies.
    rm -f "$SITE"/pkg/*.br "$SITE"/pkg/*.gz
    return 0
  fi
  for f in "$SITE"/pkg/*.js "$SITE"/pkg/*.wasm "$SITE"/pkg/*.css; do
    [ -f "$f" ] && [ ! -f "$f.gz" ] || continue
    compress "$f"
  done
  for name in "${BUNDLES[@]}"; do
    log "precompressed $name (with the CSS): $(cd "$SITE/pkg" && du -bc $name.wasm $name.js seckill.css | tail -1 | cut -f1) bytes raw, $(cd "$SITE/pkg" && du -bc $name.wasm.br $name.js.br seckill.css.br 2>/dev/null | tail -1 | cut -f1) brotli"
  done
}

if $release; then wasm_profile=wasm-release; else wasm_profile=dev; fi
if $native_release; then server_flags=(--release); native_dir=release; else server_flags=(); native_dir=debug; fi
profile_dir=$([ "$wasm_profile" = dev ] && echo debug || echo "$wasm_profile")
mkdir -p "$SITE/pkg"
# A release bundle's standard library is built with it, with panics that abort on the spot
# (`-Cpanic=immediate-abort`) and without their source locations: no panic message is formatted
# or shipped, 18 KB of brotli (7.6 %) off the shoppers' bundle (design.md decision 35). These are
# unstable flags, taken on the pinned stable toolchain through RUSTC_BOOTSTRAP (rust-src is in
# rust-toolchain.toml); a debug bundle keeps its panic messages for the browser's console.
release_std=(-Zbuild-std=std,panic_abort)
release_rustflags="-Zunstable-options -Cpanic=immediate-abort -Zlocation-detail=none"
# One bundle: cargo (with `features`) and wasm-bindgen, one after another (each bundle's cargo
# build writes the same frontend.wasm); then, for a release, finish_bundle.
bundle() { # output name, cargo features
  if $release; then
    RUSTC_BOOTSTRAP=1 RUSTFLAGS="$release_rustflags" cargo build -p frontend --lib \
      --target wasm32-unknown-unknown --profile "$wasm_profile" --features "$2" "${release_std[@]}"
  else
    cargo build -p frontend --lib --target wasm32-unknown-unknown --profile "$wasm_profile" --features "$2"
  fi
  wasm-bindgen --target web --no-typescript --out-dir "$SITE/pkg" --out-name "$1" \
    "$CARGO_TARGET_DIR/wasm32-unknown-unknown/$profile_dir/frontend.wasm"
  # HydrationScripts asks for <name>.wasm when LEPTOS_OUTPUT_NAME is set.
  mv -f "$SITE/pkg/${1}_bg.wasm" "$SITE/pkg/$1.wasm"
}
# A release bundle's own steps, on its files alone: wasm-opt, the glue minified (an ES module:
# its exports and the wasm's import names stay as they are), both compressed.
finish_bundle() { # output name
  if command -v wasm-opt >/dev/null; then
    wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
      -o "$SITE/pkg/$1.wasm" "$SITE/pkg/$1.wasm"
  fi
  terser "$SITE/pkg/$1.js" --module --compress --mangle -o "$SITE/pkg/$1.js"
  compress "$SITE/pkg/$1.wasm" "$SITE/pkg/$1.js"
}
$release && ! command -v terser >/dev/null && die "terser is not on PATH: run scripts/setup.sh"
log "the bundles: ${BUNDLES[*]}"
# Each bundle's compile ends in single-threaded LTO, and its wasm-opt and brotli are single-
# threaded too: a release bundle is finished in the background while the next one compiles,
# the one with the most islands first (its wasm-opt is the longest: it then runs beside the
# next compile instead of after the last). A build that stops early stops them too.
finishing=()
trap 'for pid in "${finishing[@]}"; do kill_tree "$pid"; done' EXIT
for i in $(for i in "${!BUNDLES[@]}"; do echo "${BUNDLE_ISLANDS[$i]} $i"; done | sort -rn | cut -d' ' -f2); do
  bundle "${BUNDLES[$i]}" "${BUNDLE_FEATURES[$i]}"
  if $release; then
    finish_bundle "${BUNDLES[$i]}" &
    finishing+=($!)
  fi
done
# The stylesheet without its comments and with each run of white space one space, quoted
# strings kept as written: 3,076 -> 2,423 B brotli on every page's first load (decision 54).
python3 - style/main.css "$SITE/pkg/seckill.css" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
# A quoted string as it is; any run of white space and comments as one space.
token = re.compile(r'("(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')|(?:\s|/\*.*?\*/)+', re.S)
out = token.sub(lambda m: m.group(1) or " ", text)
open(sys.argv[2], "w", encoding="utf-8").write(out.strip() + "\n")
PY
# The REST API's docs page renders with Redoc, vendored from npm (scripts/setup.sh): served
# from /pkg/ like the other static files; no page of the shop loads it.
cp "$TOOLS_DIR/node_modules/redoc/bundles/redoc.standalone.js" "$SITE/pkg/api-docs.js"
# The draw check page (server/assets/draw-check.js) verifies drand's BLS signatures with
# @noble/curves and @noble/hashes, vendored from npm (scripts/setup.sh) as the ES modules they
# ship, under /pkg/noble/ (loaded by that page alone, on demand). No bundler and no import map:
# their imports of @noble/hashes are made relative here, and a bare import left stops the build.
noble="$TOOLS_DIR/node_modules/@noble"
[ -f "$noble/curves/bls12-381.js" ] && [ -f "$noble/hashes/sha2.js" ] ||
  die "@noble/curves and @noble/hashes are not in $TOOLS_DIR/node_modules: run scripts/setup.sh"
rm -rf "$SITE/pkg/noble"
mkdir -p "$SITE/pkg/noble/curves/abstract" "$SITE/pkg/noble/hashes"
cp "$noble/curves/"*.js "$SITE/pkg/noble/curves/"
cp "$noble/curves/abstract/"*.js "$SITE/pkg/noble/curves/abstract/"
cp "$noble/hashes/"*.js "$SITE/pkg/noble/hashes/"
# Each package's index.js is documentation (it throws when imported).
rm -f "$SITE/pkg/noble/curves/index.js" "$SITE/pkg/noble/hashes/index.js"
sed -i "s#\(['\"]\)@noble/hashes/#\1../hashes/#g" "$SITE/pkg/noble/curves/"*.js
sed -i "s#\(['\"]\)@noble/hashes/#\1../../hashes/#g" "$SITE/pkg/noble/curves/abstract/"*.js
if grep -rEn "^\s*(import|export|\}).*from ['\"][^./]|import\(['\"][^./]" "$SITE/pkg/noble"; then
  die "a bare import is left in the @noble modules under $SITE/pkg/noble (above): no browser resolves it"
fi
# Their compressed copies (precompress below sees only the files at the top of pkg/).
if $release; then
  # shellcheck disable=SC2046 # the module files' names have no spaces
  compress $(find "$SITE/pkg/noble" -name '*.js')
fi
for pid in "${finishing[@]}"; do
  wait "$pid" || die "finishing a bundle (wasm-opt, terser or compression) failed: its error is above"
done
finishing=()
precompress
hash_names
# Leptos reads the hashes beside the server binary (the server checks the files exist).
mkdir -p "$CARGO_TARGET_DIR/$native_dir"
hashes="$CARGO_TARGET_DIR/$native_dir/hash.txt"
if $release; then mv -f "$SITE/pkg/.hashes" "$hashes.next"; else rm -f "$CARGO_TARGET_DIR/debug/hash.txt"; fi
# In place: the last site moves aside (kept until the next build: a server may be reading it),
# then this one takes its name, then the hashes that name its files.
rm -rf "$ROOT/target/site.old"
if [ -d "$SITE_LIVE" ]; then mv "$SITE_LIVE" "$ROOT/target/site.old"; fi
mv "$SITE" "$SITE_LIVE"
SITE=$SITE_LIVE
if $release; then mv -f "$hashes.next" "$hashes"; fi
if ! $native; then
  log "site in $SITE (the native tree is the test command's own build)"
  exit 0
fi
# The server and the bench in one selection (see NATIVE in lib.sh): one compile of each dependency.
# For the tests, the selection and the lints the test command built with: with its test
# targets, so the dev-dependencies' features unify as they did there and nothing is compiled
# again (a plain `cargo build` resolves fewer features and rebuilt sqlx, redis, reqwest and every
# crate of ours: 1 min 28 s of a new machine's run).
native_targets=()
if $for_tests; then
  native_targets=(--lib --bins --tests)
  lint_while_building
fi
cargo build "${NATIVE[@]}" "${server_flags[@]}" "${native_targets[@]}"
log "site in $SITE, server in $CARGO_TARGET_DIR/$native_dir/server"
