#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the tests need,
# checks formatting and lints, builds each thing once, installs the pinned
# CLI with my-chrome's own `setup`, then runs every unit and integration test
# against real processes (cargo-nextest, many at once where that is safe:
# .config/nextest.toml), the demo, and, as root, the newcomer's run.
#
# Every step is timed; the table of steps, the total and the count of tests
# run are printed at the end, and when a step fails (its name, then its own
# exit code). docs/TESTING.md says how the suite is laid out and why.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'test.sh: %s\n' "$*"; }

# The step table: one line per step run, "seconds<TAB>name<TAB>result".
table=target/test-steps.txt
mkdir -p target
: >"$table"
started=$EPOCHREALTIME
# Seconds since $1 (an $EPOCHREALTIME).
since() { awk -v from="$1" -v now="$EPOCHREALTIME" 'BEGIN { printf "%.1f", now - from }'; }
counts=target/test-counts.txt
# The redactor's count on text nobody here wrote (tests/redaction_corpus.rs).
corpus=target/redaction-corpus.txt
rm -f "$counts" "$corpus"

print_table() {
  local total
  total=$(since "$started")
  printf '\ntest.sh: the steps\n'
  awk -F'\t' '{ printf "  %8.1f s  %-72s %s\n", $1, $2, $3 }' "$table"
  awk -v t="$total" 'BEGIN { printf "  %8.1f s  total (%.1f min)\n", t, t / 60 }'
  [ ! -f "$counts" ] || cat "$counts"
  [ ! -f "$corpus" ] || cat "$corpus"
}

# step NAME COMMAND...: runs the command, records its time; on failure prints
# the table, names the step and stops the run with the step's own exit code.
step() {
  local name=$1 t0 rc=0
  shift
  say "$name"
  t0=$EPOCHREALTIME
  # A subshell with errexit of its own: inside `cmd || …` bash would ignore
  # a failure within a function step.
  set +e
  (set -e; "$@")
  rc=$?
  set -e
  printf '%s\t%s\t%s\n' "$(since "$t0")" "$name" \
    "$([ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)")" >>"$table"
  if [ "$rc" != 0 ]; then
    print_table
    say "step \"$name\" failed (exit $rc)" >&2
    exit "$rc"
  fi
}

# What the tests need from the system (scripts/prerequisites.sh says what
# and why): installed with apt-get when we are root; otherwise a missing one
# stops the run here, by name, rather than skipping. cargo-nextest runs the
# tests: installed from crates.io when missing or older than
# .config/nextest.toml requires.
step "prerequisites" scripts/prerequisites.sh test
step "cargo-nextest" scripts/prerequisites.sh nextest

step "cargo fmt --check" cargo fmt --all -- --check
# With --release, the build scripts and procedural macros clippy compiles
# for this machine are the release build's: built once for all three.
step "cargo clippy (Linux)" cargo clippy --release --workspace --all-targets --quiet -- -D warnings
# The macOS code (the Keychain store) is type-checked here too, not only read.
mac_target() {
  rustup target list --installed | grep -qx aarch64-apple-darwin || rustup target add aarch64-apple-darwin
  cargo clippy --release --target aarch64-apple-darwin -p my-chrome --lib --bins --quiet -- -D warnings
}
step "cargo clippy (aarch64-apple-darwin)" mac_target

# Each thing is built once. The release build (my-chrome and the Chrome
# stand-in) is what install.sh installs, what the demo and the newcomer run,
# and what the tests run: they are built with --release against it, their
# own code unoptimised (Cargo.toml's [profile.bench]). Each later build is
# checked to leave the very same my-chrome (a dependency with other features
# in one of them would build it again, and the tests would run another one).
shipped=target/release/my-chrome.sha256
same_as_shipped() { # what built it
  sha256sum <target/release/my-chrome | cmp -s - "$shipped" || {
    say "$1 made another my-chrome than \`cargo build --release --workspace\`: a dependency's" \
      "features differ between the two (\`cargo tree -e features -i CRATE\` names who turns them" \
      "on); give my-chrome the same features in Cargo.toml, as it does for getrandom and regex-syntax" >&2
    return 1
  }
}
release_build() {
  cargo build --release --workspace --quiet
  sha256sum <target/release/my-chrome >"$shipped"
  # Exactly what install.sh runs.
  cargo build --release --quiet
  same_as_shipped "install.sh's \`cargo build --release\`"
}
step "cargo build --release" release_build
test_build() {
  cargo nextest run --workspace --release --no-run --cargo-quiet
  same_as_shipped "the tests' build"
}
step "cargo build (the tests, against the release build)" test_build

