#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need,
# checks formatting and lints, installs the pinned CLI with my-chrome's own
# `setup`, then runs every unit and integration test against real processes.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'test.sh: %s\n' "$*"; }

# Debian packages the tests need, installed when we are root on Debian/Ubuntu.
missing=()
[ -x /usr/local/bin/node ] || [ -x /usr/bin/node ] || missing+=(nodejs)
[ -x /usr/local/bin/npm ] || [ -x /usr/bin/npm ] || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing ${missing[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  else
    say "missing ${missing[*]}: install them (Node.js must satisfy the pin's engines.node)" >&2
    exit 1
  fi
fi

say "cargo fmt --check"
cargo fmt --all -- --check
say "cargo clippy"
cargo clippy --all-targets --quiet -- -D warnings
cargo build --quiet

# The real pinned CLI, installed by the project's own setup into the runtime
# that the integration tests copy (tests/common/mod.rs, golden_runtime).
golden="$PWD/target/tmp/golden-runtime"
mkdir -p "$(dirname "$golden")"
say "my-chrome setup into $golden"
MY_CHROME_RUNTIME_DIR="$golden" target/debug/my-chrome setup

say "cargo test"
cargo test --quiet -- --test-threads=2
