#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need,
# checks formatting and lints, installs the pinned CLI with my-chrome's own
# `setup`, then runs every unit and integration test against real processes.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'test.sh: %s\n' "$*"; }

# What the tests need from the system (scripts/prerequisites.sh says what
# and why): installed with apt-get when we are root; otherwise a missing one
# stops the run here, by name, rather than skipping.
scripts/prerequisites.sh test

say "cargo fmt --check"
cargo fmt --all -- --check
say "cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings
# The macOS code (the Keychain store) is type-checked here too, not only read.
say "cargo clippy --target aarch64-apple-darwin"
rustup target list --installed | grep -qx aarch64-apple-darwin || rustup target add aarch64-apple-darwin
cargo clippy --target aarch64-apple-darwin -p my-chrome --lib --bins --quiet -- -D warnings
# The binary and the Chrome stand-in (tests/chrome-standin) the tests start.
cargo build --workspace --quiet

# The real pinned CLI, installed by the project's own setup into the runtime
# that the integration tests copy (tests/common/mod.rs, golden_runtime).
golden="$PWD/target/tmp/golden-runtime"
mkdir -p "$(dirname "$golden")"
say "my-chrome setup into $golden"
MY_CHROME_RUNTIME_DIR="$golden" target/debug/my-chrome setup

say "cargo test"
cargo test --workspace --quiet --no-fail-fast -- --test-threads=2

# The newcomer's demo, end to end on the sandbox browser: it must read the
# page it was sent to.
say "scripts/demo.sh"
scripts/demo.sh | tee target/demo.log
grep -q "Hello from the my-chrome demo page" target/demo.log || { say "the demo did not read its page" >&2; exit 1; }

# The newcomer's first run and the user's last, as an ordinary user: as root
# a permission problem (a sealed copy its owner cannot `rm -rf`) would hide.
if [ "$(id -u)" = 0 ]; then
  say "scripts/newcomer.sh (as a throw-away unprivileged user)"
  scripts/newcomer.sh
fi