# The real pinned CLI, installed by the project's own setup into the runtime
# that the integration tests copy (tests/common/sandbox.rs, golden_runtime).
golden="$PWD/target/tmp/golden-runtime"
mkdir -p "$(dirname "$golden")"
step "my-chrome setup (the golden install)" env MY_CHROME_RUNTIME_DIR="$golden" target/release/my-chrome setup

# The tests, in two phases (.config/nextest.toml says why): everything but
# the token carriers, many at once; then the token carriers, which every
# other test's process scan would see, with nothing else running. A test
# stopped at its bound runs no cleanup: after each phase, nothing may be
# left carrying a token or running Debian's Chromium (the next phase, the
# demo or the next real-extension world would fail for it, naming the
# wrong cause).
nextest_dir=target/nextest/ci
nothing_left_running() {
  local scratch report exposed chromium
  scratch=$(mktemp -d)
  report=$(env -i HOME="$scratch" PATH=/usr/bin:/bin MY_CHROME_RUNTIME_DIR="$scratch/runtime" \
    target/release/my-chrome doctor --json)
  rm -rf "$scratch"
  exposed=$(printf '%s' "$report" | python3 -c 'import json, sys
r = json.load(sys.stdin)["process_token"]
print("" if r["status"] == "absent" else " ".join([r["status"], *map(str, r.get("pids", []))]))')
  chromium=$(pgrep -d ' ' -f '^/usr/lib/chromium/chromium' || true)
  [ -z "$exposed$chromium" ] && return
  [ -z "$exposed" ] || say "a test left processes carrying a token (doctor's process-token: $exposed)" >&2
  [ -z "$chromium" ] || say "a test left Debian's Chromium running: pids $chromium" >&2
  return 1
}
run_tests() { # phase filterset threads
  rm -f "$nextest_dir/junit.xml"
  cargo nextest run --workspace --release --profile ci --cargo-quiet --test-threads "$3" -E "$2"
  cp "$nextest_dir/junit.xml" "$nextest_dir/junit-$1.xml"
  nothing_left_running
}
step "tests: side by side" run_tests side-by-side 'not group(token-carriers)' 4
step "tests: token carriers" run_tests carriers 'group(token-carriers)' 2
# nextest runs no documentation tests; cargo does (none today, all of them
# if one is written).
step "doc tests" cargo test --workspace --release --doc --quiet

# How many ran, against how many there are: every listed test ran once, and
# none failed; those that skipped a part of themselves (outside CI only: under
# CI they fail) are named.
count_tests() {
  local listed run failed skipped
  listed=$(cargo nextest list --workspace --release --cargo-quiet --message-format oneline | grep -c .)
  read -r run failed skipped < <(scripts/tests-summary.py counts "$nextest_dir"/junit-side-by-side.xml "$nextest_dir"/junit-carriers.xml)
  printf '  tests: %s listed, %s run, %s failed, %s skipped a part\n' "$listed" "$run" "$failed" "$skipped" >"$counts"
  [ "$listed" = "$run" ] && [ "$failed" = 0 ] || {
    say "the tests run ($run) are not the tests listed ($listed), or some failed ($failed)" >&2
    return 1
  }
}
step "tests counted" count_tests

# The newcomer's first run and the user's last, as an ordinary user: as root
# a permission problem (a sealed copy its owner cannot `rm -rf`) would hide.
# It runs the demo, end to end on the sandbox browser, which must read the
# page it was sent to; run as an ordinary user, this script runs the demo
# itself instead.
if [ "$(id -u)" = 0 ]; then
  step "scripts/newcomer.sh (the demo and install round, an unprivileged user)" scripts/newcomer.sh
else
  demo() {
    scripts/demo.sh | tee target/demo.log
    grep -q "Hello from the my-chrome demo page" target/demo.log || { say "the demo did not read its page" >&2; return 1; }
  }
  step "scripts/demo.sh" demo
fi

print_table
say "where the tests' time went, by test binary (spans overlap: they ran side by side)"
scripts/tests-summary.py binaries "$nextest_dir"/junit-side-by-side.xml "$nextest_dir"/junit-carriers.xml ||
  say "(the tests' reports could not be read; the run passed)"
