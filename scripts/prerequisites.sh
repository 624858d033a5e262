#!/usr/bin/env bash
# What my-chrome's scripts need from the system. Installed with apt-get when
# run as root on Debian or Ubuntu; otherwise a missing one stops the run
# here, by package name, rather than half-way through.
#
# Usage: scripts/prerequisites.sh demo|test|nextest
#   demo: Node.js and npm (the pinned CLI), a Secret Service (dbus,
#         gnome-keyring), Chromium (behind the Chrome stand-in), python3 (the
#         demo's local page).
#   test: the demo's, plus secret-tool (keyring cross-checks), Xvfb and xclip
#         (a real X clipboard, and Chromium headed with the real extension),
#         xdotool (the user's own keys in that Chromium: Ctrl+W closes a tab),
#         unshare and mount (a private /etc/hosts), GNU time (a wrapper the
#         agent-identity test runs through; bench.sh's peak RSS) and strace
#         (the proof that forwarded commands start no child); useradd,
#         runuser and pkill (scripts/newcomer.sh: the demo and an uninstall
#         round as a throw-away ordinary user); bubblewrap, socat and
#         ripgrep (Claude Code's sandbox runtime, which tests/hosts.rs runs
#         my-chrome inside).
#   nextest: cargo-nextest, which runs the tests (scripts/test.sh), at least
#         the version .config/nextest.toml requires; installed from crates.io
#         with `cargo install --locked` when missing or older.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'prerequisites: %s\n' "$*"; }

if [ "${1:-}" = nextest ]; then
  required=$(sed -n 's/^nextest-version = { required = "\(.*\)" }$/\1/p' .config/nextest.toml)
  [ -n "$required" ] || { say ".config/nextest.toml names no required nextest-version" >&2; exit 2; }
  installed=$(cargo nextest --version 2>/dev/null | sed -n 's/^cargo-nextest \([0-9.]*\).*/\1/p' || true)
  if [ -n "$installed" ] && [ "$(printf '%s\n%s\n' "$required" "$installed" | sort -V | head -n 1)" = "$required" ]; then
    exit 0
  fi
  say "installing cargo-nextest (at least $required; found ${installed:-none}) from crates.io"
  cargo install --locked cargo-nextest --version "^$required"
  exit 0
fi
missing=()
need() { # executable package
  [ -x "$1" ] || missing+=("$2")
}

case "${1:-}" in
  demo | test) ;;
  *) say "usage: $0 demo|test|nextest" >&2; exit 2 ;;
esac

[ -x /usr/local/bin/node ] || need /usr/bin/node nodejs
[ -x /usr/local/bin/npm ] || need /usr/bin/npm npm
need /usr/bin/dbus-daemon dbus
need /usr/bin/gnome-keyring-daemon gnome-keyring
need /usr/bin/chromium chromium
need /usr/bin/python3 python3
if [ "$1" = test ]; then
  # The real-extension tests run Debian's Chromium itself, not its wrapper.
  need /usr/lib/chromium/chromium chromium
  need /usr/bin/dbus-send dbus-bin
  need /usr/bin/secret-tool libsecret-tools
  need /usr/bin/Xvfb xvfb
  need /usr/bin/xclip xclip
  need /usr/bin/xdotool xdotool
  need /usr/bin/unshare util-linux
  need /usr/bin/mount mount
  need /usr/bin/time time
  need /usr/bin/strace strace
  need /usr/sbin/useradd passwd
  need /usr/sbin/runuser util-linux
  need /usr/bin/pkill procps
  need /usr/bin/bwrap bubblewrap
  need /usr/bin/socat socat
  need /usr/bin/rg ripgrep
fi

[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  say "installing ${missing[*]} with apt-get"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "missing packages: ${missing[*]}. Install them (as root: apt-get install ${missing[*]}; Node.js must satisfy the pin's engines.node) and rerun." >&2
  exit 1
fi
