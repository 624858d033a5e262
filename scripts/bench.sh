#!/usr/bin/env bash
# Benchmarks: medians of repeated runs, printed; nothing here asserts a time.
# Today: `doctor --json` and a no-op `setup` on a supported install, and the
# tree digest they both pay for. (The forwarder's ratio against the raw CLI
# joins when the forwarder exists.)
#
# Usage: scripts/bench.sh [RUNS]     (default 15)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}

cargo build --release --quiet
bin=$PWD/target/release/my-chrome
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME=$work/home MY_CHROME_RUNTIME_DIR=$work/runtime
mkdir -p "$HOME"
"$bin" setup >/dev/null

median_ms() { # command...
  local times=()
  for _ in $(seq "$runs"); do
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

node=$(command -v node)
version=$(median_ms "$node" "$MY_CHROME_RUNTIME_DIR/cli/node_modules/@playwright/cli/playwright-cli.js" --version)
doctor=$(median_ms "$bin" doctor --json)
setup=$(median_ms "$bin" setup)
echo "runs: $runs each (release build)"
echo "raw playwright-cli --version: median ${version} ms"
echo "my-chrome doctor --json:      median ${doctor} ms"
echo "my-chrome setup (no-op):      median ${setup} ms"
awk -v d="$doctor" -v v="$version" 'BEGIN { if (v > 0) printf "doctor / raw --version:       %.2f\n", d / v }'
