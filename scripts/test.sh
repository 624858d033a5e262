#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need,
# checks formatting and lints, installs the pinned CLI with my-chrome's own
# `setup`, then runs every unit and integration test against real processes.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'test.sh: %s\n' "$*"; }

# What the tests need from the system: Node.js and npm (the pinned CLI), a
# real Secret Service (dbus, gnome-keyring, secret-tool for cross-checks), a
# real X clipboard (Xvfb, xclip) and a real Chromium (behind the Chrome
# stand-in, and headed under Xvfb with the real Playwright Extension, which
# the tests build from ../shared/real-extension with npm). Installed with apt-get when we are root;
# otherwise a missing one stops the run here, by name, rather than skipping.
need() { # command package
  [ -x "$1" ] || missing+=("$2")
}
missing=()
[ -x /usr/local/bin/node ] || need /usr/bin/node nodejs
[ -x /usr/local/bin/npm ] || need /usr/bin/npm npm
need /usr/bin/dbus-daemon dbus
need /usr/bin/dbus-send dbus-bin
need /usr/bin/gnome-keyring-daemon gnome-keyring
need /usr/bin/secret-tool libsecret-tools
need /usr/bin/Xvfb xvfb
need /usr/bin/xclip xclip
need /usr/bin/chromium chromium
# The real-extension tests: a private /etc/hosts in a mount namespace.
need /usr/bin/unshare util-linux
need /usr/bin/mount mount
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing ${missing[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    say "missing packages: ${missing[*]}. Install them (Node.js must satisfy the pin's engines.node) and rerun." >&2
    exit 1
  fi
fi

say "cargo fmt --check"
cargo fmt --all -- --check
say "cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The binary and the Chrome stand-in (tests/chrome-standin) the tests start.
cargo build --workspace --quiet

# The real pinned CLI, installed by the project's own setup into the runtime
# that the integration tests copy (tests/common/mod.rs, golden_runtime).
golden="$PWD/target/tmp/golden-runtime"
mkdir -p "$(dirname "$golden")"
say "my-chrome setup into $golden"
MY_CHROME_RUNTIME_DIR="$golden" target/debug/my-chrome setup

say "cargo test"
cargo test --workspace --quiet -- --test-threads=2

# The newcomer's demo, end to end on the sandbox browser: it must read the
# page it was sent to.
say "scripts/demo.sh"
scripts/demo.sh | tee target/demo.log
grep -q "Hello from the my-chrome demo page" target/demo.log || { say "the demo did not read its page" >&2; exit 1; }
