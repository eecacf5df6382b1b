#!/usr/bin/env bash
# A new machine, as near as one machine can make it: both README commands from a fresh clone,
# with everything the set-up installs outside the clone set aside. A fresh clone alone is not a
# new machine: the tools directory, the build directory, a cargo-installed wasm-bindgen, the
# crate registry and npm's and pip's caches left by earlier work hide install bugs (issue #50:
# both commands stopped at the install step on every new machine while every run here was green).
#
#   scripts/new-machine.sh [--keep]
#
# How: the commands run under a new, empty HOME, so ~/.cache/seckill (tools, build directory),
# ~/.cargo (the crate registry, anything cargo-installed), ~/.npm and ~/.cache/pip start empty;
# only rustup's toolchains are kept (Rust is a prerequisite: RUSTUP_HOME stays, and PATH gets
# rustup's own commands, not the rest of ~/.cargo/bin). Nothing of yours is moved, so nothing
# needs putting back, and an interrupted run leaves your machine as it was. Debian packages stay
# installed (the set-up's apt step is then a no-op; `scripts/setup.sh --tests --dry-run` on a
# new machine lists them).
#
# Then, timed: the test command (`.ci/run`, as CI runs it), then the run command until the shop
# answers /api/health (then stopped). The new HOME and the clone go at the end (about 20 GB),
# unless --keep. Run it alone: it needs the ports the two commands use (3000 moved to 3100,
# Redis 16379, PostgreSQL 15432, the journeys' and the cluster's), and it refuses to start while
# something listens on the local services' ports (scripts/services.sh stop first).
# Run it whenever the set-up, the build or the tools change. About an hour on 2 cores.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

keep=false
case "${1:-}" in
  --keep) keep=true ;;
  "") ;;
  *) die "unknown option $1 (use --keep)" ;;
esac

for port in 16379 15432 3100; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "something listens on 127.0.0.1:$port: stop your local services (scripts/services.sh stop) or the shop first"
  fi
done
command -v rustup >/dev/null || die "rustup is missing: Rust is a prerequisite (README)"

base=$(mktemp -d "${SECKILL_NEW_MACHINE_DIR:-/var/tmp}/seckill-new-machine.XXXXXX")
home="$base/home" clone="$base/seckill"
mkdir -p "$home/rustup-bin"
# rustup's proxies only: a wasm-bindgen or cargo-leptos in ~/.cargo/bin must not be found.
rustup_bin=$(dirname "$(command -v rustup)")
for tool in cargo rustc rustup rustdoc cargo-clippy clippy-driver rustfmt cargo-fmt; do
  [ -x "$rustup_bin/$tool" ] && ln -s "$rustup_bin/$tool" "$home/rustup-bin/$tool"
done
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
cleanup() {
  local status=$?
  # The services and the cluster this run started, under its own HOME and clone.
  if [ -d "$clone" ]; then
    new_env bash "$clone/scripts/cluster.sh" stop >/dev/null 2>&1 || true
    new_env bash "$clone/scripts/services.sh" stop >/dev/null 2>&1 || true
    # PostgreSQL's data, kept beside the clone where the postgres user cannot reach into it
    # (scripts/services.sh, pg_dir).
    $keep || rm -rf "/var/tmp/seckill-pg-$(printf '%s' "$clone" | md5sum | cut -c1-12)"
  fi
  if $keep; then log "kept $base"; else rm -rf "$base"; fi
  exit "$status"
}
trap cleanup EXIT

# The environment of a new machine's shell: the new HOME, rustup's toolchains, the system's PATH.
new_env() {
  env -i HOME="$home" RUSTUP_HOME="$rustup_home" CARGO_HOME="$home/.cargo" \
    PATH="$home/rustup-bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    TERM="${TERM:-dumb}" LANG=C.UTF-8 CI=true "$@"
}

git clone -q "$ROOT" "$clone"
log "fresh clone of $(git -C "$ROOT" rev-parse --short HEAD) in $clone, HOME=$home (empty)"

log "1/2 the test command (.ci/run, as CI runs it)"
start=$(date +%s)
status=0
(cd "$clone" && new_env bash .ci/run) 2>&1 | tee "$base/test.log" || status=$?
test_secs=$(($(date +%s) - start))
[ "$status" -eq 0 ] || { keep=true; die "the test command failed (exit status $status; its log: $base/test.log)"; }
log "the test command passed in $((test_secs / 60)) min $((test_secs % 60)) s"
log "2/2 the run command (scripts/run.sh), until the shop answers /api/health"
start=$(date +%s)
(cd "$clone" && new_env LEPTOS_SITE_ADDR=127.0.0.1:3100 bash scripts/run.sh > "$base/run.log" 2>&1) &
run_pid=$!
until curl -fs http://127.0.0.1:3100/api/health >/dev/null 2>&1; do
  if ! kill -0 "$run_pid" 2>/dev/null; then
    tail -n 60 "$base/run.log" >&2
    keep=true
    die "the run command ended before the shop answered (its log: $base/run.log)"
  fi
  sleep 5
done
run_secs=$(($(date +%s) - start))
log "the shop answered after $((run_secs / 60)) min $((run_secs % 60)) s; stopping it"
# run.sh execs the server: the subshell's child is the server (pkill by parent, ours only).
pkill -TERM -P "$run_pid" 2>/dev/null || true
wait "$run_pid" 2>/dev/null || true

log "test command, new machine: $((test_secs / 60)) min $((test_secs % 60)) s"
log "run command after it (its tools in place, the release build to make): $((run_secs / 60)) min $((run_secs % 60)) s"
