# Shared by the scripts: paths, tool versions and small helpers. Source it, do not run it.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Build artefacts live outside the clone so that fresh clones (CI) reuse compiled dependencies.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/seckill/target}
export LEPTOS_OUTPUT_NAME=seckill
TOOLS_DIR=${SECKILL_TOOLS_DIR:-$HOME/.cache/seckill/tools}
CARGO_LEPTOS_VERSION=0.3.11
BINARYEN_VERSION=132.0.0
# The release bundles' JS glue, minified (wasm-bindgen writes it readable): 6.5 -> 4.7 KB brotli
# on a sale page (decision 54).
TERSER_VERSION=5.51.4
# The REST API docs page's renderer (npm), vendored into target/site/pkg/api-docs.js.
REDOC_VERSION=2.5.2
# drand's round signatures checked on the "Check this draw" page: BLS12-381 from @noble/curves (npm,
# ES modules) with the @noble/hashes it pins exactly, vendored into target/site/pkg/noble/.
NOBLE_CURVES_VERSION=2.4.0
NOBLE_HASHES_VERSION=2.4.0
# The set-up's tools first (wasm-bindgen in bin/, Node.js in node/bin when the machine's was too
# old), then cargo's, then npm's (wasm-opt, terser).
export PATH="$TOOLS_DIR/bin:$TOOLS_DIR/node/bin:$HOME/.cargo/bin:$TOOLS_DIR/node_modules/.bin:$PATH"

# One package selection for every native build (tests, clippy, the server, the bench), so cargo
# resolves the same features each time and compiles each dependency once per profile: `-p server`
# or `-p bench` alone resolves fewer features than the workspace and rebuilds hyper, redis and the
# rest. The wasm bundle (`frontend`) is its own target.
NATIVE=(--workspace --exclude frontend)

