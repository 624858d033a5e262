#!/usr/bin/env bash
# See it work, on a fresh Linux machine, in one command. This runs against a
# SANDBOX browser (a stand-in for Chrome with the Playwright Extension, backed
# by a real headless Chromium), with a throw-away token in a private test
# keyring and a private runtime: never against your own Chrome, profile or
# keyring. It builds, installs the pinned CLI, connects, opens a local page,
# reads it back, disconnects, uninstalls, and cleans up everything it
# started: as an ordinary user too, it leaves nothing in /tmp or your home.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '\ndemo: %s\n' "$*"; }

say "what the demo needs from the system"
scripts/prerequisites.sh demo
say "building my-chrome and the Chrome stand-in"
# The release build: what scripts/install.sh installs, built once for both.
cargo build --release --quiet --workspace
bin=$PWD/target/release/my-chrome
work=$(mktemp -d)
pids=()
cleanup() {
  # Only ever the demo's own runtime (the variable is set below): the pinned
  # CLI is sealed read-only, so `rm -rf` alone cannot remove it.
  if [ "${MY_CHROME_RUNTIME_DIR:-}" = "$work/runtime" ]; then
    "$bin" uninstall >/dev/null 2>&1 || true
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# Cargo and rustup keep their own homes; everything of the demo's is in $work.
export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup} CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
export npm_config_cache=${npm_config_cache:-$HOME/.npm}
# TMPDIR too: what the sandbox browser leaves in it goes with $work.
export HOME=$work/home MY_CHROME_RUNTIME_DIR=$work/runtime PATH=/usr/bin:/bin TMPDIR=$work/tmp
mkdir -p "$HOME" "$TMPDIR" "$work/standin" "$work/site"

say "my-chrome setup (the pinned @playwright/cli, verified)"
"$bin" setup

say "a private keyring holding a throw-away token"
dbus-daemon --session --nofork --nopidfile --address="unix:path=$work/bus" >/dev/null 2>&1 &
pids+=($!)
export DBUS_SESSION_BUS_ADDRESS=unix:path=$work/bus
for _ in $(seq 100); do [ -S "$work/bus" ] && break; sleep 0.05; done
printf demo-keyring-password | gnome-keyring-daemon --unlock --foreground --components=secrets >/dev/null 2>&1 &
pids+=($!)
sleep 1
head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9' | head -c 43 >"$work/standin/token"
chmod 600 "$work/standin/token"
"$bin" token store --stdin <"$work/standin/token"

say "the sandbox browser (not your Chrome) and a local page"
cp target/release/chrome-standin "$work/standin/chrome"
# Its "person at the keyboard" confirms what my-chrome asks in the browser
# (you would click Confirm on the page my-chrome opens).
STANDIN_PERSON=confirm STANDIN_TOKEN_FILE=$work/standin/token "$work/standin/chrome" >"$work/standin/out" 2>/dev/null &
pids+=($!)
for _ in $(seq 200); do grep -q READY "$work/standin/out" 2>/dev/null && break; sleep 0.05; done
export MY_CHROME_CHROME=$work/standin/chrome MY_CHROME_USER_DATA_DIR=$HOME/.config/google-chrome
cat >"$work/site/index.html" <<'HTML'
<!doctype html><title>my-chrome demo</title><h1>Hello from the my-chrome demo page</h1>
HTML
(cd "$work/site" && exec python3 -u -m http.server 0 --bind 127.0.0.1 >"$work/site/log" 2>&1) &
pids+=($!)
port=
for _ in $(seq 100); do
  port=$(grep -o 'port [0-9]*' "$work/site/log" 2>/dev/null | head -1 | cut -d' ' -f2) && [ -n "$port" ] && break
  sleep 0.05
done

say "my-chrome connect (asks you in the browser first; the token goes straight to it)"
"$bin" connect
say "my-chrome goto + snapshot"
"$bin" goto "http://127.0.0.1:$port/" >"$work/goto.out" || { cat "$work/goto.out"; echo "demo: goto failed (port ${port:-none})"; exit 1; }
snapshot=$("$bin" snapshot)
file=$(printf '%s\n' "$snapshot" | grep -o '\[Snapshot\]([^)]*)' | sed 's/.*(\(.*\))/\1/' | head -1 || true)
if [ -n "$file" ]; then text=$(cat "$MY_CHROME_RUNTIME_DIR/$file"); else text=$snapshot; fi
say "what the page says:"
printf '%s\n' "$text" | grep -i 'heading' | head -3 || printf '%s\n' "$text" | head -20
say "my-chrome disconnect (the browser keeps running)"
"$bin" disconnect
say "my-chrome uninstall (the runtime and the pinned CLI go; the browser keeps running)"
"$bin" uninstall
say "done: everything the demo started is being cleaned up"
