#!/usr/bin/env bash
# Two commits' rush in one sitting, alternating (issue #53): where did the hot path's time go?
#
#   scripts/ab.sh A B [ROUNDS] [-- RUSH OPTIONS]      e.g. scripts/ab.sh 386c053 main 2 -- --conns 1000
#
# Each commit is checked out in a worktree of its own under $SECKILL_AB_DIR (/var/tmp/seckill-ab)
# and built as it built itself (its own scripts/build.sh --release and its bench; one target
# directory for both, so the dependencies they share compile once, each commit's binaries copied
# out beside its hashes), then each commit's own `bench rush` runs
# against its own release server, A B A B ..., on the same local services: every figure of a
# round is taken minutes apart on the same machine, and each run measures its server's own
# `GET /api/live` ceiling with the same connections and shoppers. Prints each run's buys/s, its
# live ceiling, their ratio and the rush's p99, then each commit's median. The runs' JSON stays in
# $SECKILL_AB_DIR/runs/. Worktrees and builds are kept for the next sitting (remove the directory
# and `git worktree prune` to reclaim them: about 6 GB).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

[ $# -ge 2 ] || die "usage: scripts/ab.sh A B [ROUNDS] [-- RUSH OPTIONS]"
commits=("$1" "$2")
shift 2
rounds=2
if [ $# -gt 0 ] && [ "$1" != -- ]; then rounds=$1; shift; fi
[ "${1:-}" = -- ] && shift
rush=("$@")
AB_DIR=${SECKILL_AB_DIR:-/var/tmp/seckill-ab}
mkdir -p "$AB_DIR/runs"

"$ROOT/scripts/setup.sh" --tests
start_services

declare -A tree bin
shared="$AB_DIR/target"
for c in "${commits[@]}"; do
  sha=$(git rev-parse --short=9 "$c^{commit}") || die "no such commit: $c"
  tree[$c]="$AB_DIR/$sha"
  bin[$c]="$AB_DIR/bin-$sha"
  if [ ! -d "${tree[$c]}" ]; then
    git worktree add --detach "${tree[$c]}" "$sha" >/dev/null
  fi
  phase "build $c ($sha): its own build.sh --release and bench"
  # An older commit's scripts find the tools where this one's set-up put them.
  (cd "${tree[$c]}" && PATH="$TOOLS_DIR/bin:$TOOLS_DIR/node/bin:$PATH" CARGO_TARGET_DIR="$shared" \
    quietly "building $c as it built itself failed: read its scripts/build.sh" \
    bash scripts/build.sh --release)
  (cd "${tree[$c]}" && CARGO_TARGET_DIR="$shared" \
    quietly "building $c's bench failed" cargo build --release -p bench)
  mkdir -p "${bin[$c]}/release"
  cp "$shared/release/server" "$shared/release/bench" "$shared/release/hash.txt" "${bin[$c]}/release/"
  phase_end
done

stamp=$(date +%Y%m%d-%H%M%S)
for r in $(seq "$rounds"); do
  for c in "${commits[@]}"; do
    phase "round $r: $c's rush"
    (cd "${tree[$c]}" && CARGO_TARGET_DIR="${bin[$c]}" LEPTOS_SITE_ROOT="${tree[$c]}/target/site" \
      LEPTOS_SITE_PKG_DIR=pkg "${bin[$c]}/release/bench" rush "${rush[@]}" \
      > "$AB_DIR/runs/$stamp-$r-${c//\//_}.log" 2>&1) || die "$c's rush failed: $AB_DIR/runs/$stamp-$r-${c//\//_}.log"
    cp "${tree[$c]}/target/bench/rush.json" "$AB_DIR/runs/$stamp-$r-${c//\//_}.json"
    phase_end
  done
done

python3 - "$AB_DIR/runs" "$stamp" "${commits[@]}" <<'EOF'
import json, statistics, sys, glob, os
runs, stamp, commits = sys.argv[1], sys.argv[2], sys.argv[3:]
print(f"\n| commit | round | buys/s | GET /api/live/s | ratio | rush p99 ms |")
print("| --- | --- | --- | --- | --- | --- |")
per = {c: [] for c in commits}
for path in sorted(glob.glob(os.path.join(runs, f"{stamp}-*.json"))):
    name = os.path.basename(path)[len(stamp) + 1:-5]
    r, c = name.split("-", 1)
    commit = next(x for x in commits if x.replace("/", "_") == c)
    j = json.load(open(path))
    lat = j["latency"]
    p99 = lat.get("p99_ms", lat.get("p99"))
    per[commit].append((j["buys_per_sec"], j["ceiling_live_per_sec"], j["ratio_buys_to_live"], p99))
    print(f"| {commit} | {r} | {j['buys_per_sec']:,.0f} | {j['ceiling_live_per_sec']:,.0f} | {j['ratio_buys_to_live']:.2f}x | {p99:.1f} |")
print("\n| commit | median buys/s | median live/s | median ratio | median p99 ms |")
print("| --- | --- | --- | --- | --- |")
for c, xs in per.items():
    med = lambda i: statistics.median(x[i] for x in xs if x[i] is not None)
    print(f"| {c} | {med(0):,.0f} | {med(1):,.0f} | {med(2):.2f}x | {med(3):.1f} |")
EOF