log() { printf '\033[1m[seckill]\033[0m %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# No script stops in silence: a command that fails under `set -e` (in this file's callers, their
# functions and subshells: errtrace) names its script, line and command before the script ends.
set -o errtrace
on_error() { # exit status, line, command
  local script=${BASH_SOURCE[1]:-$0}
  log "error: $(basename "$script") line $2 stopped with exit status $1: $3"
}
trap 'on_error $? $LINENO "$BASH_COMMAND"' ERR

# Ends a process and every process under it (found through /proc, so no procps is needed): what
# a script started in the background and no longer wants when it stops early.
kill_tree() { # pid
  local children child
  children=$(cat /proc/"$1"/task/*/children 2>/dev/null || true)
  kill "$1" 2>/dev/null || true
  for child in $children; do kill_tree "$child"; done
}

# Runs a command whose output is only noise when it works (an installer), keeping that output in
# a file; when it fails, prints the output's last 40 lines, the command and what to do, and fails.
#   quietly "what to do when it fails" command...
quietly() {
  local hint=$1 out status=0
  shift
  out=$(mktemp "${TMPDIR:-/tmp}/seckill-step.XXXXXX")
  "$@" >"$out" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    log "error: this command failed (exit status $status): $*"
    log "its last lines (all of them in $out):"
    tail -n 40 "$out" >&2
    log "what to do: $hint"
    return "$status"
  fi
  rm -f "$out"
}

# Runs a command as root: directly when we are root, through sudo otherwise.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    die "need root to run: $* (install sudo or run as root)"; fi
}

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing with apt: ${missing[*]}"
  quietly "check that apt can reach Debian's mirrors (apt-get update), then run this again" \
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  quietly "install them by hand (apt-get install ${missing[*]}) to see why, then run this again" \
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
}

# Which of these Debian packages are not installed (one a line; nothing when all are).
apt_missing() {
  local pkg
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || echo "$pkg"; done
}

# The wasm-bindgen version pinned in Cargo.lock (the CLI must match it exactly).
wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$ROOT/Cargo.lock"
}

have_cargo_leptos() {
  command -v cargo-leptos >/dev/null && cargo leptos --version 2>/dev/null | grep -q "$CARGO_LEPTOS_VERSION"
}

# Clippy inside the native debug build (the test command, and build.sh --for-tests after it):
# clippy-driver, the compiler `cargo clippy` puts in front of the workspace's own crates, as
# cargo's workspace wrapper on a real build, with `-D warnings`. Each of our crates is linted as
# it is compiled and every dependency is compiled once: `cargo clippy` checks the whole tree again
# in check mode, whose artefacts no build can use (4 minutes of a new machine's run on 2 cores).
# The lints are clippy's own, on the same targets as `cargo clippy --all-targets` (a build of
# --lib --bins --tests: the workspace has no examples or benches). Cargo compiles the
# workspace's crates again (only those) when the wrapper or its arguments change, so each
# native debug build of the test command's tree goes through this.
lint_while_building() {
  local driver
  driver=$(cd "$ROOT" && rustup which clippy-driver 2>/dev/null) ||
    die "clippy-driver is not in the pinned toolchain (rust-toolchain.toml lists clippy): run scripts/setup.sh"
  export RUSTC_WORKSPACE_WRAPPER=$driver
  # cargo-clippy's own way of passing `-- -D warnings` to the driver.
  export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
}

# Starts (or reuses) the local services and exports their URLs. Fails loudly: `eval "$(…)"`
# alone would go on with an empty environment when a service did not start.
start_services() {
  local env_lines
  env_lines=$("$ROOT/scripts/services.sh" start) || die "the local services did not start (see above)"
  [ -n "$env_lines" ] || die "scripts/services.sh start printed no URLs"
  eval "$env_lines"
}

# The shared target directory keeps every build's artefacts, and each feature set or lockfile
# change leaves another copy of the large ones (a debug `libserver` rlib is over 1 GB): weeks of
# fresh-clone runs fill the disk, and then Redis, PostgreSQL and the linker fail in ways that
# look like anything but a full disk. Below `SECKILL_MIN_FREE_GB` (default 20) free, drop the
# incremental caches and every artefact over 50 MB not written in the last 6 hours; cargo builds
# again whatever it still needs.
prune_target() {
  local min_gb=${SECKILL_MIN_FREE_GB:-20} free_kb
  [ -d "$CARGO_TARGET_DIR" ] || return 0
  free_kb=$(df -Pk "$CARGO_TARGET_DIR" | awk 'NR == 2 { print $4 }')
  [ "$free_kb" -ge $((min_gb * 1024 * 1024)) ] && return 0
  log "less than $min_gb GB free: pruning old build artefacts in $CARGO_TARGET_DIR"
  find "$CARGO_TARGET_DIR" -mindepth 2 -maxdepth 2 -type d -name incremental -prune -exec rm -rf {} +
  find "$CARGO_TARGET_DIR" -mindepth 3 -maxdepth 3 -path '*/deps/*' -type f -size +50M -mmin +360 -delete
  free_kb=$(df -Pk "$CARGO_TARGET_DIR" | awk 'NR == 2 { print $4 }')
  log "$((free_kb / 1024 / 1024)) GB free after pruning"
}

# Phases of a long command, timed: `phase NAME` ends the phase before and starts this one;
# `phases_report` (an EXIT trap) prints each phase's wall time and how busy the machine's CPUs
# were meanwhile (all processes, from /proc/stat: a phase well under 100 % waits on something,
# and work could run beside it), the one running when a step failed marked so, so a slow or
# failing phase is seen in every log.
PHASES=() PHASE_NAME="" PHASE_START=0 PHASE_CPU="" PHASES_START=$(date +%s) PHASES_CPU=""
# "busy total" jiffies of all CPUs so far (nothing where /proc/stat is not).
cpu_jiffies() {
  [ -r /proc/stat ] || return 0
  awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print t - $5 - $6, t; exit }' /proc/stat
}
# Percent of the CPUs busy since a `cpu_jiffies` reading ("?" when there is none).
cpu_busy_since() {
  local then=$1 now
  now=$(cpu_jiffies)
  if [ -z "$then" ] || [ -z "$now" ]; then echo "?"; return; fi
  set -- $then $now
  [ "$4" -gt "$2" ] && echo $(((($3 - $1) * 100) / ($4 - $2))) || echo "?"
}
PHASES_CPU=$(cpu_jiffies)
phase() {
  phase_end
  PHASE_NAME=$1 PHASE_START=$(date +%s) PHASE_CPU=$(cpu_jiffies)
  log "── $1"
}
phase_end() {
  [ -n "$PHASE_NAME" ] || return 0
  PHASES+=("$PHASE_NAME|$(($(date +%s) - PHASE_START))|$(cpu_busy_since "$PHASE_CPU")|${1:-ok}")
  PHASE_NAME=""
}
phases_report() { # exit status of the command
  local status=$1 row name secs busy state
  [ "$status" -eq 0 ] && phase_end ok || phase_end "FAILED (exit $status)"
  printf '\n%-58s %9s %5s  %s\n' "phase" "wall time" "CPU" "" >&2
  for row in "${PHASES[@]}"; do
    IFS='|' read -r name secs busy state <<<"$row"
    printf '%-58s %6dm%02ds %4s%%  %s\n' "$name" $((secs / 60)) $((secs % 60)) "$busy" "$state" >&2
  done
  secs=$(($(date +%s) - PHASES_START))
  printf '%-58s %6dm%02ds %4s%%\n\n' "total" $((secs / 60)) $((secs % 60)) "$(cpu_busy_since "$PHASES_CPU")" >&2
}
