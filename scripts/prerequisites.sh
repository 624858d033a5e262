#!/usr/bin/env bash
# What my-chrome's scripts need from the system. Installed with apt-get when
# run as root on Debian or Ubuntu; otherwise a missing one stops the run
# here, by package name, rather than half-way through.
#
# Usage: scripts/prerequisites.sh demo|test
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
#         round as a throw-away ordinary user).
set -euo pipefail

say() { printf 'prerequisites: %s\n' "$*"; }
missing=()
need() { # executable package
  [ -x "$1" ] || missing+=("$2")
}

case "${1:-}" in
  demo | test) ;;
  *) say "usage: $0 demo|test" >&2; exit 2 ;;
esac

[ -x /usr/local/bin/node ] || need /usr/bin/node nodejs
[ -x /usr/local/bin/npm ] || need /usr/bin/npm npm
need /usr/bin/dbus-daemon dbus
need /usr/bin/gnome-keyring-daemon gnome-keyring
need /usr/bin/chromium chromium
need /usr/bin/python3 python3
if [ "$1" = test ]; then
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
