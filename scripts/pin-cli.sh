#!/usr/bin/env bash
# Regenerate the pin of @playwright/cli that my-chrome embeds and installs:
#   skill/cli/package.json         the one dependency, at an exact version
#   skill/cli/package-lock.json    lockfile v3 with integrity hashes, no registry URLs
#   skill/cli/tree.sha256          digest of a clean install's node_modules, per OS
#   skill/cli/released-locks.sha256  SHA-256 of every lock we have shipped (appended)
#   skill/cli/help.json            the pinned client's own command table, as it ships
#   skill/cli/commands.txt         its documented commands and what of them names a file
#                                  (scripts/cli-commands.sh, from that help.json and the
#                                  hand-made skill/cli/file-args.txt)
#   skill/cli/client.sha256        SHA-256 of the client files whose behaviour my-chrome's
#                                  native client (src/daemon/) reproduces: a move that
#                                  changes any of them fails tests/native.rs until the
#                                  native client is checked against the new client again
#
# Usage: scripts/pin-cli.sh VERSION      (e.g. scripts/pin-cli.sh 0.1.22)
#
# It fails closed: a version npm does not have, an install of another
# version, or a command table scripts/cli-commands.sh cannot make safely (a
# help syntax it does not know, an option or argument not yet decided in
# skill/cli/file-args.txt) stops it with nothing in skill/cli changed.
#
# The tree digests are src/helper/tree.rs's, printed by examples/tree_digest.rs
# (built with cargo): the format has one implementation, the one setup and
# every command check against. PIN_CLI_CHECKOUT names the my-chrome checkout
# to build it from (default: the one this script is in; tests/pin.rs runs a
# copy of scripts/ and skill/cli/ against the real checkout). macOS may
# install packages Linux does not (0.1.17 had fsevents), so the darwin digest
# comes from an install with npm's --os=darwin.
set -euo pipefail

version=${1:?usage: scripts/pin-cli.sh VERSION}
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "pin-cli: VERSION must be exact, like 0.1.22" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/skill/cli
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/package.json" <<JSON
{
  "name": "my-chrome-cli",
  "private": true,
  "description": "The private copy of @playwright/cli that my-chrome installs with 'my-chrome setup'.",
  "dependencies": {
    "@playwright/cli": "$version"
  }
}
JSON

npm_flags=(--ignore-scripts --no-audit --no-fund --no-update-notifier)
(cd "$work" && npm install --package-lock-only --lockfile-version=3 \
  --omit-lockfile-registry-resolved "${npm_flags[@]}" >/dev/null)

checkout=${PIN_CLI_CHECKOUT:-$root}
# The release build: it hashes two trees of 18 MB, and scripts/test.sh (whose
# tests/pin.rs runs this script) builds the examples only so.
tree_digest() { # $1: install directory
  "${CARGO:-cargo}" run --release --quiet --manifest-path "$checkout/Cargo.toml" --example tree_digest -- "$1"
}

digests=()
for os in linux darwin; do
  install=$work/install-$os
  mkdir "$install"
  cp "$work/package.json" "$work/package-lock.json" "$install/"
  (cd "$install" && npm ci --os="$os" "${npm_flags[@]}" >/dev/null)
  installed=$(node -p "require('$install/node_modules/@playwright/cli/package.json').version")
  [ "$installed" = "$version" ] || { echo "pin-cli: installed $installed, wanted $version" >&2; exit 1; }
  digests+=("$(tree_digest "$install")  $os")
done

# Everything is made in $work first; skill/cli changes only when all of it
# was made (a table that cannot be made safely stops the move here).
new=$work/out
mkdir "$new"
cp "$work/package.json" "$work/package-lock.json" "$new/"
cp "$work/install-linux/node_modules/playwright-core/lib/tools/cli-client/help.json" "$new/"
"$root/scripts/cli-commands.sh" "$work/install-linux" "$out/help.json" >"$new/commands.txt" || {
  echo "pin-cli: nothing in skill/cli was changed" >&2
  exit 3
}
printf '%s\n' "${digests[@]}" >"$new/tree.sha256"
(cd "$work/install-linux/node_modules" && sha256sum \
  @playwright/cli/playwright-cli.js \
  @playwright/cli/skillCheck.js \
  playwright-core/lib/tools/cli-client/cli.js \
  playwright-core/lib/tools/cli-client/program.js \
  playwright-core/lib/tools/cli-client/session.js \
  playwright-core/lib/tools/cli-client/registry.js \
  playwright-core/lib/tools/cli-client/output.js \
  playwright-core/lib/tools/cli-client/minimist.js \
  playwright-core/lib/tools/utils/socketConnection.js) >"$new/client.sha256"
cp "$new"/* "$out/"
lock_digest=$(sha256sum <"$out/package-lock.json" | cut -d' ' -f1)
touch "$out/released-locks.sha256"
grep -qx "$lock_digest  $version" "$out/released-locks.sha256" \
  || printf '%s  %s\n' "$lock_digest" "$version" >>"$out/released-locks.sha256"

echo "pinned @playwright/cli $version:"
cat "$out/tree.sha256"
echo "Rebuild my-chrome (the pin is embedded) and run scripts/test.sh."
