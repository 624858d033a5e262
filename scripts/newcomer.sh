#!/usr/bin/env bash
# The newcomer's first run and the user's last, as an ordinary user: run as
# root (scripts/test.sh does), it makes a throw-away unprivileged user, gives
# it a copy of this repository and the machine's Rust toolchain (read-only),
# and as that user runs
#   1. scripts/demo.sh, which must end with exit 0 and leave nothing in /tmp
#      or the user's home;
#   2. scripts/install.sh --agent claude-code --agent codex, my-chrome setup,
#      my-chrome uninstall (--dry-run first), scripts/install.sh --uninstall,
#      which must leave the home as it was before the install.
# The user, its home and its processes are removed at the end, whatever
# happened. A permission problem cannot hide behind root this way.
#
# What the suite already built is shared, not built again (docs/TESTING.md,
# "The newcomer"): cargo's registry, read-only, and a copy of the release
# build's dependencies, the user's own; the user's cargo then compiles
# my-chrome and the Chrome stand-in from the user's fresh copy. Run alone,
# with neither there, the user's cargo fetches and builds everything.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf 'newcomer: %s\n' "$*"; }
[ "$(id -u)" = 0 ] || { say "run me as root (I make and remove a throw-away user)" >&2; exit 2; }

user=mc-newcomer-$$
toolchain=$(rustc --print sysroot)
view=/run/my-chrome-newcomer-$$
useradd --create-home --user-group --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)
cleanup() {
  pkill -KILL -u "$user" 2>/dev/null || true
  sleep 0.2
  find /tmp /var/tmp /dev/shm -mindepth 1 -maxdepth 1 -user "$user" -exec rm -rf {} + 2>/dev/null || true
  userdel --remove "$user" 2>/dev/null || true
  rmdir "$view" 2>/dev/null || true
}
trap cleanup EXIT

# A copy of what git tracks (the working tree as it is), owned by the user.
git ls-files -z --cached --others --exclude-standard | tar --null -T - -c | tar -x -C "$home" --one-top-level=my-chrome
# The release build's dependencies, copied; the project's own crates go
# below, as the user, so that the user's cargo compiles them.
if [ -d target/release ]; then
  mkdir -p "$home/my-chrome/target"
  cp -a target/release "$home/my-chrome/target/release"
fi
chown -R "$user:$user" "$home/my-chrome"
mkdir -p "$view"
# Cargo's registry (the index and the downloaded crates), shown read-only.
registry=${CARGO_HOME:-$HOME/.cargo}/registry
share_registry=false
if [ -d "$registry" ]; then
  share_registry=true
  install -d -m 0755 -o "$user" -g "$user" "$home/.cargo" "$home/.cargo/registry"
fi

# Runs "$@" as the user, in a mount namespace where the toolchain (under
# root's home, which the user cannot enter) is bound read-only at $view,
# and cargo's registry, when shared, read-only at the user's ~/.cargo/registry.
as_user() {
  local registry_from=/nonexistent
  $share_registry && registry_from=$registry
  unshare --mount --propagation private -- bash -c '
    readonly_at() { mount --bind "$1" "$2" && mount -o remount,bind,ro "$2"; }
    readonly_at "$1" "$2" || exit 1
    if [ -d "$3" ]; then readonly_at "$3" "$4" || exit 1; fi
    shift 4
    exec runuser -u "$@"' _ "$toolchain" "$view" "$registry_from" "$home/.cargo/registry" "$user" -- \
    env -i HOME="$home" USER="$user" LOGNAME="$user" LANG=C.UTF-8 \
    PATH="$view/bin:/usr/bin:/bin" CARGO_HOME="$home/.cargo" RUSTUP_TOOLCHAIN="$(basename "$toolchain")" \
    bash -c 'cd ~/my-chrome && "$@"' _ "$@"
}

# A lived-in home has its cache folder; my-chrome's runtime goes inside it
# (~/.cache/my-chrome) and uninstall leaves the folder itself, not its own.
install -d -m 0700 -o "$user" -g "$user" "$home/.cache"

# What the user has before, and what /tmp holds of the user: the copy and
# cargo's own cache (a prerequisite, like the toolchain) do not count.
inventory() {
  { find "$home" -mindepth 1 \( -path "$home/my-chrome" -o -path "$home/.cargo" \) -prune -o -print
    find /tmp /var/tmp /dev/shm -user "$user" 2>/dev/null; } | sort
}
before=$(inventory)
# Stops with what `$1` left in the home or /tmp, if anything.
left_nothing() {
  local after
  after=$(inventory)
  [ "$before" = "$after" ] && return
  say "$1 left these behind:" >&2
  diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") >&2 || true
  exit 1
}

if [ -d "$home/my-chrome/target/release" ]; then
  say "the project's own crates out of the copied build, as $user"
  as_user cargo clean --release --quiet -p my-chrome -p chrome-standin
  # Gone: the demo's build below is the user's own compile of them.
  as_user bash -c '! test -e target/release/my-chrome && ! test -e target/release/chrome-standin' ||
    { say "cargo clean left my-chrome's binaries in the copied build" >&2; exit 1; }
fi
say "scripts/demo.sh as $user"
as_user scripts/demo.sh | tee /tmp/newcomer-demo-$$.log
grep -q "Hello from the my-chrome demo page" /tmp/newcomer-demo-$$.log || { say "the demo did not read its page" >&2; exit 1; }
rm -f /tmp/newcomer-demo-$$.log
# Processes of the user still running (an exited one not yet reaped by its
# parent, state Z, is not), given a few seconds to end.
running() { ps -u "$user" -o stat=,pid=,args= 2>/dev/null | awk '$1 !~ /^Z/'; }
for _ in $(seq 50); do [ -z "$(running)" ] && break; sleep 0.2; done
if [ -n "$(running)" ]; then
  say "the demo left processes running:" >&2
  running >&2
  exit 1
fi
left_nothing "the demo"

say "install, setup, uninstall as $user"
as_user bash -c '
  set -euo pipefail
  scripts/install.sh --agent claude-code --agent codex
  ~/.local/bin/my-chrome setup
  test -d ~/.claude/skills/my-chrome && test -d ~/.agents/skills/my-chrome
  ~/.local/bin/my-chrome uninstall --dry-run
  test -d ~/.cache/my-chrome/cli
  # A runtime whose folder the user cannot write cannot go: refused before
  # anything is removed (root would not see this).
  chmod 555 ~/.cache
  if ~/.local/bin/my-chrome uninstall; then echo "uninstall removed from a folder it cannot write" >&2; exit 1; fi
  chmod 700 ~/.cache
  test -d ~/.cache/my-chrome/cli && test -d ~/.claude/skills/my-chrome
  scripts/install.sh --uninstall
  if ~/.local/bin/my-chrome uninstall 2>/dev/null; then echo "the binary is still there" >&2; exit 1; fi
'
left_nothing "install and uninstall"
say "the demo and the install round left nothing behind as an ordinary user"
