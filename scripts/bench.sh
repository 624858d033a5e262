#!/usr/bin/env bash
# Benchmarks: medians of repeated runs, printed; nothing here asserts a time.
#   - my-chrome tab-list vs the raw pinned CLI's `-s=mychrome tab-list` on the
#     same session, alternating (target: ratio <= 1.10);
#   - connect (after disconnect), doctor --json, a no-op setup;
#   - the lease's share of a forwarded command: one uncontended take and
#     release timed inside a fresh process (examples/lease_cost.rs), with an
#     explicit agent name and with the derived one (target: <= 2 ms);
#   - the helper check's share: reading the record of the verified tree and
#     comparing all of <runtime>/cli with it, in a fresh process
#     (examples/manifest_cost.rs; target: <= 5 ms).
# It runs against the Chrome stand-in (a real headless Chromium) with a
# throw-away token in a private GNOME Keyring: never against your Chrome.
#
# Usage: scripts/bench.sh [RUNS]     (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}

cargo build --release --quiet --workspace
cargo build --release --quiet --example lease_cost --example manifest_cost
bin=$PWD/target/release/my-chrome
work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export HOME=$work/home MY_CHROME_RUNTIME_DIR=$work/runtime PATH=/usr/bin:/bin
mkdir -p "$HOME" "$work/standin"
"$bin" setup >/dev/null 2>&1

# A private Secret Service holding a throw-away token.
dbus-daemon --session --nofork --nopidfile --address="unix:path=$work/bus" >/dev/null 2>&1 &
pids+=($!)
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/bus
for _ in $(seq 100); do [ -S "$work/bus" ] && break; sleep 0.05; done
printf bench-keyring-password | gnome-keyring-daemon --unlock --foreground --components=secrets >/dev/null 2>&1 &
pids+=($!)
sleep 1
token=$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 43)
printf '%s' "$token" | "$bin" token store --stdin >/dev/null

# The stand-in: "the user's Chrome", whose extension accepts that token.
cp target/release/chrome-standin "$work/standin/chrome"
printf '%s' "$token" >"$work/standin/token" && chmod 600 "$work/standin/token"
STANDIN_TOKEN_FILE=$work/standin/token "$work/standin/chrome" >"$work/standin/out" 2>/dev/null &
pids+=($!)
for _ in $(seq 200); do grep -q READY "$work/standin/out" 2>/dev/null && break; sleep 0.05; done
export MY_CHROME_CHROME=$work/standin/chrome
unset token

median_ms() { # command...
  local times=() start end
  for _ in $(seq "$runs"); do
    start=$(date +%s%N); "$@" >/dev/null 2>&1 || true; end=$(date +%s%N)
    times+=($(( (end - start) / 1000000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

"$bin" connect >/dev/null
raw() { (cd "$MY_CHROME_RUNTIME_DIR" && umask 077 && env -i HOME="$HOME" PATH=/usr/bin:/bin \
  TMPDIR="$MY_CHROME_RUNTIME_DIR/tmp" NO_UPDATE_NOTIFIER=1 USER="$(id -un)" \
  "$(command -v node)" cli/node_modules/@playwright/cli/playwright-cli.js -s=mychrome tab-list); }
wrapped=() raws=()
for _ in $(seq "$runs"); do
  s=$(date +%s%N); "$bin" tab-list >/dev/null 2>&1; e=$(date +%s%N); wrapped+=($(( (e - s) / 1000000 )))
  s=$(date +%s%N); raw >/dev/null 2>&1; e=$(date +%s%N); raws+=($(( (e - s) / 1000000 )))
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
w=$(med "${wrapped[@]}"); r=$(med "${raws[@]}")

connects=()
for _ in $(seq 5); do
  "$bin" disconnect >/dev/null 2>&1
  s=$(date +%s%N); "$bin" connect >/dev/null 2>&1; e=$(date +%s%N); connects+=($(( (e - s) / 1000000 )))
done
c=$(med "${connects[@]}")
doctor=$(median_ms "$bin" doctor --json)
setup=$(median_ms "$bin" setup)
lease_us() { # runtime [agent]
  for _ in $(seq "$runs"); do target/release/examples/lease_cost "$@"; done |
    sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
manifest=$(for _ in $(seq "$runs"); do target/release/examples/manifest_cost "$MY_CHROME_RUNTIME_DIR"; done |
  sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
lease_named=$(lease_us "$work/lease-named" bench)
lease_derived=$(lease_us "$work/lease-derived")
"$bin" disconnect >/dev/null 2>&1 || true

echo "runs: $runs each, alternating (release build, stand-in Chromium)"
echo "raw playwright-cli -s=mychrome tab-list: median ${r} ms"
echo "my-chrome tab-list:                      median ${w} ms"
awk -v w="$w" -v r="$r" 'BEGIN { printf "ratio my-chrome / raw:                   %.2f (target <= 1.10)\n", w / r }'
echo "my-chrome connect (5 runs):              median ${c} ms"
echo "my-chrome doctor --json:                 median ${doctor} ms"
echo "my-chrome setup (no-op):                 median ${setup} ms"
echo "lease take+release, MY_CHROME_AGENT set:  median ${lease_named} us (target <= 2000)"
echo "lease take+release, derived agent name:   median ${lease_derived} us (target <= 2000)"
echo "helper tree unchanged since verified:     median ${manifest} us (target <= 5000, $(wc -l <"$MY_CHROME_RUNTIME_DIR/cli-manifest.txt") entries)"
